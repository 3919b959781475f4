"""The benchmark's server on ``fastmcp``.

``python fastmcp_server.py`` serves stdio; ``--http PORT`` serves Streamable HTTP at /mcp.
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP

server = FastMCP("bench-fastmcp")


@server.tool
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(
            "http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            path="/mcp",
            show_banner=False,
            log_level="warning",
        )
    else:
        server.run(show_banner=False)
