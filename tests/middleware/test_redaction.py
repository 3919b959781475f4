"""RedactArguments: the wrapped middleware sees secrets as "[redacted]" (names normalised as the
host's audit log does), the rest of the chain and the tool see the real values."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import Call, CallNext, Client, Server
from mcpkit.middleware import REDACTED, RedactArguments

from ..framework._sync import sync
from ._wire import ERAS, WIRES, seen, served, texts


def _noop(call: Call, call_next: CallNext) -> Any:
    return call_next(call)


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("password", True),
        ("api_key", True),
        ("X-Api-Key", True),
        ("xApiKey", True),
        ("privateKey", True),
        ("accessToken", True),
        ("Set-Cookie", True),
        ("auth", True),
        ("keyboard", False),
        ("monkey", False),
        ("keywords", False),
        ("city", False),
    ],
)
def test_which_keys_are_secret(key: str, secret: bool) -> None:
    assert RedactArguments(_noop).secret(key) is secret


def test_extra_keys_and_shown_ones() -> None:
    redact = RedactArguments(_noop, keys=["PIN", "!sort_key"])
    assert redact.secret("pin") and redact.secret("card-pin")
    assert not redact.secret("sortKey") and redact.secret("api_key")
    with pytest.raises(TypeError):
        RedactArguments(_noop, keys="pin")


def test_redacts_at_any_depth() -> None:
    value: dict[str, Any] = {"user": "ada", "nested": {"token": "t", "items": [{"password": "p", "n": 1}]}}
    assert RedactArguments(_noop).redact(value) == {
        "user": "ada",
        "nested": {"token": REDACTED, "items": [{"password": REDACTED, "n": 1}]},
    }
    assert value["nested"]["token"] == "t"  # a copy: the original is untouched


def guarded(inner_changes: bool = False) -> tuple[Server, list[Any], list[Any]]:
    server = Server("redacted")
    recorded: list[Any] = []
    received: list[Any] = []

    async def audit(call: Call, call_next: CallNext) -> Any:
        recorded.append(call.params.get("arguments"))
        if inner_changes:  # a middleware that passes on changed arguments
            arguments = {**call.params["arguments"], "city": "Paris", "added": True}
            return await call_next(Call(call.method, {**call.params, "arguments": arguments}, call.context))
        return await call_next(call)

    server.add_middleware(RedactArguments(audit), methods=["tools/call"])

    @server.middleware("tools/call")
    async def after(call: Call, call_next: CallNext) -> Any:
        received.append(("middleware", call.params["arguments"]))
        return await call_next(call)

    @server.tool
    def weather(city: str, api_key: str, added: bool = False) -> str:
        received.append(("tool", {"city": city, "api_key": api_key, "added": added}))
        return "sunny"

    return server, recorded, received


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_the_tool_gets_the_real_values(version: str) -> None:
    server, recorded, received = guarded()
    async with Client(server, protocol_version=version) as client:
        result = await client.call_tool("weather", {"city": "Oslo", "api_key": "s3cr3t"})
    assert texts(result) == ["sunny"]
    assert recorded[-1] == {"city": "Oslo", "api_key": REDACTED}
    assert received == [
        ("middleware", {"city": "Oslo", "api_key": "s3cr3t"}),
        ("tool", {"city": "Oslo", "api_key": "s3cr3t", "added": False}),
    ]


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_what_the_inner_middleware_changed_stays(version: str) -> None:
    server, recorded, received = guarded(inner_changes=True)
    async with Client(server, protocol_version=version) as client:
        await client.call_tool("weather", {"city": "Oslo", "api_key": "s3cr3t"})
    assert recorded[-1] == {"city": "Oslo", "api_key": REDACTED}
    assert received[-1] == ("tool", {"city": "Paris", "api_key": "s3cr3t", "added": True})


@pytest.mark.parametrize(("transport", "version"), WIRES)
@sync
async def test_over_the_wire(transport: str, version: str) -> None:
    async with served(transport, version) as client:
        result = await client.call_tool("login", {"user": "ada", "api_key": "k-123456"})
        assert texts(result)[0] == "ada with a key of 8 characters ending 56"
        lines = (await seen(client))["lines"]
    [line] = [line for line in lines if line.startswith("tools/call login")]
    assert '"api_key":"[redacted]"' in line and "k-123456" not in line and '"user":"ada"' in line
