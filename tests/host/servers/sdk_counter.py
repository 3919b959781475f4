"""A handshake-era server on the official ``mcp`` SDK 1.x (FastMCP) that keeps state in memory: a
counter, bumped by a tool that asks the caller first (elicitation), and read by another."""

from __future__ import annotations

import os

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

server = FastMCP("sdk-counter")
count = 0


class Ok(BaseModel):
    ok: bool


@server.tool()
async def bump(ctx: Context) -> str:  # type: ignore[type-arg]
    """Ask the caller, then add one to the counter: 'COUNT PID ANSWER'."""
    global count
    answer = await ctx.elicit("Bump the counter?", schema=Ok)
    count += 1
    return f"{count} {os.getpid()} {answer.action}"


@server.tool()
def peek() -> str:
    """The counter and this process: 'COUNT PID'."""
    return f"{count} {os.getpid()}"


if __name__ == "__main__":
    server.run()
