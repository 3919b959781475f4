"""When a server of the host is started again after it went away, and when it is given up on.

The backoff doubles from :data:`BACKOFF_START` to :data:`BACKOFF_MAX` seconds between attempts, and
starts over after a minute of good health. A stdio server that no restart can help is given up on:
at once when its command or working directory cannot be used, since the configuration must change
first (:func:`cannot_start` says why), and after :data:`MAX_RESTARTS` restarts in a row that never
stayed up a minute (a crash at start, a missing module). A remote server is retried for as long as
the host runs: its outage is the network's or its deployment's, and it comes back by itself.
"""

from __future__ import annotations

from typing import Final

from .model import ServerConfig

__all__ = ["BACKOFF_MAX", "BACKOFF_START", "HEALTHY_AFTER", "MAX_RESTARTS", "Restarts", "cannot_start"]

BACKOFF_START: Final = 0.25
BACKOFF_MAX: Final = 30.0
#: Seconds up before the backoff starts from the beginning again (and the run of restarts ends).
HEALTHY_AFTER: Final = 60.0
#: Restarts in a row of a stdio server that never stays up a minute, before it is given up on
#: (0.25 + 0.5 + ... + 16 + 30 s: about a minute of backoff in all).
MAX_RESTARTS: Final = 8


class Restarts:
    """The backoff of one server, and its restarts in a row (*limit* of them for a stdio server,
    ``None``: no limit)."""

    def __init__(self, config: ServerConfig, limit: int | None) -> None:
        self.limit = limit if config.transport == "stdio" else None
        self.delay = BACKOFF_START
        #: Restarts since the server last stayed up for HEALTHY_AFTER seconds.
        self.in_a_row = 0

    def ended(self, lasted: float) -> None:
        """The connection ended (or never began) *lasted* seconds after the attempt began."""
        if lasted > HEALTHY_AFTER:
            self.delay, self.in_a_row = BACKOFF_START, 0

    def exhausted(self) -> bool:
        return self.limit is not None and self.in_a_row >= self.limit

    def next_delay(self) -> float:
        """The wait before the next attempt, which counts as one more restart in a row."""
        delay, self.delay = self.delay, min(self.delay * 2, BACKOFF_MAX)
        self.in_a_row += 1
        return delay


def cannot_start(exc: BaseException, config: ServerConfig) -> str | None:
    """Why a stdio server can never start as configured, if that is why *exc* happened: its command
    (or working directory) is missing or cannot be used, which no restart changes."""
    if config.transport != "stdio" or not config.command:
        return None
    cause: BaseException | None = exc
    for _ in range(8):  # the OSError the stdio transport wrapped (TransportError ... from exc)
        if cause is None or isinstance(cause, OSError):
            break
        cause = cause.__cause__
    if not isinstance(cause, FileNotFoundError | PermissionError | NotADirectoryError):
        return None
    if config.cwd is not None and cause.filename == config.cwd:
        return f"working directory {config.cwd!r} cannot be used: {cause.strerror}"
    if isinstance(cause, FileNotFoundError):
        return f"command not found: {config.command[0]}"
    return f"command cannot be run: {config.command[0]}: {cause.strerror}"
