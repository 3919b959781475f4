"""An in-memory transport pair, for unit tests of the layers above the wire.

Claims about the wire are tested over real stdio and HTTP instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from .._errors import ConnectionClosed

__all__ = ["InProcessTransport", "MemoryTransport", "memory_pair", "serve_in_process"]

_EOF = b""  # never a valid message, so it can mark the end of the stream


class MemoryTransport:
    """One end of a :func:`memory_pair`."""

    def __init__(self, inbox: asyncio.Queue[bytes], outbox: asyncio.Queue[bytes]) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False
        self._peer_closed = False

    async def receive(self) -> bytes:
        if self._peer_closed:
            raise EOFError
        message = await self._inbox.get()
        if message is _EOF:
            self._peer_closed = True
            raise EOFError
        return message

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionClosed("transport is closed")
        self._outbox.put_nowait(message)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._outbox.put_nowait(_EOF)


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: what one sends, the other receives."""
    a_to_b: asyncio.Queue[bytes] = asyncio.Queue()
    b_to_a: asyncio.Queue[bytes] = asyncio.Queue()
    return MemoryTransport(b_to_a, a_to_b), MemoryTransport(a_to_b, b_to_a)


class InProcessTransport(MemoryTransport):
    """The client's end of a server served in this process (``Client(server)``).

    The server's side runs as a task for as long as this end is open: what it raises (a lifespan
    that fails to start) is raised by :meth:`receive`, and :meth:`aclose` waits for it to finish, so
    the server's lifespan has been exited when the client's ``async with`` ends.
    """

    def __init__(self, inbox: asyncio.Queue[bytes], outbox: asyncio.Queue[bytes]) -> None:
        super().__init__(inbox, outbox)
        self.serving: asyncio.Task[None] | None = None
        self.stopped: Callable[[], Coroutine[Any, Any, None]] | None = None  # once it has ended

    async def receive(self) -> bytes:
        serving = self.serving
        if serving is None or not self._inbox.empty():
            return await super().receive()
        message = asyncio.ensure_future(super().receive())
        await asyncio.wait({message, serving}, return_when=asyncio.FIRST_COMPLETED)
        if message.done():
            return message.result()
        message.cancel()
        if not serving.cancelled() and serving.exception() is not None:
            raise serving.exception()  # type: ignore[misc]
        raise EOFError

    async def aclose(self) -> None:
        await super().aclose()
        serving, self.serving = self.serving, None
        stopped, self.stopped = self.stopped, None
        if serving is not None and not serving.done():
            await asyncio.wait({serving})
        if stopped is not None:
            await stopped()


def serve_in_process(
    serve: Callable[[MemoryTransport], Coroutine[Any, Any, None]],
    stopped: Callable[[], Coroutine[Any, Any, None]] | None = None,
) -> InProcessTransport:
    """Start ``serve(server_end)`` as a task; the client's end, which holds it and, once the task
    has ended as it closes, awaits *stopped*."""
    a_to_b: asyncio.Queue[bytes] = asyncio.Queue()
    b_to_a: asyncio.Queue[bytes] = asyncio.Queue()
    ours = InProcessTransport(b_to_a, a_to_b)
    ours.serving = asyncio.get_running_loop().create_task(serve(MemoryTransport(a_to_b, b_to_a)))
    ours.stopped = stopped
    return ours
