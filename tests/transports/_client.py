"""The steps the HTTP client's tests share: run a test's coroutine under a deadline, call the echo tool."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit import Client, TextContent


def run(coro: Any) -> Any:
    """Run *coro* to its end, failing it if it takes more than two minutes (a hang, not a slow machine)."""
    return asyncio.run(asyncio.wait_for(coro, 120))


async def echo(client: Client, text: str = "hi") -> str:
    """What the server's ``echo`` tool answers *text* with."""
    block = (await client.call_tool("echo", {"text": text})).content[0]
    assert isinstance(block, TextContent)
    return block.text
