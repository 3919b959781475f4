"""ResponseLimit: a tools/call result over N bytes of JSON becomes a tool error naming its size
and the limit; smaller ones, other methods and task creations pass."""

from __future__ import annotations

import msgspec
import pytest

from mcpkit import CallToolResult, Client, Server, TextContent
from mcpkit.middleware import ResponseLimit

from ..framework._sync import sync
from ._wire import ERAS, WIRES_ALL, served, texts

EXACT = CallToolResult(content=[TextContent(text="y" * 100)])
SIZE = len(msgspec.json.encode(EXACT))


def limited(limit: int) -> Server:
    server = Server("limited")
    server.add_middleware(ResponseLimit(limit))

    @server.tool
    def exact() -> CallToolResult:
        return EXACT

    @server.tool
    def rows(count: int) -> list[str]:
        return ["row"] * count

    return server


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_at_and_over_the_limit(version: str) -> None:
    async with Client(limited(SIZE), protocol_version=version) as client:
        assert not (await client.call_tool("exact", {})).is_error  # exactly at the limit passes
        over = await client.call_tool("rows", {"count": 1000})
        assert over.is_error and over.structured_content is None
        [text] = texts(over)
        assert text.startswith("The result of tool rows is ") and f"limit of {SIZE} bytes" in text
        assert not (await client.call_tool("rows", {"count": 2})).is_error
        assert len(await client.list_tools()) == 2  # other methods pass whatever their size
    async with Client(limited(SIZE - 1), protocol_version=version) as client:
        assert (await client.call_tool("exact", {})).is_error


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ResponseLimit(0)
    with pytest.raises(ValueError, match="may use"):
        ResponseLimit(10, message="{what}")
    assert ResponseLimit(10, message="{name} over {limit}").message == "{name} over {limit}"


@pytest.mark.parametrize(("transport", "version"), WIRES_ALL)
@sync
async def test_over_the_wire(transport: str, version: str) -> None:
    async with served(transport, version) as client:
        result = await client.call_tool("big", {})
    assert result.is_error and "over this server's limit of 4000 bytes" in texts(result)[0]
