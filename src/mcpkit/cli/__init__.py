"""The ``mcpkit`` command.

``mcpkit run`` is how a host spawns a server, so this package imports only the standard library until
a subcommand needs more: each subcommand module imports its heavy parts (rich, the client, httpx)
inside its handler, never at import time. A subcommand module has one public function,
``register(subparsers)``; the order of ``_COMMANDS`` is the order of ``mcpkit --help``.

Every user error ends as one line on stderr and an exit code of :mod:`._exits` (docs/cli.md lists
them): argparse's own errors too, and a reader that stops reading our stdout (``| head``) ends the
command quietly.

``mcpkit run FILE`` alone, the line hosts spawn, is read without importing argparse at all: the run
module's second public function, :func:`.run.plain_run`, gives the namespace the parser would.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ._exits import FAILED, INTERRUPTED, PIPE_CLOSED, USAGE, CliError
from ._load import load_server
from .run import plain_run

if TYPE_CHECKING:
    import argparse

__all__ = ["load_server", "main"]

_COMMANDS = ("run", "client_commands", "dev", "install", "host", "gateway", "demo", "completion")


def _parser(first: str | None = None) -> argparse.ArgumentParser:
    import argparse  # here, not at import: `mcpkit run FILE` never needs it

    from .. import __version__

    class _Parser(argparse.ArgumentParser):
        """argparse, with its errors as one line (the usage is one ``--help`` away)."""

        def error(self, message: str) -> NoReturn:
            sys.stderr.write(f"{self.prog}: {message} (see '{self.prog} --help')\n")
            sys.exit(USAGE)

    parser = _Parser(prog="mcpkit", description="Serve, inspect and call MCP servers.")
    parser.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # `mcpkit run` is how a host spawns a server, so its start-up is every host's: it builds only its
    # own parser then (the other commands' parsers hold some 200 options, a tenth of the start-up).
    for name in ("run",) if first == "run" else _COMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not written yet; any other import error is a bug
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        module.register(sub)
    return parser


def _report(exc: CliError) -> None:
    """The error's line (and detail) on stderr. Both may quote a server (its error message, its
    stderr's last lines): on a terminal their control characters are shown as escapes."""
    from ._terminal import shown  # here: `mcpkit run` only needs it when it fails

    text = f"mcpkit: {exc.message}\n" + (exc.detail.rstrip("\n") + "\n" if exc.detail else "")
    sys.stderr.write(shown(text, sys.stderr))


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush into the closed pipe is silent."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcpkit`` command."""
    try:
        words = sys.argv[1:] if argv is None else argv
        args: Any = plain_run(words) or _parser(words[0] if words else None).parse_args(argv)
        code = int(args.handler(args))
        sys.stdout.flush()  # a closed pipe shows here, inside the try
        return code
    except CliError as exc:
        _report(exc)
        return exc.code
    except BrokenPipeError:
        _quiet_stdout()
        return PIPE_CLOSED
    except KeyboardInterrupt:
        sys.stderr.write("mcpkit: interrupted\n")
        return INTERRUPTED
    except Exception as exc:
        from .._errors import MCPError

        if not isinstance(exc, MCPError):
            raise
        _report(CliError(str(exc)))
        return FAILED


if __name__ == "__main__":
    sys.exit(main())
