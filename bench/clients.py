"""Client side of the comparison: the mcpkit ``Client`` against the official SDK's ``Client``.

    python clients.py mcpkit|official SECONDS CONCURRENCY [VERSION] -- SERVER COMMAND... | URL

Both talk to the same stdio server in the handshake era (2025-11-25), calling ``echo``: first one call
at a time, then *CONCURRENCY* calls in flight. Prints one JSON object with calls/s and the CPU the
client process spent per call (the server's CPU is not counted), or ``{"error": ...}``. With a URL
(the mcpkit client only) it speaks Streamable HTTP, at *VERSION* (default 2025-11-25).
"""

from __future__ import annotations

import asyncio
import json
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


def main() -> None:
    which, seconds, concurrency = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    split = sys.argv.index("--")
    command = sys.argv[split + 1 :]
    try:
        if which == "mcpkit":
            version = sys.argv[4] if split > 4 else "2025-11-25"
            result = asyncio.run(with_mcpkit(command, seconds, concurrency, version))
        else:
            result = asyncio.run(with_official(command, seconds, concurrency))
    except Exception as exc:  # report, do not crash the whole benchmark
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        sys.exit(1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
