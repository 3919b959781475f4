"""The exit codes of the ``mcpkit`` command, and the one exception that carries a user error to them.

Every user error ends as one line on stderr (``mcpkit: ...``) and one of these codes; docs/cli.md
documents them and tests/cli checks each.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "AUTH_FAILED",
    "CANNOT_CONNECT",
    "FAILED",
    "INTERRUPTED",
    "OK",
    "PIPE_CLOSED",
    "TIMED_OUT",
    "USAGE",
    "CliError",
]

#: Everything worked.
OK: Final = 0
#: The tool reported an error (``isError``), or the server answered a request with an error.
FAILED: Final = 1
#: The command line is wrong: an option, an argument, a name the server does not know.
USAGE: Final = 2
#: The server could not be started or reached, or it went away.
CANNOT_CONNECT: Final = 3
#: The server did not answer within ``--timeout`` seconds.
TIMED_OUT: Final = 4
#: Authorization failed (``--auth``): the flow, the user's consent, or the server refusing the token.
AUTH_FAILED: Final = 5
#: Ctrl-C.
INTERRUPTED: Final = 130
#: Whoever read our stdout stopped reading (``| head``): 128 + SIGPIPE, as the shell reports it.
PIPE_CLOSED: Final = 141


class CliError(Exception):
    """A failure to report as one line (``mcpkit: <message>``) and exit with *code*.

    *detail* is printed after that line when there is more to show (a server's stderr tail).
    """

    def __init__(self, message: str, code: int = FAILED, detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.detail = detail
