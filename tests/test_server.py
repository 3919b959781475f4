"""The server APIs, in memory: discovery and the handshake, tools, shaping per revision, pagination."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mcpkit import (
    Client,
    ContentBlock,
    Context,
    ImageContent,
    InvalidParams,
    LowLevelServer,
    MethodNotFound,
    ResourceLink,
    Server,
    TextContent,
    Tool,
    ToolError,
)
from mcpkit._versions import SUPPORTED_VERSIONS
from mcpkit.transports.memory import memory_pair


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


_serving: set[asyncio.Future[None]] = set()  # keeps the server tasks referenced while they run


async def connect(server: LowLevelServer, version: str | None = None) -> Client:
    ours, theirs = memory_pair()
    _serving.add(asyncio.ensure_future(server.serve(theirs)))
    client = Client(ours, protocol_version=version)
    await client.connect()
    return client


def demo_server(**kwargs: Any) -> Server:
    server = Server("demo", "2.0", title="Demo", **kwargs)

    @server.tool(title="Adder")
    def add(a: int, b: int = 1) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def whoami(ctx: Context) -> str:
        return ctx.protocol_version

    @server.tool
    async def link() -> list[ContentBlock]:
        return [ResourceLink(uri="notes://1", name="first"), ImageContent(data="AAAA", mime_type="image/png")]

    @server.tool
    async def refuse() -> str:
        raise ToolError("not today")

    @server.tool
    async def explode() -> str:
        raise RuntimeError("kaboom")

    return server


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_revision_gets_its_own_shape(version: str) -> None:
    async def main() -> None:
        client = await connect(demo_server(), version)
        assert client.protocol_version == version
        tools = {t.name: t for t in await client.list_tools()}
        assert list(tools) == ["add", "whoami", "link", "refuse", "explode"]
        add = tools["add"]
        assert add.input_schema["required"] == ["a"]
        assert add.description == "Add two numbers."
        has_structured = version >= "2025-06-18"
        assert isinstance(add.output_schema, dict) == has_structured
        assert (add.title == "Adder") == has_structured
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.content == [TextContent(text="5")]
        assert (result.structured_content == {"result": 5}) == has_structured
        assert (await client.call_tool("whoami")).content == [TextContent(text=version)]
        linked = (await client.call_tool("link")).content
        assert isinstance(linked[0], ResourceLink if has_structured else TextContent)
        assert isinstance(linked[1], ImageContent)
        await client.aclose()

    run(main())


def test_tool_errors_are_results_and_protocol_errors_are_errors() -> None:
    async def main() -> None:
        client = await connect(demo_server())
        refused = await client.call_tool("refuse")
        assert refused.is_error is True and refused.content == [TextContent(text="not today")]
        exploded = await client.call_tool("explode")
        assert exploded.is_error is True and "kaboom" in exploded.content[0].text  # type: ignore[union-attr]
        invalid = await client.call_tool("add", {"a": "two"})
        assert invalid.is_error is True and "a" in invalid.content[0].text  # type: ignore[union-attr]
        missing = await client.call_tool("add", {})
        assert missing.is_error is True
        with pytest.raises(InvalidParams):
            await client.call_tool("nope")
        with pytest.raises(InvalidParams):
            await client.request("tools/call", {"name": "add", "arguments": [1, 2]})
        with pytest.raises(MethodNotFound):
            await client.request("resources/list")
        with pytest.raises(MethodNotFound):
            await client.request("ping")  # not part of 2026-07-28
        await client.aclose()

    run(main())


def test_discover_and_server_info() -> None:
    async def main() -> None:
        client = await connect(demo_server(instructions="be nice"))
        assert client.protocol_version == "2026-07-28"
        assert client.supported_versions == list(SUPPORTED_VERSIONS)
        assert client.server_info is not None and client.server_info.title == "Demo"
        assert client.instructions == "be nice"
        assert client.server_capabilities["tools"] == {"listChanged": True}
        raw = await client.request("tools/list")
        assert raw["resultType"] == "complete"
        assert raw["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "demo"
        await client.aclose()
        legacy = await connect(demo_server(), "2025-03-26")
        assert legacy.server_info is not None and legacy.server_info.title is None  # no titles yet
        raw = await legacy.request("tools/list")
        assert "resultType" not in raw and "_meta" not in raw
        await legacy.aclose()

    run(main())


def test_pagination_is_followed_and_cursors_are_checked() -> None:
    async def main() -> None:
        server = Server("many", page_size=3)
        for i in range(10):
            server.add_tool(lambda: "x", name=f"tool_{i}")
        client = await connect(server)
        assert [t.name for t in await client.list_tools()] == [f"tool_{i}" for i in range(10)]
        first = await client.request("tools/list")
        assert len(first["tools"]) == 3 and isinstance(first["nextCursor"], str)
        with pytest.raises(InvalidParams):
            await client.request("tools/list", {"cursor": "not-a-cursor"})
        await client.aclose()

    run(main())


@pytest.mark.parametrize("name", ["", "has space", "comma,", "x" * 129, "ünï"])
def test_bad_tool_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="invalid tool name"):
        Server("s").add_tool(lambda: None, name=name)


def test_duplicate_tool_names_are_refused() -> None:
    server = Server("s")
    server.add_tool(lambda: None, name="a.b-c_D")
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(lambda: None, name="a.b-c_D")


def test_low_level_server_like_the_seed_example() -> None:
    server = LowLevelServer("example-server")

    @server.list_tools()
    async def list_tools() -> list[Tool]:
        schema = {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        }
        return [Tool(name="calculate_sum", description="Add two numbers together", input_schema=schema)]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[TextContent]:
        if name == "calculate_sum":
            return [TextContent(text=str(arguments["a"] + arguments["b"]))]
        raise InvalidParams(f"Tool not found: {name}")

    async def main() -> None:
        for version in (None, "2024-11-05"):
            client = await connect(server, version)
            assert [t.name for t in await client.list_tools()] == ["calculate_sum"]
            result = await client.call_tool("calculate_sum", {"a": 1, "b": 2})
            assert result.content == [TextContent(text="3")] and result.is_error is False
            await client.aclose()

    run(main())


def test_a_def_tool_declared_non_blocking_runs_on_the_loop_and_others_on_workers() -> None:
    server = Server("threads", "1.0")

    @server.tool(blocking=False)
    def quick(n: int) -> str:
        return f"{n}:{threading.current_thread().name}"

    @server.tool
    def usual(n: int) -> str:
        return f"{n}:{threading.current_thread().name}"

    with pytest.raises(TypeError, match="blocking=False is for def tools"):

        @server.tool(blocking=False)
        async def wrong() -> str:
            return ""

    async def main() -> None:
        client = await connect(server)
        loop_thread = threading.current_thread().name
        assert (await client.call_tool("quick", {"n": 1})).structured_content == {
            "result": f"1:{loop_thread}"
        }
        usual = (await client.call_tool("usual", {"n": 2})).structured_content
        assert usual == {"result": "2:mcpkit-worker"}
        bad = await client.call_tool("quick", {"n": "x"})  # arguments are still checked
        assert bad.is_error

    run(main())
