"""An in-memory transport pair, for unit tests of the layers above the wire.

Claims about the wire are tested over real stdio and HTTP instead.
"""

from __future__ import annotations

import asyncio

from .._errors import ConnectionClosed

__all__ = ["MemoryTransport", "memory_pair"]

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
