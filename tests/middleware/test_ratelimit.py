"""RateLimit: a token bucket per caller (the lasting connection, else the verified subject, else one
shared bucket), per caller, method or tool; tools/call refused with a tool error, other methods
with -32000; the clock is the test's."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pytest

from mcpkit import Call, CallNext, Client, Context, Request, RPCError, Server, ServerConnection
from mcpkit.auth import AuthInfo, current_auth
from mcpkit.middleware import RateLimit, caller_of
from mcpkit.middleware.ratelimit import SHARED

from ..framework._sync import sync
from ._wire import ERAS, WIRES_ALL, served, texts


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def limited(limit: RateLimit, methods: list[str] | None = None) -> tuple[Server, list[Call]]:
    server = Server("limited")
    calls: list[Call] = []
    server.add_middleware(limit, methods=methods)

    @server.middleware("tools/call")
    async def keep(call: Call, call_next: CallNext) -> Any:
        calls.append(call)
        return await call_next(call)

    @server.tool
    def one() -> str:
        return "1"

    @server.tool
    def two() -> str:
        return "2"

    @server.prompt
    def greeting() -> str:
        return "hi"

    return server, calls


async def _outcomes(client: Client, *names: str) -> list[str]:
    results = [await client.call_tool(name, {}) for name in names]
    return ["refused" if r.is_error else texts(r)[0] for r in results]


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_a_bucket_per_connection(version: str) -> None:
    clock = Clock()
    server, calls = limited(RateLimit("2/s", clock=clock), methods=["tools/call"])
    async with (
        Client(server, protocol_version=version) as first,
        Client(server, protocol_version=version) as second,
    ):
        assert await _outcomes(first, "one", "two", "one") == ["1", "2", "refused"]
        assert await _outcomes(second, "one") == ["1"]  # another connection: its own bucket
        refused = await first.call_tool("one", {})
        assert texts(refused)[0].startswith("Rate limit exceeded for tool one (2/s); try again in ")
        clock.now += 0.5  # one token back at 2 a second
        assert await _outcomes(first, "two", "two") == ["2", "refused"]
    assert len(calls) == 4  # a refused call never reached what is inside the limit, nor the tool
    assert caller_of(calls[0]) is calls[0].context.connection


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_per_tool_and_per_method(version: str) -> None:
    server, _ = limited(RateLimit("1/m", per="tool", clock=Clock()))
    async with Client(server, protocol_version=version) as client:
        assert await _outcomes(client, "one", "two", "one", "two") == ["1", "2", "refused", "refused"]
        await client.get_prompt("greeting")  # a method of its own here: its own bucket
        with pytest.raises(RPCError) as caught:
            await client.get_prompt("greeting")
    assert caught.value.code == -32000 and "prompts/get (1/m)" in caught.value.message
    assert caught.value.data == {"retryAfter": 60.0, "limit": "1/m"}

    server, _ = limited(RateLimit("2/m", per="method", clock=Clock()))
    async with Client(server, protocol_version=version) as client:
        assert await _outcomes(client, "one", "two", "one") == ["1", "2", "refused"]
        await client.get_prompt("greeting")


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_only_some_tools_and_a_key_of_ones_own(version: str) -> None:
    everyone: list[Hashable] = []

    def one_bucket(call: Call) -> Hashable:
        everyone.append(call.params["name"])
        return "everyone"

    server, _ = limited(RateLimit("1/h", tools=["one"], key=one_bucket, clock=Clock()))
    async with (
        Client(server, protocol_version=version) as first,
        Client(server, protocol_version=version) as second,
    ):
        assert await _outcomes(first, "one", "two", "two") == ["1", "2", "2"]
        assert await _outcomes(second, "one") == ["refused"]  # one bucket for both clients
        await first.get_prompt("greeting")
    assert everyone == ["one", "one"]


def test_the_default_key_without_a_connection() -> None:
    scope = ServerConnection().admit(
        Request(
            id=1,
            method="tools/list",
            params={
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        )
    )
    outbound: Any = object()  # a 2026-07-28 HTTP request answers through its own response
    anonymous = Context(outbound, 1, "tools/call", scope, {}, ServerConnection())
    assert caller_of(Call("tools/call", {}, anonymous)) == SHARED
    reset = current_auth.set(AuthInfo("alice"))
    try:
        alice = Context(outbound, 2, "tools/call", scope, {}, ServerConnection())
    finally:
        current_auth.reset(reset)
    assert caller_of(Call("tools/call", {}, alice)) == ("subject", "alice")


def test_buckets_by_value_are_bounded() -> None:
    clock = Clock()
    limit = RateLimit("1/h", max_keys=10, clock=clock)
    for n in range(10):
        assert limit.take(f"caller{n}") == 0.0
    assert limit.take("caller0") > 0  # spent
    assert limit.take("caller10") == 0.0  # the table was full: the oldest tenth is forgotten
    assert limit.take("caller0") == 0.0  # forgotten, so full again (and caller1 forgotten for it)
    assert limit.take("caller2") > 0  # remembered, and spent


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="invalid rate limit"):
        RateLimit("ten a second")
    with pytest.raises(ValueError, match="per must be"):
        RateLimit("1/s", per="session")  # type: ignore[arg-type]


@pytest.mark.parametrize(("transport", "version"), WIRES_ALL)
@sync
async def test_over_the_wire(transport: str, version: str) -> None:
    # stdio: the connection; HTTP in 2025-11-25: the session; HTTP in 2026-07-28: the shared bucket
    async with served(transport, version) as client:
        assert await _outcomes(client, "limited", "limited", "login", "limited") == [
            "done",
            "done",
            "refused",  # (login without arguments: an argument error, not the limit)
            "refused",
        ]
        refused = await client.call_tool("limited", {})
    assert "Rate limit exceeded for tool limited (2/h)" in texts(refused)[0]
