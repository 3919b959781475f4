"""How long a client waits before opening a lost event stream again, and what it tells the session.

A stream that carries what the server says unasked (a handshake-era session's GET stream, a
2026-07-28 ``subscriptions/listen`` stream) is opened again for as long as the client is open, each
try after a pause :class:`Backoff` decides: exponential, with full jitter so that the clients of a
node that died do not all come back in the same instant, and capped. The server's own word comes
first: the SSE ``retry`` field ("The client MUST respect the retry field, waiting the given number of
milliseconds before attempting to reconnect", 2025-11-25) and an HTTP ``Retry-After`` header are
each a lower bound on the pause.

Which failures are worth another try is :func:`worth_retrying`'s call: a 409 (another node still
holds the stream, for a moment), 429, any 5xx, or no answer at all (connection refused, reset, cut
short). Any other status says trying again would meet the same answer.

While the stream was gone the server may have said things nobody heard, so the transport puts
:data:`STREAM_REOPENED` in its inbox once it has the stream back (after anything the stream carried
before it was lost, before anything it carries after), and :data:`SESSION_LOST` when the server
answers that it no longer knows the session (404). These are the transport's words to the client
above it, never sent on the wire.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["SESSION_LOST", "STREAM_REOPENED", "Backoff", "notice", "retry_after", "worth_retrying"]

#: The transport has its session's stream again after losing it: changes may have been missed.
STREAM_REOPENED: Final = "notifications/mcpkit/streamReopened"
#: The server answered the session's stream with 404: the session is gone.
SESSION_LOST: Final = "notifications/mcpkit/sessionLost"


def notice(method: str, **params: Any) -> bytes:
    """One of the notices above as the JSON-RPC notification the session reads from the inbox."""
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()


@dataclass
class Backoff:
    """The pauses between tries: ``initial * factor ** attempt`` at most, capped at *cap* seconds,
    drawn at random below that (full jitter), and never shorter than the server asked for.

    *sleep* does the waiting: tests give one that records the pause and returns at once.
    """

    initial: float = 0.25
    factor: float = 2.0
    cap: float = 30.0
    #: A server's ``retry`` or ``Retry-After`` is honoured up to this many seconds (a stream is not
    #: given up for a server that asks for a day).
    max_hint: float = 600.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = field(default=random.random)

    def delay(self, attempt: int, hint: float | None = None) -> float:
        """The pause before try number *attempt* (0 for the first), *hint* the server's own, in seconds."""
        ceiling = min(self.cap, self.initial * self.factor ** min(attempt, 64))
        drawn = ceiling * self.random()
        if hint is None:
            return drawn
        return max(drawn, min(max(hint, 0.0), self.max_hint))

    async def wait(self, attempt: int, hint: float | None = None) -> None:
        await self.sleep(self.delay(attempt, hint))


def retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds an HTTP ``Retry-After`` header asks for: a number of seconds, or an HTTP date."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


def worth_retrying(status: int | None) -> bool:
    """Whether a stream's opening that met HTTP *status* (``None``: no answer at all) may succeed later."""
    return status is None or status in (409, 429) or status >= 500
