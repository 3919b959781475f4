"""The client's end of stdio: spawn the server, talk over its pipes, and stop it as the spec orders."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping, Sequence
from typing import IO

from .._errors import ConnectionClosed, TransportError
from .._transport import OVERSIZE
from ._stdio_lines import DEFAULT_MAX_MESSAGE_BYTES, LineReader
from ._stdio_outbox import FlowControl, Outbox
from ._stdio_pipes import READ_BYTES, PipeEnd, ReadEnd, read_at_most

logger = logging.getLogger("mcpkit.client")

__all__ = ["StdioClientTransport"]

_REAPED_WITHIN = 30.0  # seconds to wait for a killed server process to be reaped (see _stop)


class StdioClientTransport(PipeEnd):
    """Spawns a server process and talks to it over its stdin and stdout.

    The pipes are our own rather than asyncio's subprocess streams, which hand every chunk read to
    the protocol a loop turn later. Reading and writing are as :class:`PipeEnd` says: answers
    settle their requests in the turn that read them, and a lone call waits for nothing.
    """

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        reader: LineReader,
        out: Outbox,
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
        flow = FlowControl()
        transport: StdioClientTransport | None = None

        try:
            output, reading = await loop.connect_read_pipe(
                lambda: ReadEnd(stream), os.fdopen(from_child, "rb", buffering=0)
            )
            writer, _ = await loop.connect_write_pipe(lambda: flow, os.fdopen(to_child, "wb", buffering=0))
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            raise
        read_at_most(output, READ_BYTES)
        transport = cls(
            process, LineReader(stream, max_message_bytes), Outbox(writer, flow), output, max_message_bytes
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
        # SIGKILL cannot be refused: what is left to wait for then is the loop hearing of the exit,
        # which a busy machine may delay past *grace*. Left unreaped, the process would outlive
        # the client (and its transport warn when collected).
        for step, wait in ((None, grace), (signal.SIGTERM, grace), (signal.SIGKILL, _REAPED_WITHIN)):
            if step is not None:
                with contextlib.suppress(ProcessLookupError):
                    self.process.send_signal(step)
            try:
                await asyncio.wait_for(self.process.wait(), wait)
                return
            except TimeoutError:
                continue
        logger.warning(
            "the server process %s was not reaped %s s after SIGKILL", self.process.pid, _REAPED_WITHIN
        )
