"""What both ends of a stdio connection do alike: read their pipe, take messages as they arrive, send."""

from __future__ import annotations

import asyncio
import os
import select
import stat
from collections.abc import Callable
from typing import Final

from ._stdio_lines import LineReader
from ._stdio_outbox import Outbox

__all__ = ["ATOMIC_WRITE_BYTES", "READ_BYTES", "PipeEnd", "ReadEnd", "is_pipe_like", "read_at_most"]

#: atomic, all of it or (the pipe being full) none, so it never leaves half a message to finish.
ATOMIC_WRITE_BYTES: Final = getattr(select, "PIPE_BUF", 512)

#: The most either end reads from its pipe at once (what a pipe holds by default).
READ_BYTES: Final = 64 * 1024


def is_pipe_like(fd: int) -> bool:
    # A terminal is pipe-like; other character devices are not: /dev/null cannot be polled, and
    # uvloop aborts the process when asked to (`mcpkit run server.py > /dev/null`).
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def read_at_most(transport: asyncio.ReadTransport, size: int) -> None:
    if hasattr(transport, "max_size"):
        # asyncio's pipe transport reads up to 256 KiB at a time, and a buffer that large is
        # mmap()ed and unmapped by malloc around every read: three system calls, for a
        # 100-byte message, that cost more than the rest of reading it. A pipe holds 64 KiB.
        transport.max_size = size


class ReadEnd(asyncio.StreamReaderProtocol):
    """The read end of a pipe: each chunk goes first to its transport, which may take messages out
    of it at once (see :class:`PipeEnd`); the rest goes on to the line reader."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        super().__init__(reader)
        self.heard: Callable[[bytes], bytes] | None = None

    def data_received(self, data: bytes) -> None:
        if self.heard is not None:
            data = self.heard(data)
        if data:
            super().data_received(data)


class PipeEnd:
    """What both ends of a stdio connection do alike, reading lines and writing messages.

    **Taking messages as they arrive.** While the reading task waits in :meth:`receive` with
    nothing read before it left to return, each chunk read is offered to the taker set with
    :meth:`listen` first (a peer: answers settle their requests, requests start), in the turn of
    the loop that read it; through :meth:`receive` the same message would first wake the reading
    task, a turn later. What the taker declines (a notification, which is handled in order; a
    batch; anything it cannot decode), and everything after it, goes to the line reader as before,
    so messages are still handled in the order they came.

    **Writing.** Messages go through an :class:`Outbox`. The first message after the peer sent a
    lone one is written at once (a lone call waits for nothing); after a burst, or once something
    went, what follows in the same turn (the answers and callers the burst woke up) goes out
    together at the turn's end, in one write.
    """

    def __init__(self, reader: LineReader, out: Outbox | None, max_message_bytes: int) -> None:
        self._reader = reader
        self._out = out
        self._closed = False
        self.max_message_bytes = max_message_bytes
        # Nothing sent since the peer last sent a lone message: the next message goes out at once.
        self._quiet = True
        # See listen(): who takes messages as they arrive, and when it may.
        self._take: Callable[[bytes], bool] | None = None
        self._receiving = False  # receive() waits for data: nothing read earlier is left unreceived
        self._whole = True  # what went to the line reader ended with a whole line

    def listen(self, take: Callable[[bytes], bool] | None) -> None:
        """Hand each message to *take* as it arrives, while :meth:`receive` waits with nothing read
        before it left to return; *take* returns whether it dealt with the message (else it, and
        everything after it, goes to :meth:`receive` as before). ``None`` stops this."""
        self._take = take

    async def _read_line(self) -> bytes:
        self._receiving = True
        try:
            return await self._reader.read()
        finally:
            self._receiving = False

    def _arrived(self, data: bytes) -> bytes:
        """A chunk read from the peer: what is left of it for the line reader."""
        # One message in: one caller to answer, whose next message may go at once. Several (a burst)
        # wake several: what they send goes out together.
        self._quiet = data.count(b"\n") <= 1
        take = self._take
        if take is not None and self._receiving and self._whole:
            data = self._take_lines(data, take)
        if data:
            # The reading task now has this to read first: nothing may be taken past it until then.
            self._receiving = False
            self._whole = data.endswith(b"\n")
        return data

    def _take_lines(self, data: bytes, take: Callable[[bytes], bool]) -> bytes:
        end = data.rfind(b"\n")
        if end < 0:
            return data
        if end == len(data) - 1 and data.find(b"\n") == end:  # one whole line: the usual chunk
            message = data[:end].rstrip(b"\r")
            taken = message[:1] == b"{" and len(message) <= self.max_message_bytes and take(message)
            return b"" if taken else data
        start = 0
        limit = self.max_message_bytes
        for line in data[:end].split(b"\n"):
            message = line.rstrip(b"\r")
            # Only a line that is whole, within the bound and JSON is taken here; anything else (a
            # blank line, a peer's log text, a line too long) is for receive() to judge.
            if message[:1] != b"{" or len(message) > limit or not take(message):
                break
            start += len(line) + 1
        return data[start:] if start else data

    def send_nowait(self, message: bytes) -> bool:
        """Send *message* as :meth:`send` would, if that needs no waiting (see
        :meth:`Outbox.send_nowait`); ``False``, having sent nothing, where :meth:`send` must be
        awaited (or would raise) instead."""
        if self._closed or self._out is None or not self._out.send_nowait(message, now=self._quiet):
            return False
        self._quiet = False
        return True
