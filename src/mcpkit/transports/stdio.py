"""The stdio transport: newline-delimited UTF-8 JSON over a child process's standard streams.

Server side (:func:`serve_stdio_streams`): messages are read from stdin and written to stdout, and
nothing else may reach stdout ("The server MUST NOT write anything to its stdout that is not a valid
MCP message"). So before serving we move the real stdout to a private file descriptor and point
descriptor 1, and ``sys.stdout``, at stderr: a stray ``print`` in a tool, or a C library writing to
fd 1, lands in the log instead of corrupting the stream.

Both directions are bounded. A line longer than ``max_message_bytes`` (16 MiB by default) is
answered with -32600 and skipped without being buffered whole. What the server writes goes through
the pipe transport's buffer, and once that holds ``write_buffer_bytes`` (1 MiB by default) every
sender waits until the client has read some of it: a client that never reads its stdout
back-pressures the server (a tool's ``ctx.info`` calls wait) instead of growing its memory.

Client side (:class:`StdioClientTransport`): spawn the server, pass its stderr through, and shut down
as the spec orders: close its stdin, wait, then SIGTERM, then SIGKILL.

The parts: the reader's line bound (``_stdio_lines``), the writer (``_stdio_outbox``), what both
ends share (``_stdio_pipes``), and the client's end (``_stdio_client``); the server's end is here.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import IO, TYPE_CHECKING, Any, Final

from .._errors import ConnectionClosed
from ._stdio_lines import DEFAULT_MAX_MESSAGE_BYTES, LineReader
from ._stdio_outbox import FlowControl, Outbox
from ._stdio_pipes import ATOMIC_WRITE_BYTES, READ_BYTES, PipeEnd, ReadEnd, is_pipe_like, read_at_most

if TYPE_CHECKING:
    from ._stdio_client import StdioClientTransport

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_WRITE_BUFFER_BYTES",
    "LineReader",
    "StdioClientTransport",
    "StdioServerTransport",
]

#: The server's outbound high-water mark: past it, senders wait for the client to read.
DEFAULT_WRITE_BUFFER_BYTES: Final = 1024 * 1024


class StdioServerTransport(PipeEnd):
    """The server's end: read stdin, write the (private copy of) stdout."""

    def __init__(
        self,
        reader: LineReader,
        write_fd: int,
        writer: asyncio.WriteTransport | None,
        flow: FlowControl | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        # Answers go out through an Outbox; a regular file is written directly.
        out = None if writer is None else Outbox(writer, flow if flow is not None else FlowControl())
        super().__init__(reader, out, max_message_bytes)
        self._fd = write_fd

    @classmethod
    async def open(
        cls,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        write_buffer_bytes: int = DEFAULT_WRITE_BUFFER_BYTES,
    ) -> StdioServerTransport:
        """Take over the process's stdin and stdout (see the module docstring)."""
        loop = asyncio.get_running_loop()
        sys.stdout.flush()
        out_fd = os.dup(1)
        os.dup2(2, 1)  # fd 1 now writes to stderr
        sys.stdout = sys.stderr
        reader = asyncio.StreamReader(limit=max_message_bytes, loop=loop)
        reading: ReadEnd | None = None
        if is_pipe_like(0):
            stdin, reading = await loop.connect_read_pipe(lambda: ReadEnd(reader), sys.stdin)
            read_at_most(stdin, READ_BYTES)
        else:  # a regular file on stdin (e.g. `< requests.jsonl`): read it in a thread
            loop.run_in_executor(None, _pump_file, sys.stdin.buffer, reader, loop)
        writer: asyncio.WriteTransport | None = None
        flow = FlowControl()
        if is_pipe_like(out_fd):
            out = os.fdopen(out_fd, "wb", buffering=0, closefd=False)
            writer, _ = await loop.connect_write_pipe(lambda: flow, out)
            writer.set_write_buffer_limits(high=write_buffer_bytes)
        transport = cls(LineReader(reader, max_message_bytes), out_fd, writer, flow, max_message_bytes)
        if reading is not None:
            # Nothing is read before the loop's next turn: the transport sees the first chunk as well.
            reading.heard = transport._arrived
        return transport

    async def receive(self) -> bytes:
        return await self._read_line()

    def receive_nowait(self) -> bytes | None:
        """The next message if it has been read already (see :meth:`LineReader.read_nowait`)."""
        return self._reader.read_nowait()

    def send_from_thread(self, message: bytes) -> bool:
        """Write *message* now, from a worker thread (a ``def`` tool's answer), where the loop would
        write it at once too; ``False``, having written nothing, where it is the loop's to send.

        It goes now where the client sent a lone request and nothing has been sent since (see
        :class:`PipeEnd`), nothing waits to be written, and the line fits in one atomic write.
        The loop is then not woken to send the answer: that was a switch between threads, on the
        way back to a client waiting for its one call. Safe from any thread: the outbox's lock
        keeps the loop's writes out meanwhile, and a pipe transport with nothing buffered writes
        nothing behind it.
        """
        out = self._out
        line = message + b"\n"
        if out is None or len(line) > ATOMIC_WRITE_BYTES:
            return False
        with out.lock:
            if self._closed or not self._quiet or not out.idle():
                return False
            # Before the write: the client may answer it, and the loop hear that, before the write
            # returns here (the interpreter lock is released around the system call).
            self._quiet = False
            try:
                os.write(self._fd, line)
            except OSError:  # the pipe is full (or gone): the loop's send waits (or finds out)
                self._quiet = True
                return False
        return True

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionClosed("stdout is closed")
        if self._out is None:
            os.write(self._fd, message + b"\n")  # a regular file never blocks for long
            return
        now, self._quiet = self._quiet, False
        try:
            await self._out.send(message, now=now)
        except ConnectionClosed:
            raise ConnectionClosed("the client closed our stdout") from None

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._out is not None:
                self._out.close()  # what this turn sent goes out before the pipe closes


def _pump_file(stream: IO[bytes], reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    for chunk in iter(lambda: stream.read(65536), b""):
        loop.call_soon_threadsafe(reader.feed_data, chunk)
    loop.call_soon_threadsafe(reader.feed_eof)


def __getattr__(name: str) -> Any:
    # The client's end is imported on first use: a server serving stdio never pays for it.
    if name == "StdioClientTransport":
        from ._stdio_client import StdioClientTransport

        return StdioClientTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
