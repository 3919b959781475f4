"""The ``mcpkit`` command.

``mcpkit run`` is how a host spawns a server, so this package imports only the standard library until
a subcommand needs more: each subcommand module imports its heavy parts (rich, the client, httpx)
inside its handler, never at import time. A subcommand module has one public function,
``register(subparsers)``; the order of ``_COMMANDS`` is the order of ``mcpkit --help``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ._load import load_server

__all__ = ["load_server", "main"]

_COMMANDS = ("run", "client_commands", "dev", "install", "demo")


def _parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(prog="mcpkit", description="Serve, inspect and call MCP servers.")
    parser.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _COMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not written yet; any other import error is a bug
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcpkit`` command."""
    args = _parser().parse_args(argv)
    from .._errors import MCPError

    try:
        return int(args.handler(args))
    except MCPError as exc:
        print(f"mcpkit: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
