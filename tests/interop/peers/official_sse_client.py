"""The official ``mcp`` SDK's client for the 2024-11-05 HTTP+SSE transport.

    python official_sse_client.py URL

Prints the negotiated version and server name, then the first line of ``get_weather(Rome)``.
"""

from __future__ import annotations

import asyncio
import sys

from mcp import ClientSession
from mcp.client.sse import sse_client


async def main(url: str) -> None:
    async with sse_client(url) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        version = getattr(init, "protocol_version", None) or init.protocolVersion  # 2.x renamed it
        info = getattr(init, "server_info", None) or init.serverInfo
        print(version, info.name)
        result = await session.call_tool("get_weather", {"location": "Rome"})
        print(result.content[0].text.splitlines()[0])  # type: ignore[union-attr]


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
