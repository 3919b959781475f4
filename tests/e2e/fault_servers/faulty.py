"""A server with tools that misbehave on purpose, for tests/e2e/test_faults.py (served by ``mcpkit run``)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time

from mcpkit import Context, Server, ToolError

server = Server(
    "faulty", tool_timeout=float(os.environ["TOOL_TIMEOUT"]) if "TOOL_TIMEOUT" in os.environ else None
)
events: dict[str, threading.Event] = {
    name: threading.Event() for name in ("async_stopped", "sync_finished", "sync_released")
}


@server.tool
async def echo(text: str) -> str:
    return text


@server.tool
async def crash(code: int = 7, delay: float = 0.2) -> str:
    await asyncio.sleep(delay)
    sys.stderr.flush()
    os._exit(code)


@server.tool
async def kill_self() -> str:
    await asyncio.sleep(0.2)
    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


@server.tool
def block(seconds: float = 5.0) -> str:
    """A sync tool that blocks its worker thread."""
    time.sleep(seconds)
    events["sync_finished"].set()
    return "slept"


@server.tool(timeout=1.0)
async def slow_async() -> str:
    try:
        await asyncio.sleep(30)
    finally:
        events["async_stopped"].set()
    return "never"


@server.tool(timeout=1.0)
def slow_sync() -> str:
    """Runs past its timeout until :func:`release` (not for a fixed time: the test says when)."""
    events["sync_released"].wait(60)
    events["sync_finished"].set()
    return "discarded"


@server.tool
async def release() -> str:
    events["sync_released"].set()
    return "released"


@server.tool
async def slow_default() -> str:
    """Limited by Server(tool_timeout=...) only."""
    await asyncio.sleep(30)
    return "never"


@server.tool
def state() -> dict[str, bool]:
    return {name: event.is_set() for name, event in events.items()}


@server.tool
async def chatter(ctx: Context, count: int, size: int = 1000, log: bool = False) -> str:
    """Send *count* progress notifications (or log messages) of about *size* bytes each."""
    pad = "x" * size
    for index in range(count):
        if log:
            await ctx.info({"index": index, "pad": pad})
        else:
            await ctx.report_progress(index, count, pad)
    return f"sent {count}"


@server.tool
async def boom() -> str:
    raise RuntimeError("kaboom")


@server.tool
async def refuse() -> str:
    raise ToolError("not today")


if __name__ == "__main__":
    server.run()
