"""The web inspector behind ``mcpkit dev``: a page served by mcpkit itself (no Node, no build step).

:mod:`.app` is the ASGI backend, :mod:`.session` one page's connection to a server through a
:class:`~mcpkit.client.Client`, :mod:`.recording` the transport wrapper that shows the raw traffic,
:mod:`.targets` what a page can connect to, :mod:`.serve` how ``mcpkit dev`` runs it all; the page
itself (plain JavaScript modules) is in ``static/``.
"""

from .app import InspectorApp
from .serve import inspector_url, run

__all__ = ["InspectorApp", "inspector_url", "run"]
