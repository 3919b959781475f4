"""The stdio writer: messages down a pipe in as few write(2) calls as the loop allows, held back
past the pipe's high-water mark until the peer reads."""

from __future__ import annotations

import asyncio
import threading
from typing import Final

from .._errors import ConnectionClosed

__all__ = ["FlowControl", "Outbox"]


class FlowControl(asyncio.Protocol):
    """The write pipe's protocol: knows when the transport's buffer is over its high-water mark."""

    def __init__(self) -> None:
        self.paused = False
        self.lost = False
        self._resumed: asyncio.Event | None = None

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        if self._resumed is not None:
            self._resumed.set()
            self._resumed = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.resume_writing()  # wake the waiters: they find the pipe gone

    async def wait_resumed(self) -> None:
        if self._resumed is None:
            self._resumed = asyncio.Event()
        await self._resumed.wait()


#: At most this much output waits for the end of a loop turn before it is written.
_COALESCE_BYTES: Final = 64 * 1024


class Outbox:
    """The messages one end sends down its pipe, in as few write(2) calls as the loop allows.

    Messages queued during one turn of the loop are written together at its end: one system call for
    many messages when many requests are in flight (a syscall per message cost more than the rest of
    a small tool call), and no delay beyond the current turn for a lone one. Once ``_COALESCE_BYTES``
    wait, they go at once: a sender that never yields (a handler logging in a loop) would otherwise
    pile up a turn without end; handed to the pipe, it meets the high-water mark, where :meth:`send`
    holds it back until the peer has read.
    """

    __slots__ = ("_loop", "_pending", "_pending_bytes", "_writer", "flow", "lock")

    def __init__(self, writer: asyncio.WriteTransport, flow: FlowControl) -> None:
        self._writer = writer
        self.flow = flow
        # Held around every write to the pipe: a worker thread may write an answer itself (see
        # StdioServerTransport.send_from_thread), and its bytes must not land inside the loop's.
        self.lock = threading.Lock()
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        # Once known: asyncio.get_running_loop() costs a getpid(2) each time.
        self._loop: asyncio.AbstractEventLoop | None = None

    async def send(self, message: bytes, *, now: bool = False) -> None:
        """Queue *message* for the end of this turn (or, *now*, write it and what waits at once).

        Raises:
            ConnectionClosed: the pipe is closed (its reader went away).
        """
        # Over the high-water mark, wait for the peer to read (one check: no await otherwise).
        while self.flow.paused and not self.flow.lost:
            await self.flow.wait_resumed()
        if self.flow.lost or self._writer.is_closing():
            raise ConnectionClosed("the pipe is closed")
        if now and not self._pending:
            self._write(message + b"\n")
            return
        self._queue(message, now)

    def send_nowait(self, message: bytes, *, now: bool = False) -> bool:
        """Send *message* as :meth:`send` would, if that needs no waiting (the pipe is open and
        under its high-water mark); ``False``, having done nothing, otherwise."""
        if self.flow.paused or self.flow.lost or self._writer.is_closing():
            return False
        if now and not self._pending:
            self._write(message + b"\n")
        else:
            self._queue(message, now)
        return True

    def idle(self) -> bool:
        """Nothing waits to be written, here or in the pipe transport's buffer, and the pipe is open
        and under its high-water mark: a write to the pipe now goes out in order."""
        return not (
            self._pending
            or self.flow.paused
            or self.flow.lost
            or self._writer.is_closing()
            or self._writer.get_write_buffer_size()
        )

    def _queue(self, message: bytes, now: bool) -> None:
        if not self._pending:
            if self._loop is None:
                self._loop = asyncio.get_running_loop()
            self._loop.call_soon(self.flush)
        self._pending.append(message)
        self._pending_bytes += len(message)
        if now or self._pending_bytes >= _COALESCE_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write what waits, if anything (and the pipe is still open)."""
        if not self._pending:
            return  # written already (a full outbox, or aclose)
        data = b"\n".join(self._pending) + b"\n"
        self._pending.clear()
        self._pending_bytes = 0
        if not self._writer.is_closing():
            self._write(data)

    def _write(self, data: bytes) -> None:
        with self.lock:  # see __init__: a worker thread may be writing an answer of its own
            self._writer.write(data)

    def close(self) -> None:
        """Write what this turn sent, then close the pipe; senders still waiting give up."""
        self.flush()
        self.flow.connection_lost(None)
        with self.lock:  # not while a worker thread writes: the descriptor may close with it
            self._writer.close()
