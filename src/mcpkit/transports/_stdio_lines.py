"""The stdio reader's bound: a byte stream split into lines, none buffered past its length limit."""

from __future__ import annotations

import asyncio
import collections
from typing import Final

from .._transport import OVERSIZE

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "LineReader"]

#: Lines longer than this are refused (answered with -32600) and skipped, so a hostile or broken
#: peer cannot make us buffer without bound.
DEFAULT_MAX_MESSAGE_BYTES: Final = 16 * 1024 * 1024

#: The server's outbound high-water mark: past it, senders wait for the client to read.
DEFAULT_WRITE_BUFFER_BYTES: Final = 1024 * 1024

#: The most a :class:`LineReader` takes from its stream at once (what a pipe holds by default).
_CHUNK_BYTES: Final = 64 * 1024


class LineReader:
    """Splits a byte stream into lines, bounded in length. ``read()`` returns one line, no newline.

    The stream is read a chunk at a time (whatever has arrived, up to ``_CHUNK_BYTES``) and each
    chunk is split in one pass: with many requests in flight a chunk holds dozens of lines, and a
    ``StreamReader.readuntil`` per line cost more than splitting them all at once. What follows a
    chunk's last newline waits for the next chunk; once that is longer than ``max_bytes`` it is
    dropped as it comes, up to the end of its line, which reads as :data:`OVERSIZE` (so a line too
    long is never buffered whole).
    """

    __slots__ = ("_lines", "_max", "_partial", "_partial_bytes", "_reader", "_skipping")

    def __init__(self, reader: asyncio.StreamReader, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self._reader = reader
        self._max = max_bytes
        # Complete lines split off already, oldest first.
        self._lines: collections.deque[bytes] = collections.deque()
        # The start of the line still being read, in pieces (joined once, when its newline comes:
        # a long line arriving in many chunks is not copied again with each).
        self._partial: list[bytes] = []
        self._partial_bytes = 0
        # The line being read is over the bound: its bytes are dropped until its newline.
        self._skipping = False

    async def read(self) -> bytes:
        while True:
            line = self.read_nowait()
            if line is not None:
                return line
            chunk = await self._reader.read(_CHUNK_BYTES)
            if not chunk:
                return self._at_eof()
            self._split(chunk)

    def read_nowait(self) -> bytes | None:
        """The next line if one is split off already (no reading, no waiting); else ``None``."""
        lines = self._lines
        while lines:
            line = lines.popleft()
            if line is OVERSIZE:
                return line
            line = line.rstrip(b"\r")
            if line.strip():  # blank lines between messages are tolerated, not answered
                return line
        return None

    def _at_eof(self) -> bytes:
        if self._skipping:
            self._skipping = False
            return OVERSIZE  # a line too long that never ended is refused all the same
        last = b"".join(self._partial).rstrip(b"\r")
        self._partial.clear()
        self._partial_bytes = 0
        if last.strip():
            return last  # a last message without its newline still counts
        raise EOFError

    def _split(self, chunk: bytes) -> None:
        parts = chunk.split(b"\n")
        tail = parts.pop()  # after the last newline: the start of a line still to come
        if parts:
            # The first part ends the line begun in earlier chunks, if any.
            if self._skipping:
                self._skipping = False
                parts[0] = OVERSIZE
            elif self._partial:
                if self._partial_bytes + len(parts[0]) > self._max:
                    parts[0] = OVERSIZE
                else:
                    self._partial.append(parts[0])
                    parts[0] = b"".join(self._partial)
                self._partial.clear()
                self._partial_bytes = 0
            limit = self._max
            for index, part in enumerate(parts):
                if len(part) > limit:
                    parts[index] = OVERSIZE
            self._lines.extend(parts)
        if not tail or self._skipping:
            return
        self._partial_bytes += len(tail)
        if self._partial_bytes > self._max:
            self._skipping = True
            self._partial.clear()
            self._partial_bytes = 0
        else:
            self._partial.append(tail)
