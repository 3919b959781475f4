"""The official ``mcp`` SDK's handshake-era HTTP clients, run by the interop tests.

    python official_http_client.py URL          # Streamable HTTP (mcp 1.x)
    python official_http_client.py --sse URL    # the 2024-11-05 HTTP+SSE transport (mcp 1.x and 2.x)

Prints the negotiated version and server name, then the first line of ``get_weather(Rome)``.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp import ClientSession


def connect(url: str, sse: bool) -> AbstractAsyncContextManager[Any]:
    if sse:
        from mcp.client.sse import sse_client

        return sse_client(url)
    from mcp.client.streamable_http import streamablehttp_client

    return streamablehttp_client(url)


async def main(url: str, sse: bool) -> None:
    async with connect(url, sse) as streams, ClientSession(streams[0], streams[1]) as session:
        init = await session.initialize()
        version = getattr(init, "protocol_version", None) or init.protocolVersion  # 2.x renamed it
        info = getattr(init, "server_info", None) or init.serverInfo
        print(version, info.name)
        result = await session.call_tool("get_weather", {"location": "Rome"})
        print(result.content[0].text.splitlines()[0])  # type: ignore[union-attr]


if __name__ == "__main__":
    sse = sys.argv[1] == "--sse"
    asyncio.run(main(sys.argv[-1], sse))
