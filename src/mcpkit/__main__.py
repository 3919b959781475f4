"""``python -m mcpkit``: the command line (:mod:`mcpkit.cli`), as the ``mcpkit`` script runs it."""

import sys

from .cli import main

sys.exit(main())
