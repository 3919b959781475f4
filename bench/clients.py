"""Client side of the comparison: the mcpkit ``Client`` against the official SDK's ``Client``, and
a hand-written client as the floor.

    python clients.py mcpkit|official|raw[@uvloop] SECONDS CONCURRENCY [VERSION] -- SERVER COMMAND... | URL

Each talks to the same stdio server in the handshake era (2025-11-25), calling ``echo``: first one
call at a time, then *CONCURRENCY* calls in flight. Prints one JSON object with calls/s and the CPU
the client process spent per call (the server's CPU is not counted), or ``{"error": ...}``. With a
URL (the mcpkit client only) it speaks Streamable HTTP, at *VERSION* (default 2025-11-25).

``raw`` is what any client must do at the least, on the same event loop: answers matched to waiting
futures by id as they are read (no reader task), requests written at once, JSON by orjson, no
validation. Its CPU
per call is the floor the machine sets: one call at a time, most of it is the system waking a
process that slept waiting for its answer, which no client library can avoid.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

TEXT = "hello, benchmark"


async def measure(call: Callable[[], Awaitable[str]], seconds: float, concurrency: int) -> dict[str, float]:
    if await call() != TEXT:
        raise AssertionError("echo answered something else")
    figures: dict[str, float] = {}
    for label, width in (("sequential", 1), ("concurrent", concurrency)):
        count = 0
        cpu0, t0 = time.process_time(), time.perf_counter()
        deadline = t0 + seconds

        async def worker(deadline: float) -> None:
            nonlocal count
            while time.perf_counter() < deadline:
                await call()
                count += 1

        await asyncio.gather(*(worker(deadline) for _ in range(width)))
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        figures[f"{label}_calls_per_s"] = count / elapsed
        figures[f"{label}_cpu_us_per_call"] = cpu / count * 1e6
    return figures


async def with_mcpkit(
    command: list[str], seconds: float, concurrency: int, version: str = "2025-11-25"
) -> dict[str, Any]:
    from mcpkit import Client

    t0 = time.perf_counter()
    target: str | list[str] = command[0] if command[0].startswith("http") else command
    async with Client(target, protocol_version=version) as client:
        connect = time.perf_counter() - t0

        async def call() -> str:
            result = await client.call_tool("echo", {"text": TEXT})
            return result.content[0].text  # type: ignore[union-attr, no-any-return]

        return {"connect_ms": connect * 1e3, **await measure(call, seconds, concurrency)}


async def with_official(command: list[str], seconds: float, concurrency: int) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    t0 = time.perf_counter()
    async with Client(StdioServerParameters(command=command[0], args=command[1:]), mode="legacy") as client:
        connect = time.perf_counter() - t0

        async def call() -> str:
            result = await client.call_tool("echo", {"text": TEXT})
            return result.content[0].text  # type: ignore[union-attr, no-any-return]

        return {"connect_ms": connect * 1e3, **await measure(call, seconds, concurrency)}


async def with_raw(command: list[str], seconds: float, concurrency: int) -> dict[str, Any]:
    import orjson

    t0 = time.perf_counter()
    loop = asyncio.get_running_loop()
    from_child, child_stdout = os.pipe()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=child_stdout
    )
    os.close(child_stdout)
    assert process.stdin is not None
    write = process.stdin.write
    waiting: dict[int, asyncio.Future[Any]] = {}

    class Answers(asyncio.Protocol):
        """Each answer settles its request in the turn that reads it (no reader task to wake)."""

        def __init__(self) -> None:
            self.partial = b""

        def data_received(self, data: bytes) -> None:
            *lines, self.partial = (self.partial + data).split(b"\n")
            for line in lines:
                answer = orjson.loads(line)
                future = waiting.pop(answer.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(answer)

    reader, _ = await loop.connect_read_pipe(Answers, os.fdopen(from_child, "rb", buffering=0))
    if hasattr(reader, "max_size"):
        # asyncio reads a pipe 256 KiB at a time; glibc mmap()s and unmaps a buffer that large
        # around every read. A pipe holds 64 KiB.
        reader.max_size = 64 * 1024
    next_id = 0

    async def request(method: str, params: dict[str, Any]) -> Any:
        nonlocal next_id
        next_id += 1
        future = waiting[next_id] = loop.create_future()
        write(orjson.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + b"\n")
        answer = await future
        if "error" in answer:
            raise AssertionError(f"error answer: {answer['error']}")
        return answer["result"]

    try:
        await request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "raw", "version": "1"}})  # fmt: skip
        write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        connect = time.perf_counter() - t0

        async def call() -> str:
            result = await request("tools/call", {"name": "echo", "arguments": {"text": TEXT}})
            return result["content"][0]["text"]  # type: ignore[no-any-return]

        return {"connect_ms": connect * 1e3, **await measure(call, seconds, concurrency)}
    finally:
        process.stdin.close()
        process.terminate()
        await process.wait()
        reader.close()


def main() -> None:
    which, seconds, concurrency = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    # NAME@uvloop runs the client on uvloop (as mcpkit's own gateway runs), else on asyncio.run's loop.
    which, _, loop = which.partition("@")
    run: Callable[[Any], Any] = asyncio.run
    if loop == "uvloop":
        import uvloop

        run = uvloop.run
    split = sys.argv.index("--")
    command = sys.argv[split + 1 :]
    try:
        if which == "mcpkit":
            version = sys.argv[4] if split > 4 else "2025-11-25"
            result = run(with_mcpkit(command, seconds, concurrency, version))
        elif which == "raw":
            result = run(with_raw(command, seconds, concurrency))
        else:
            result = run(with_official(command, seconds, concurrency))
    except Exception as exc:  # report, do not crash the whole benchmark
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        sys.exit(1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
