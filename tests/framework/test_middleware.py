"""@server.middleware: around every request or some methods, outermost first, the same in both
eras and over every transport; tools/call middleware sees and may change a CallToolResult, and
refuses a call by raising ToolError (the tool does not run)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpkit import (
    Call,
    CallNext,
    CallToolResult,
    Client,
    Context,
    ElicitResult,
    InvalidRequest,
    RPCError,
    Server,
    TextContent,
    ToolError,
)

from ..conftest import free_port, http_server
from ._sync import sync

SERVERS = Path(__file__).parent / "servers"
ERAS = ["2025-11-25", "2026-07-28"]


def layered() -> tuple[Server, list[str]]:
    server = Server("layers")
    trail: list[str] = []

    @server.middleware
    async def first(call: Call, call_next: CallNext) -> Any:
        trail.append(f"first>{call.method}")
        try:
            return await call_next(call)
        finally:
            trail.append(f"first<{call.method}")

    @server.middleware("tools/call")
    async def second(call: Call, call_next: CallNext) -> Any:
        trail.append(f"second>{call.params['name']}")
        result = await call_next(call)
        trail.append(f"second<{type(result).__name__}")
        return result

    @server.tool
    def add(a: int, b: int) -> int:
        trail.append("tool")
        return a + b

    @server.tool
    async def ask(ctx: Context) -> str:
        trail.append("ask")
        answer = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hello {answer.content['name'] if answer.content else '?'}"

    return server, trail


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_order_and_result_objects_in_process(version: str) -> None:
    server, trail = layered()
    async with Client(server, protocol_version=version) as client:
        trail.clear()
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        assert trail == [
            "first>tools/call",
            "second>add",
            "tool",
            "second<CallToolResult",
            "first<tools/call",
        ]
        trail.clear()
        await client.list_tools()
        assert trail == ["first>tools/list", "first<tools/list"]  # second is for tools/call only


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_each_round_of_a_question_passes_the_chain(version: str) -> None:
    server, trail = layered()

    async def answer(params: dict[str, Any]) -> ElicitResult[Any]:
        return ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(server, protocol_version=version, elicitation=answer) as client:
        trail.clear()
        result = await client.call_tool("ask", {})
        assert result.content == [TextContent(text="hello Ada")]
    if version == "2026-07-28":  # two requests: the first answered input_required, the retry
        assert trail.count("first>tools/call") == 2 and trail.count("ask") == 2
    else:  # one request; the question went out while it ran
        assert trail.count("first>tools/call") == 1 and trail.count("ask") == 1


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_refusing_and_changing_calls(version: str) -> None:
    server = Server("guarded")
    ran: list[str] = []

    @server.middleware("tools/call")
    async def guard(call: Call, call_next: CallNext) -> Any:
        if call.params["name"] == "drop_table":
            raise ToolError("drop_table is switched off")
        if call.params["name"] == "forbidden":
            raise InvalidRequest("not for you")
        result = await call_next(call)
        assert isinstance(result, CallToolResult)
        return msgspec.structs.replace(result, content=[TextContent(text="[redacted]")])

    @server.tool
    def drop_table() -> str:
        ran.append("drop_table")
        return "dropped"

    @server.tool
    def forbidden() -> str:
        ran.append("forbidden")
        return "no"

    @server.tool
    def secret() -> str:
        return "s3cr3t"

    async with Client(server, protocol_version=version) as client:
        refused = await client.call_tool("drop_table", {})
        assert refused.is_error and refused.content == [TextContent(text="drop_table is switched off")]
        with pytest.raises(RPCError) as caught:
            await client.call_tool("forbidden", {})
        assert caught.value.code == InvalidRequest.default_code and "not for you" in caught.value.message
        assert ran == []
        assert (await client.call_tool("secret", {})).content == [TextContent(text="[redacted]")]


def _texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


async def _exercise(client: Client) -> None:
    refused = await client.call_tool("delete_everything", {})
    assert refused.is_error and _texts(refused) == ["delete_everything is refused by policy"]
    seen = await client.call_tool("seen", {})
    texts = _texts(seen)
    assert texts[-1] == "stamped"  # the tools/call middleware changed the result
    passed = msgspec.json.decode(texts[0])
    assert passed[-1] == "deleted=0"  # the refused tool never ran
    assert (
        "outer>tools/call" in passed
        and passed.count("outer>tools/call") == passed.count("outer<tools/call") + 1 == 2
    )


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_over_stdio(version: str) -> None:
    async with Client(
        [sys.executable, str(SERVERS / "middleware_server.py")], protocol_version=version
    ) as client:
        await _exercise(client)


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_over_http(version: str) -> None:
    port = free_port()
    serving = http_server([sys.executable, str(SERVERS / "middleware_server.py"), str(port)], port, 120)
    url = next(serving)
    try:
        async with Client(url, protocol_version=version) as client:
            await _exercise(client)
    finally:
        serving.close()
