"""A handshake-era POST's way back, and the bounds every event stream of the server side keeps.

:class:`ResponseStream` carries what the handlers of one POST's requests send, then their answer;
:func:`coalescible` says which messages a queue may hold once; :func:`close_stream` ends a stream
whose client may have stopped reading.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Callable
from typing import Final

from ._asgi import Send, end_body

__all__ = [
    "BACKLOG",
    "CLOSE",
    "DEFAULT_STREAM_QUEUE",
    "ResponseStream",
    "close_stream",
    "coalescible",
]

#: In a response stream's queue: end the HTTP response now, the requests go on (SSE polling).
CLOSE: Final = b"\x00close"
#: Messages for the GET stream kept while it is not open, oldest dropped first.
BACKLOG: Final = 256
#: Messages queued for an open GET stream (or listen stream) that is not being read; beyond it the
#: stream is ended.
DEFAULT_STREAM_QUEUE: Final = 1024


def coalescible(message: bytes) -> bool:
    """Whether *message* says only that something changed (a list, a resource): two of them
    waiting to be sent are worth one. A look at the prefix, where the encoder puts the method."""
    head = message[:72]
    return b'/list_changed"' in head or b'"notifications/resources/updated"' in head


#: How long a stream ended for not being read gets to take its end before the connection is closed.
CLOSE_GRACE: Final = 1.0


class ResponseStream:
    """One POST's way back: what its requests' handlers send, in order, until every one is answered.

    A deque and one wake-up future rather than an ``asyncio.Queue``: most POSTs get nothing but
    their answer, and this is the per-request hot path. At most *limit* messages wait before the
    answer; a handler sending more waits (:meth:`room`) until the client reads, as over stdio:
    only that request is held, and nothing is dropped.
    """

    __slots__ = ("_room", "_wake", "answer", "answered", "limit", "on_first", "pending")

    def __init__(self, limit: int = DEFAULT_STREAM_QUEUE) -> None:
        self.pending: collections.deque[bytes] = collections.deque()  # what comes before the answer
        #: The answer once it is there (one message answers a POST, a batch's included); empty if
        #: the requests were cancelled and nothing is owed.
        self.answer = b""
        self.answered = False
        self.limit = limit
        self._wake: asyncio.Future[None] | None = None
        self._room: asyncio.Future[None] | None = None
        #: Called (once) when the first message before the answer comes: what starts the POST's
        #: responder when its request runs in the POST's own task (see ``app._in_session``).
        self.on_first: Callable[[], None] | None = None

    def put(self, message: bytes, final: bool) -> None:
        if final:
            if self.answered:
                return  # one answer per POST; a late "nothing is owed" must not erase it
            self.answer, self.answered = message, True
        elif message:
            self.pending.append(message)
            if self.on_first is not None:
                start, self.on_first = self.on_first, None
                start()
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    def full(self) -> bool:
        return len(self.pending) >= self.limit

    async def room(self) -> None:
        """Until fewer than *limit* messages wait (or the stream is released)."""
        while self.full():
            if self._room is None or self._room.done():
                self._room = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._room)  # several senders may wait on the one future

    def drained(self) -> None:
        """Some pending messages were taken (or the stream is gone): wake any sender waiting."""
        if self._room is not None and not self._room.done():
            self._room.set_result(None)

    def release(self) -> None:
        """The response is over: drop what nobody will read, and let waiting senders go on."""
        self.pending.clear()
        self.drained()

    async def wait(self) -> None:
        """Until something is pending or the answer is there."""
        while not self.pending and not self.answered:
            self._wake = asyncio.get_running_loop().create_future()
            try:
                await self._wake
            finally:
                self._wake = None

    async def next(self) -> bytes | None:
        """The next message, the answer last; ``None`` once it has been taken."""
        await self.wait()
        if self.pending:
            message = self.pending.popleft()
            self.drained()
            return message
        answer, self.answer = self.answer, b""
        return answer or None


async def close_stream(send: Send, stuck: bool) -> None:
    """End an event stream; one whose client is *stuck* (not reading) gets :data:`CLOSE_GRACE`
    seconds to take the end, after which the connection is dropped (uvicorn logs that the response
    was left incomplete and closes it)."""
    if not stuck:
        await end_body(send)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(end_body(send), CLOSE_GRACE)
