"""A server process driven over its stdin and stdout: handshake, checks, sequential and pipelined calls."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any

import orjson
from load_messages import (
    ECHO_TEXT,
    HANDSHAKE,
    INITIALIZED,
    BenchError,
    CallTemplate,
    check_answers,
    initialize,
    request,
    result_of,
)


class StdioServer:
    """A server process spoken to over its stdin and stdout."""

    def __init__(self, process: asyncio.subprocess.Process, started: float) -> None:
        self.process = process
        self.started = started
        assert process.stdin is not None and process.stdout is not None
        self._in = process.stdin
        self._out = process.stdout
        self._next = 1

    @classmethod
    async def spawn(cls, command: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None,
                    stderr: Any = asyncio.subprocess.DEVNULL) -> StdioServer:  # fmt: skip
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
            cwd=cwd, env=env, limit=1 << 24,
        )  # fmt: skip
        return cls(process, started)

    @property
    def pid(self) -> int:
        return self.process.pid

    def next_id(self) -> int:
        self._next += 1
        return self._next

    async def roundtrip(self, message: dict[str, Any] | bytes, timeout: float = 30.0) -> dict[str, Any]:
        """Send one request and read lines until its answer (notifications are skipped)."""
        data = message if isinstance(message, bytes) else orjson.dumps(message)
        rid = orjson.loads(data)["id"]
        self._in.write(data + b"\n")
        async with asyncio.timeout(timeout):
            while True:
                line = await self._out.readline()
                if not line:
                    raise BenchError(f"the server closed stdout (exit code {self.process.returncode})")
                answer: dict[str, Any] = orjson.loads(line)
                if answer.get("id") == rid and ("result" in answer or "error" in answer):
                    return answer

    async def handshake(self, era: str) -> dict[str, Any]:
        """Open the conversation: ``initialize`` + ``initialized``, or a ``server/discover`` probe."""
        if era == HANDSHAKE:
            answer: dict[str, Any] = result_of(
                await self.roundtrip(initialize(self.next_id()), timeout=60), "initialize"
            )
            self._in.write(INITIALIZED + b"\n")
            return answer
        listed: dict[str, Any] = await self.call("tools/list", {}, era)
        return listed

    async def call(self, method: str, params: dict[str, Any] | None, era: str) -> Any:
        return result_of(await self.roundtrip(request(self.next_id(), method, params, era)), method)

    async def check(self, era: str) -> None:
        check_answers({
            "tools/list": await self.call("tools/list", {}, era),
            "echo": await self.call("tools/call", {"name": "echo", "arguments": {"text": ECHO_TEXT}}, era),
            "add": await self.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, era),
        })  # fmt: skip

    async def sequential(self, era: str, count: int, seconds: float, tool: str = "echo") -> list[float]:
        """Latencies (µs) of calls sent one at a time: *count* of them or for *seconds*."""
        template = CallTemplate(era, tool)
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds
        write, readline = self._in.write, self._out.readline
        for _ in range(count):
            rid = self.next_id()
            t0 = time.perf_counter()
            write(template.encode(rid) + b"\n")
            line = await readline()
            while b'"id":%d' % rid not in line.replace(b" ", b""):
                if not line:
                    raise BenchError("the server closed stdout")
                line = await readline()
            latencies.append((time.perf_counter() - t0) * 1e6)
            if b'"error"' in line:
                raise BenchError(f"error answer: {line[:300]!r}")
            if t0 > deadline:
                break
        return latencies

    async def pipelined(
        self, era: str, in_flight: int, seconds: float, max_calls: int = 10**9, tool: str = "echo"
    ) -> tuple[int, float]:
        """Keep *in_flight* calls outstanding for *seconds*; returns (calls answered, elapsed s)."""
        template = CallTemplate(era, tool)
        encode = template.encode
        first = self._next + 1
        self._next += in_flight
        write, read = self._in.write, self._out.read
        t0 = time.perf_counter()
        deadline = t0 + seconds
        write(b"\n".join(encode(rid) for rid in range(first, first + in_flight)) + b"\n")
        sent, answered = in_flight, 0
        tail = b""
        stop = False
        while answered < sent:
            chunk = await read(1 << 18)
            if not chunk:
                raise BenchError("the server closed stdout")
            lines = chunk.count(b"\n")
            answered += lines
            if b'"error"' in chunk:
                raise BenchError(f"error answer: {chunk[:300]!r}")
            tail = chunk[chunk.rfind(b"\n") + 1 :] if lines else tail + chunk
            if not stop and (time.perf_counter() > deadline or sent >= max_calls):
                stop = True
            if not stop and lines:
                start = self._next + 1
                self._next += lines
                sent += lines
                write(b"\n".join(encode(rid) for rid in range(start, start + lines)) + b"\n")
        del tail
        return answered, time.perf_counter() - t0

    async def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self._in.close()
        try:
            await asyncio.wait_for(self.process.wait(), 3)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
