"""The built-in middleware server over a real transport: a stdio subprocess or uvicorn on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcpkit import CallToolResult, Client, TextContent

from .._served import served_script

SERVER = Path(__file__).parent / "servers" / "builtin_server.py"
ERAS = ["2025-11-25", "2026-07-28"]
#: Each era over each transport: (transport, protocol version).
WIRES = [("stdio", ERAS[0]), ("http", ERAS[1])]
WIRES_ALL = [(transport, era) for transport in ("stdio", "http") for era in ERAS]


@asynccontextmanager
async def served(transport: str, version: str) -> AsyncIterator[Client]:
    """A client of a fresh builtin_server.py process over *transport* in *version*."""
    async with served_script(SERVER, transport, version) as client:
        yield client


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


async def seen(client: Client) -> dict[str, Any]:
    result = await client.call_tool("seen", {})
    assert isinstance(result.structured_content, dict)
    return result.structured_content
