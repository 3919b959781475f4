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
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import select
import signal
import stat
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Final

from .._errors import ConnectionClosed, TransportError
from .._transport import OVERSIZE

logger = logging.getLogger("mcpkit.client")

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_WRITE_BUFFER_BYTES",
    "LineReader",
    "StdioClientTransport",
    "StdioServerTransport",
]

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


def _is_pipe_like(fd: int) -> bool:
    # A terminal is pipe-like; other character devices are not: /dev/null cannot be polled, and
    # uvloop aborts the process when asked to (`mcpkit run server.py > /dev/null`).
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


class _FlowControl(asyncio.Protocol):
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


class _Outbox:
    """The messages one end sends down its pipe, in as few write(2) calls as the loop allows.

    Messages queued during one turn of the loop are written together at its end: one system call for
    many messages when many requests are in flight (a syscall per message cost more than the rest of
    a small tool call), and no delay beyond the current turn for a lone one. Once ``_COALESCE_BYTES``
    wait, they go at once: a sender that never yields (a handler logging in a loop) would otherwise
    pile up a turn without end; handed to the pipe, it meets the high-water mark, where :meth:`send`
    holds it back until the peer has read.
    """

    __slots__ = ("_loop", "_pending", "_pending_bytes", "_writer", "flow", "lock")

    def __init__(self, writer: asyncio.WriteTransport, flow: _FlowControl) -> None:
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


#: The longest line a worker thread writes itself: a write to a pipe of at most PIPE_BUF bytes is
#: atomic, all of it or (the pipe being full) none, so it never leaves half a message to finish.
_ATOMIC_WRITE_BYTES: Final = getattr(select, "PIPE_BUF", 512)

#: The most either end reads from its pipe at once (what a pipe holds by default).
_READ_BYTES: Final = 64 * 1024


def _read_at_most(transport: asyncio.ReadTransport, size: int) -> None:
    if hasattr(transport, "max_size"):
        # asyncio's pipe transport reads up to 256 KiB at a time, and a buffer that large is
        # mmap()ed and unmapped by malloc around every read: three system calls, for a
        # 100-byte message, that cost more than the rest of reading it. A pipe holds 64 KiB.
        transport.max_size = size


class _ReadEnd(asyncio.StreamReaderProtocol):
    """The read end of a pipe: each chunk goes first to its transport, which may take messages out
    of it at once (see :class:`_PipeEnd`); the rest goes on to the line reader."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        super().__init__(reader)
        self.heard: Callable[[bytes], bytes] | None = None

    def data_received(self, data: bytes) -> None:
        if self.heard is not None:
            data = self.heard(data)
        if data:
            super().data_received(data)


class _PipeEnd:
    """What both ends of a stdio connection do alike, reading lines and writing messages.

    **Taking messages as they arrive.** While the reading task waits in :meth:`receive` with
    nothing read before it left to return, each chunk read is offered to the taker set with
    :meth:`listen` first (a peer: answers settle their requests, requests start), in the turn of
    the loop that read it; through :meth:`receive` the same message would first wake the reading
    task, a turn later. What the taker declines (a notification, which is handled in order; a
    batch; anything it cannot decode), and everything after it, goes to the line reader as before,
    so messages are still handled in the order they came.

    **Writing.** Messages go through an :class:`_Outbox`. The first message after the peer sent a
    lone one is written at once (a lone call waits for nothing); after a burst, or once something
    went, what follows in the same turn (the answers and callers the burst woke up) goes out
    together at the turn's end, in one write.
    """

    def __init__(self, reader: LineReader, out: _Outbox | None, max_message_bytes: int) -> None:
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
        :meth:`_Outbox.send_nowait`); ``False``, having sent nothing, where :meth:`send` must be
        awaited (or would raise) instead."""
        if self._closed or self._out is None or not self._out.send_nowait(message, now=self._quiet):
            return False
        self._quiet = False
        return True


class StdioServerTransport(_PipeEnd):
    """The server's end: read stdin, write the (private copy of) stdout."""

    def __init__(
        self,
        reader: LineReader,
        write_fd: int,
        writer: asyncio.WriteTransport | None,
        flow: _FlowControl | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        # Answers go out through an _Outbox; a regular file is written directly.
        out = None if writer is None else _Outbox(writer, flow if flow is not None else _FlowControl())
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
        reading: _ReadEnd | None = None
        if _is_pipe_like(0):
            stdin, reading = await loop.connect_read_pipe(lambda: _ReadEnd(reader), sys.stdin)
            _read_at_most(stdin, _READ_BYTES)
        else:  # a regular file on stdin (e.g. `< requests.jsonl`): read it in a thread
            loop.run_in_executor(None, _pump_file, sys.stdin.buffer, reader, loop)
        writer: asyncio.WriteTransport | None = None
        flow = _FlowControl()
        if _is_pipe_like(out_fd):
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
        :class:`_PipeEnd`), nothing waits to be written, and the line fits in one atomic write.
        The loop is then not woken to send the answer: that was a switch between threads, on the
        way back to a client waiting for its one call. Safe from any thread: the outbox's lock
        keeps the loop's writes out meanwhile, and a pipe transport with nothing buffered writes
        nothing behind it.
        """
        out = self._out
        line = message + b"\n"
        if out is None or len(line) > _ATOMIC_WRITE_BYTES:
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


class StdioClientTransport(_PipeEnd):
    """Spawns a server process and talks to it over its stdin and stdout.

    The pipes are our own rather than asyncio's subprocess streams, which hand every chunk read to
    the protocol a loop turn later. Reading and writing are as :class:`_PipeEnd` says: answers
    settle their requests in the turn that read them, and a lone call waits for nothing.
    """

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        reader: LineReader,
        out: _Outbox,
        output: asyncio.ReadTransport | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        super().__init__(reader, out, max_message_bytes)
        self.process = process
        self._output = output
        #: How many lines of the server's stdout were skipped as not JSON-RPC.
        self.skipped = 0

    @classmethod
    async def spawn(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | IO[bytes] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> StdioClientTransport:
        """Start *command*. Its stderr goes to ours unless *stderr* says otherwise.

        Raises:
            TransportError: the command could not be started.
        """
        if not command:
            raise TransportError("empty command")
        full_env = None if env is None else {**os.environ, **env}
        loop = asyncio.get_running_loop()
        child_stdin, to_child = os.pipe()  # our ends are not inherited (PEP 446)
        from_child, child_stdout = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *command, stdin=child_stdin, stdout=child_stdout, stderr=stderr, env=full_env, cwd=cwd
            )
        except BaseException as exc:
            os.close(to_child)
            os.close(from_child)
            if isinstance(exc, OSError):
                raise TransportError(f"could not start {command[0]!r}: {exc}") from exc
            raise
        finally:
            os.close(child_stdin)
            os.close(child_stdout)
        stream = asyncio.StreamReader(limit=max_message_bytes, loop=loop)
        flow = _FlowControl()
        transport: StdioClientTransport | None = None

        try:
            output, reading = await loop.connect_read_pipe(
                lambda: _ReadEnd(stream), os.fdopen(from_child, "rb", buffering=0)
            )
            writer, _ = await loop.connect_write_pipe(lambda: flow, os.fdopen(to_child, "wb", buffering=0))
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            raise
        _read_at_most(output, _READ_BYTES)
        transport = cls(
            process, LineReader(stream, max_message_bytes), _Outbox(writer, flow), output, max_message_bytes
        )
        # Nothing is read before the loop's next turn: the transport sees the first chunk as well.
        reading.heard = transport._arrived
        return transport

    async def receive(self) -> bytes:
        try:
            while True:
                line = await self._read_line()
                # A server that prints text to stdout breaks the spec ("MUST NOT write anything to
                # its stdout that is not a valid MCP message"); such a line cannot be a message,
                # so skip it (answering a server's log text with -32700 helps nobody) and say so.
                if line[:1] in (b"{", b"[") or line is OVERSIZE or line.lstrip()[:1] in (b"{", b"["):
                    return line
                self.skipped += 1
                logger.warning("skipping a line on the server's stdout that is not JSON-RPC: %.80r", line)
        except EOFError:
            # Give a dying process a moment to be reaped, so errors can name its exit status.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 1.0)
            raise

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionClosed("the server's stdin is closed")
        now, self._quiet = self._quiet, False
        assert self._out is not None  # the client always writes to a pipe
        try:
            await self._out.send(message, now=now)
        except ConnectionClosed:
            raise ConnectionClosed(f"the server process went away ({self.describe_exit()})") from None

    def describe_exit(self) -> str:
        code = self.process.returncode
        if code is None:
            return "still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"

    async def aclose(self, grace: float = 2.0) -> None:
        """Close stdin, wait up to *grace* s; then SIGTERM, wait; then SIGKILL."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError, RuntimeError):
            if self._out is not None:
                self._out.close()  # what this turn sent goes first
        try:
            await self._stop(grace)
        finally:
            if self._output is not None:
                # Its EOF closes it; a grandchild holding the server's stdout open would not.
                self._output.close()

    async def _stop(self, grace: float) -> None:
        for step in (None, signal.SIGTERM, signal.SIGKILL):
            if step is not None:
                with contextlib.suppress(ProcessLookupError):
                    self.process.send_signal(step)
            try:
                await asyncio.wait_for(self.process.wait(), grace)
                return
            except TimeoutError:
                continue
