"""Tags, server.disable/enable and ctx.disable/enable: hidden components are left out of lists
and refused as unknown, list changes are announced; per session, two sessions see different
lists; components of mounted servers are hidden by their exposed names and by their own tags."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import Client, Context, InvalidParams, RPCError, Server

from ._composed import ERAS, connect, serve_http, stdio_command, text
from ._sync import sync


def tagged() -> Server:
    server = Server("tagged")

    @server.tool(tags=["admin"])
    def drop() -> str:
        return "dropped"

    @server.tool(tags=["read"])
    def look() -> str:
        return "looked"

    def report(topic: str) -> str:
        return f"report on {topic}"

    server.add_prompt(report, tags=["admin"])

    @server.resource("data://audit", tags=["admin"])
    def audit() -> str:
        return "audit log"

    @server.resource("data://public")
    def public() -> str:
        return "public"

    @server.resource("rows://{id}", tags=["admin"])
    def row(id: str) -> str:
        return f"row {id}"

    @server.tool
    async def hide(ctx: Context, names: list[str] | None = None, tags: list[str] | None = None) -> str:
        await ctx.disable(names=names or (), tags=tags or ())
        return "hidden"

    @server.tool
    async def show(ctx: Context, names: list[str] | None = None, tags: list[str] | None = None) -> str:
        await ctx.enable(names=names or (), tags=tags or ())
        return "shown"

    return server


async def _lists(client: Client) -> dict[str, list[str]]:
    return {
        "tools": [t.name for t in await client.list_tools()],
        "prompts": [p.name for p in await client.list_prompts()],
        "resources": [r.uri for r in await client.list_resources()],
        "templates": [t.uri_template for t in await client.list_resource_templates()],
    }


@pytest.mark.parametrize("version", ["2024-11-05", *ERAS])
@sync
async def test_server_disable_and_enable_by_tag_and_name(version: str) -> None:
    server = tagged()
    async with Client(server, protocol_version=version) as client:
        changes = await client.listen(tools=True, prompts=True, resources=True)
        server.disable(tags=["admin"])
        told = {(await asyncio.wait_for(changes.__anext__(), 30))[0] for _ in range(3)}
        assert told == {f"notifications/{kind}/list_changed" for kind in ("tools", "prompts", "resources")}
        assert await _lists(client) == {
            "tools": ["look", "hide", "show"],
            "prompts": [],
            "resources": ["data://public"],
            "templates": [],
        }
        with pytest.raises(InvalidParams, match="Unknown tool: drop"):
            await client.call_tool("drop", {})
        with pytest.raises(InvalidParams, match="Unknown prompt: report"):
            await client.get_prompt("report", {"topic": "x"})
        with pytest.raises(RPCError, match="not found"):
            await client.read_resource("data://audit")
        with pytest.raises(RPCError):
            await client.read_resource("rows://1")  # through a hidden template
        server.enable(names=["drop"])  # a name enabled shows despite its disabled tag
        assert "drop" in (await _lists(client))["tools"]
        server.disable(names=["look"])
        assert (await _lists(client))["tools"] == ["drop", "hide", "show"]
        server.enable(tags=["admin"], names=["look"])
        assert await _lists(client) == {
            "tools": ["drop", "look", "hide", "show"],
            "prompts": ["report"],
            "resources": ["data://audit", "data://public"],
            "templates": ["rows://{id}"],
        }
        assert (await client.read_resource("rows://1")).contents[0].text == "row 1"
        await changes.close()


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_ctx_disable_is_per_session_in_process(version: str) -> None:
    server = tagged()
    async with (
        Client(server, protocol_version=version) as one,
        Client(server, protocol_version=version) as two,
    ):
        assert text(await one.call_tool("hide", {"tags": ["admin"], "names": ["data://public"]})) == "hidden"
        assert await _lists(one) == {
            "tools": ["look", "hide", "show"],
            "prompts": [],
            "resources": [],
            "templates": [],
        }
        assert (await _lists(two))["tools"] == ["drop", "look", "hide", "show"]
        with pytest.raises(InvalidParams):
            await one.call_tool("drop", {})
        assert text(await two.call_tool("drop", {})) == "dropped"
        await one.call_tool("show", {"tags": ["admin"], "names": ["data://public"]})
        assert await _lists(one) == await _lists(two)


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_components_of_mounted_servers_hidden(version: str) -> None:
    parent, child = Server("parent"), Server("child")
    child_tagged = tagged()
    parent.mount(child_tagged, namespace="kid")

    @child.tool(tags=["beta"])
    def beta() -> str:
        return "beta"

    parent.mount(child, namespace="other")
    async with Client(parent, protocol_version=version) as client:
        parent.disable(tags=["admin", "beta"])  # the children's own tags
        lists = await _lists(client)
        assert lists["tools"] == ["kid__look", "kid__hide", "kid__show"]
        assert lists["prompts"] == [] and lists["resources"] == ["data://public"]
        with pytest.raises(InvalidParams):
            await client.call_tool("kid__drop", {})
        parent.enable(tags=["admin", "beta"])
        parent.disable(names=["kid__look", "other__beta", "data://audit"])  # by the names exposed
        lists = await _lists(client)
        assert lists["tools"] == ["kid__drop", "kid__hide", "kid__show"]
        assert lists["resources"] == ["data://public"]
        with pytest.raises(InvalidParams):
            await client.call_tool("other__beta", {})


@sync
async def test_a_collided_resource_of_a_child_is_hidden_by_its_tags() -> None:
    parent = Server("parent")

    @parent.resource("data://audit")
    def own() -> str:
        return "the parent's"

    parent.mount(tagged(), namespace="kid")
    async with Client(parent) as client:
        assert (await _lists(client))["resources"] == ["data://audit", "kid+data://audit", "data://public"]
        parent.disable(tags=["admin"])
        assert (await _lists(client))["resources"] == ["data://audit", "data://public"]
        with pytest.raises(RPCError):
            await client.read_resource("kid+data://audit")


def test_bad_filters_are_refused() -> None:
    server = tagged()
    with pytest.raises(TypeError, match="not a string"):
        server.disable(names="drop")
    with pytest.raises(TypeError, match="must be strings"):
        server.disable(tags=[1])  # type: ignore[list-item]
    assert not server.hidden  # nothing half-applied


# -- over the wire ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    yield from serve_http()


async def _tools(client: Client) -> set[str]:
    return {t.name for t in await client.list_tools()}


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("version", ERAS)
@sync
async def test_server_disable_over_the_wire(
    transport: str, version: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("http_url") if transport == "http" else None
    async with connect(transport, url, version) as client:
        changes = await client.listen(tools=True)
        await client.call_tool("server_disable", {"tags": ["kid"], "names": ["find"]})
        try:
            method, _ = await asyncio.wait_for(changes.__anext__(), 60)
            assert method == "notifications/tools/list_changed"
            tools = await _tools(client)
            assert not {"kid__life", "find"} & tools and "kid__ask" in tools
            assert [p.name for p in await client.list_prompts()] == []
            assert "kid+data://shared" not in [r.uri for r in await client.list_resources()]
            with pytest.raises(InvalidParams):
                await client.call_tool("kid__life", {})
        finally:
            await client.call_tool("server_enable", {"tags": ["kid"], "names": ["find"]})
        assert {"kid__life", "find"} <= await _tools(client)
        await changes.close()


@sync
async def test_ctx_disable_per_session_over_http_sessions(request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_url")
    async with connect("http", url, "2025-11-25") as one, connect("http", url, "2025-11-25") as two:
        told: list[str] = []

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            told.append(method)

        one.on_notification = on_notification
        await one.call_tool("hide", {"names": ["kid__ask"], "tags": ["admin"]})
        assert not {"kid__ask", "trail"} & await _tools(one)
        assert {"kid__ask", "trail"} <= await _tools(two)
        with pytest.raises(InvalidParams):
            await one.call_tool("kid__ask", {})
        assert "notifications/tools/list_changed" in told
        await one.call_tool("show", {"names": ["kid__ask"], "tags": ["admin"]})
        assert await _tools(one) == await _tools(two)


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_ctx_disable_per_stdio_connection(version: str) -> None:
    async with (
        Client(stdio_command(), protocol_version=version, timeout=120, probe_timeout=60) as one,
        Client(stdio_command(), protocol_version=version, timeout=120, probe_timeout=60) as two,
    ):
        await one.call_tool("hide", {"names": ["kid__ask"]})
        assert "kid__ask" not in await _tools(one)
        assert "kid__ask" in await _tools(two)


@sync
async def test_ctx_disable_lasts_one_request_over_stateless_http(request: pytest.FixtureRequest) -> None:
    """2026-07-28 over HTTP has no session: what a tool hides with ctx.disable is hidden for that
    request only (keep a caller's choices in your own store, keyed by ctx.auth)."""
    url = request.getfixturevalue("http_url")
    async with connect("http", url, "2026-07-28") as client:
        await client.call_tool("hide", {"names": ["kid__ask"]})
        assert "kid__ask" in await _tools(client)
