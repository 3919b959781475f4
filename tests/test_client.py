"""The client's own behaviour, in memory: caching by ttlMs, and the multi round-trip loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import Client, Context, LowLevelServer, MethodNotFound, Server
from mcpkit.transports.memory import memory_pair

_tasks: set[asyncio.Future[None]] = set()


async def connect(server: LowLevelServer, **kwargs: Any) -> Client:
    ours, theirs = memory_pair()
    _tasks.add(asyncio.ensure_future(server.serve(theirs)))
    client = Client(ours, **kwargs)
    await client.connect()
    return client


def counting_server(ttl_ms: int) -> tuple[Server, list[str]]:
    server = Server("cached", cache_ttl_ms=ttl_ms)
    calls: list[str] = []
    original = server._handlers["tools/list"]

    async def counted(params: dict[str, Any], ctx: Context) -> Any:
        calls.append("tools/list")
        return await original(params, ctx)

    server.set_handler("tools/list", counted)
    server.add_tool(lambda: "x", name="one")
    return server, calls


def test_fresh_results_come_from_the_cache_until_a_change() -> None:
    async def main() -> None:
        server, calls = counting_server(60_000)
        client = await connect(server)
        first = await client.list_tools()
        assert await client.list_tools() == first
        assert calls == ["tools/list"]
        changes = await client.listen(tools=True)
        server.add_tool(lambda: "y", name="two")
        await asyncio.wait_for(changes.__anext__(), 60)
        assert [t.name for t in await client.list_tools()] == ["one", "two"]
        assert calls == ["tools/list", "tools/list"]
        await changes.close()
        await client.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_zero_ttl_and_disabled_cache_always_ask() -> None:
    async def main() -> None:
        for ttl, cache in ((0, True), (60_000, False)):
            server, calls = counting_server(ttl)
            client = await connect(server, cache=cache)
            await client.list_tools()
            await client.list_tools()
            assert calls == ["tools/list", "tools/list"]
            await client.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_handshake_clients_do_not_cache() -> None:
    async def main() -> None:
        server, calls = counting_server(60_000)
        client = await connect(server, protocol_version="2025-11-25")
        await client.list_tools()
        await client.list_tools()
        assert len(calls) == 2
        await client.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_server_pings_the_client_in_the_handshake_era() -> None:
    server = Server("pinger")

    @server.tool
    async def ping_back(ctx: Context) -> str:
        await ctx.ping()
        return "pong"

    async def main() -> None:
        client = await connect(server, protocol_version="2025-06-18")
        assert (await client.call_tool("ping_back")).content[0].text == "pong"  # type: ignore[union-attr]
        await client.aclose()
        modern = await connect(server)
        with pytest.raises(MethodNotFound, match="ping does not exist"):
            await modern.call_tool("ping_back")  # 2026-07-28 has no ping
        await modern.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_each_retry_uses_a_new_id_and_echoes_the_state() -> None:
    server = Server("asker")
    seen: list[tuple[Any, Any]] = []

    @server.tool
    async def ask(ctx: Context) -> str:
        seen.append((ctx.request_id, sorted(ctx.answers)))
        first = await ctx.elicit("one?", {"type": "object", "properties": {"a": {"type": "string"}}})
        second = await ctx.elicit("two?", {"type": "object", "properties": {"b": {"type": "string"}}})
        return f"{first.content['a']}{second.content['b']}"  # type: ignore[index]

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        key = "a" if params["message"] == "one?" else "b"
        return {"action": "accept", "content": {key: key.upper()}}

    async def main() -> None:
        client = await connect(server, elicitation=answer)
        assert (await client.call_tool("ask")).content[0].text == "AB"  # type: ignore[union-attr]
        ids = [request_id for request_id, _ in seen]
        assert len(set(ids)) == 3
        assert [answers for _, answers in seen] == [[], ["elicitation_1"], ["elicitation_1", "elicitation_2"]]
        await client.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))
