"""The built-in middleware server over a real transport: a stdio subprocess or uvicorn on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from mcpkit import CallToolResult, Client, TextContent

from ..conftest import free_port, http_server

SERVER = Path(__file__).parent / "servers" / "builtin_server.py"
ERAS = ["2025-11-25", "2026-07-28"]
#: Each era over each transport: (transport, protocol version).
WIRES = [("stdio", ERAS[0]), ("http", ERAS[1])]
WIRES_ALL = [(transport, era) for transport in ("stdio", "http") for era in ERAS]


@asynccontextmanager
async def served(transport: str, version: str) -> AsyncIterator[Client]:
    """A client of a fresh builtin_server.py process over *transport* in *version*."""
    if transport == "stdio":
        async with Client([sys.executable, str(SERVER)], protocol_version=version) as client:
            yield client
        return
    port = free_port()
    serving = cast(
        Generator[str, None, None], http_server([sys.executable, str(SERVER), str(port)], port, 120)
    )
    url = next(serving)
    try:
        async with Client(url, protocol_version=version) as client:
            yield client
    finally:
        serving.close()


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


async def seen(client: Client) -> dict[str, Any]:
    result = await client.call_tool("seen", {})
    assert isinstance(result.structured_content, dict)
    return result.structured_content
