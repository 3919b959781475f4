"""A proxy served by ``python -m mcpkit run`` (stdio or ``--transport http``) for the proxy tests.

``PROXY_TARGET`` is the JSON of the target (a command line list, a URL or a config dict) and
``PROXY_OPTIONS`` the JSON of its client options.
"""

from __future__ import annotations

import json
import os

from mcpkit.compose.proxy import proxy

server = proxy(json.loads(os.environ["PROXY_TARGET"]), **json.loads(os.environ.get("PROXY_OPTIONS", "{}")))
