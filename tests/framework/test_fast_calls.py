"""The shortest ways of a tools/call through middleware and mounts answer as the general ways do:
a mounted server's tool routed by name to that server's own middleware (which sees its own name),
one middleware or a chain of them, a refusal, changed arguments, a changed result, and each round
of a 2026-07-28 question (sealed under the name the client asked by): in process, over a real
stdio subprocess and over real HTTP, in both eras. And what they cost, counted in Python calls
(deterministic, unlike time): a no-op middleware and a mounted call each add a few."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, ElicitResult, InvalidParams, RPCError, Server

from .._served import served_script
from ..conftest import ROOT
from ._composed import text
from ._sync import sync

SERVER = Path(__file__).parent / "servers" / "fast_server.py"
ERAS = ["2025-11-25", "2026-07-28"]


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fast_server = _load("fast_server", SERVER)


async def answer(params: dict[str, Any]) -> ElicitResult[Any]:
    return ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def served(transport: str, version: str) -> AsyncIterator[Client]:
    if transport == "memory":
        async with Client(fast_server.build(), protocol_version=version, elicitation=answer) as client:
            yield client
        return
    async with served_script(SERVER, transport, version, elicitation=answer) as client:
        yield client


async def trail(client: Client) -> list[str]:
    result = await client.call_tool("trail", {})
    assert isinstance(result.structured_content, dict)
    seen: list[str] = result.structured_content["result"]
    return seen


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@sync
async def test_mounted_middleware_and_chains(transport: str, version: str) -> None:
    if transport == "memory":
        fast_server.TRAIL.clear()
    async with served(transport, version) as client:
        assert text(await client.call_tool("kid__echo", {"text": "hi"})) == "hi"
        assert await trail(client) == ["kid>echo"]  # the mounted server's middleware, its own name

        refused = await client.call_tool("kid__drop", {})
        assert refused.is_error and text(refused) == "drop is switched off"
        assert await trail(client) == ["kid>drop"]  # the tool did not run

        doubled = await client.call_tool("kid__double", {"x": 21})
        assert doubled.structured_content == {"result": 42}  # the middleware's arguments reached the tool

        asked = await client.call_tool("kid__ask", {})
        assert text(asked) == "hello Ada"
        rounds = 2 if version == "2026-07-28" else 1  # each round is a request the middleware sees
        assert [step for step in await trail(client) if step != "kid>double"] == ["kid>ask"] * rounds

        stamped = await client.call_tool("duo__echo2", {"text": "yo"})
        assert [block.text for block in stamped.content] == ["yo", "stamped"]  # type: ignore[union-attr]
        assert await trail(client) == [
            "outer>echo2",
            "inner>echo2",
            "inner<CallToolResult",
            "outer<CallToolResult",
        ]
        with pytest.raises(RPCError) as caught:
            await client.call_tool("kid__missing", {})
        assert caught.value.code == InvalidParams.default_code


@sync
async def test_routes_follow_shortened_names_and_new_mounts() -> None:
    parent, kid = Server("parent"), Server("kid")
    long_name = "t" * 128  # exposed as a shortened name with a hash (the gateway's rule)

    @kid.tool(name=long_name)
    async def long() -> str:
        return "long"

    parent.mount(kid, namespace="kid")
    async with Client(parent) as client:
        (listed,) = await client.list_tools()
        assert listed.name != f"kid__{long_name}"
        assert text(await client.call_tool(listed.name, {})) == "long"
        for index in range(5000):  # names made up by a caller route nowhere, and are not all kept
            with pytest.raises(RPCError):
                await client.call_tool(f"kid__nothing{index}", {})
        assert len(parent._routes) <= 4096
        other = Server("other")

        @other.tool
        async def more() -> str:
            return "more"

        parent.mount(other, namespace="other")
        assert text(await client.call_tool("other__more", {})) == "more"
        assert text(await client.call_tool(listed.name, {})) == "long"


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_a_noop_middleware_and_a_mount_add_few_python_calls(era: str) -> None:
    bench = _load("bench_framework", ROOT / "bench" / "framework.py")
    calls = {
        case: bench.python_calls(*bench.build(case), era) for case in ("plain", "noop_mw", "child", "mounted")
    }
    # One middleware: itself and the step it calls next, in place of the plain call's two; one
    # mount: the parent's look-up of the route. (Before: 8 and 7 more.)
    assert calls["noop_mw"] - calls["plain"] <= 3, calls
    assert calls["mounted"] - calls["child"] <= 2, calls
