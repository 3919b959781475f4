"""A tool with rate_limit="2/h" (for the tests): stdio, or HTTP on the port given as argv[1]."""

from __future__ import annotations

import sys

from mcpkit import Server

server = Server("limited")


@server.tool(rate_limit="2/h")
async def ping() -> str:
    return "pong"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run("http", port=int(sys.argv[1]))
    else:
        server.run()
