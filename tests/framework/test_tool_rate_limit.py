"""@server.tool(rate_limit=...) counts callers as mcpkit.middleware.RateLimit does: a 2026-07-28
request over HTTP has no lasting connection (its connection object lives one request), so without a
token its calls share the tool's one bucket; they were never limited while the buckets were keyed
by that connection object."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpkit import Client, TextContent

from ..conftest import free_port, http_server
from ._sync import sync

SCRIPT = Path(__file__).parent / "servers" / "limited_server.py"
REFUSED = "Rate limit exceeded for tool ping (2/h); try again later"


async def _three_calls(client: Client) -> list[str]:
    texts = []
    for _ in range(3):
        result = await client.call_tool("ping", {})
        block = result.content[0]
        assert isinstance(block, TextContent)
        texts.append(block.text)
    return texts


@sync
async def test_2026_requests_over_http_share_the_tools_bucket() -> None:
    port = free_port()
    serving = http_server([sys.executable, str(SCRIPT), str(port)], port, 120)
    url = next(serving)
    try:
        async with Client(url, protocol_version="2026-07-28") as client:
            assert await _three_calls(client) == ["pong", "pong", REFUSED]
        async with Client(url, protocol_version="2026-07-28") as other:  # no token: the same bucket
            assert (await _three_calls(other))[0] == REFUSED
        async with Client(url, protocol_version="2025-11-25") as session:  # a session: its own
            assert await _three_calls(session) == ["pong", "pong", REFUSED]
    finally:
        serving.close()


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
@sync
async def test_each_stdio_connection_has_its_own_bucket(version: str) -> None:
    async with Client([sys.executable, str(SCRIPT)], protocol_version=version) as client:
        assert await _three_calls(client) == ["pong", "pong", REFUSED]
