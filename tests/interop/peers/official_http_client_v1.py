"""The official ``mcp`` 1.x client over Streamable HTTP: ``python official_http_client_v1.py URL``.

Prints the negotiated version and server name, then the first line of ``get_weather(Rome)``.
"""

from __future__ import annotations

import asyncio
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url: str) -> None:
    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
        init = await session.initialize()
        version = getattr(init, "protocol_version", None) or init.protocolVersion  # 2.x renamed it
        info = getattr(init, "server_info", None) or init.serverInfo
        print(version, info.name)
        result = await session.call_tool("get_weather", {"location": "Rome"})
        print(result.content[0].text.splitlines()[0])  # type: ignore[union-attr]


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
