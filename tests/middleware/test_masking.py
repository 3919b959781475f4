"""ErrorMasking: tool errors (all, or only unexpected ones) and exceptions become a fixed message,
JSON-RPC errors optionally too with their code kept; the originals go to the server's log only."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit import Call, CallNext, Client, InvalidParams, RPCError, Server, ToolError
from mcpkit.middleware import ErrorMasking

from ..framework._sync import sync
from ._wire import ERAS, WIRES, served, texts

SECRET = "/srv/private/db.sqlite"


def failing(masking: ErrorMasking) -> Server:
    server = Server("failing")
    server.add_middleware(masking)

    @server.middleware("prompts/get")
    async def strict(call: Call, call_next: CallNext) -> Any:
        raise InvalidParams(f"bad greeting, see {SECRET}", {"path": SECRET})

    @server.tool
    def crash() -> str:
        raise ValueError(f"cannot open {SECRET}")

    @server.tool
    def refuse() -> str:
        raise ToolError("not today")

    @server.tool
    def fine() -> str:
        return "ok"

    @server.resource("data://broken")
    def broken() -> str:
        raise OSError(f"cannot read {SECRET}")

    @server.prompt
    def greeting() -> str:
        return "hi"

    return server


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_every_tool_error(version: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.errors")
    async with Client(failing(ErrorMasking("tool {name} failed")), protocol_version=version) as client:
        crashed = await client.call_tool("crash", {})
        refused = await client.call_tool("refuse", {})
        fine = await client.call_tool("fine", {})
    assert crashed.is_error and texts(crashed) == ["tool crash failed"]
    assert refused.is_error and texts(refused) == ["tool refuse failed"]
    assert not fine.is_error and texts(fine) == ["ok"]
    logged = caplog.text
    assert SECRET in logged and "not today" in logged  # the originals stay on the server


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_unexpected_only(version: str) -> None:
    masking = ErrorMasking("tool {name} failed", tool_errors="unexpected")
    async with Client(failing(masking), protocol_version=version) as client:
        crashed = await client.call_tool("crash", {})
        refused = await client.call_tool("refuse", {})
    assert texts(crashed) == ["tool crash failed"]
    assert texts(refused) == ["not today"]  # the tool's own words, meant for the client


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_exceptions_and_protocol_errors(version: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.errors")
    async with Client(failing(ErrorMasking()), protocol_version=version) as client:
        with pytest.raises(RPCError) as read:
            await client.read_resource("data://broken")
        with pytest.raises(RPCError) as kept:
            await client.get_prompt("greeting")
    assert read.value.code == -32603 and SECRET not in str(read.value.message)
    assert "Traceback" not in read.value.message and read.value.data is None
    assert "Traceback" in caplog.text and SECRET in caplog.text  # logged with its traceback
    assert SECRET in kept.value.message  # protocol errors pass unless asked

    masking = ErrorMasking(protocol_errors=True, protocol_message="{name}: refused")
    async with Client(failing(masking), protocol_version=version) as client:
        with pytest.raises(RPCError) as masked:
            await client.get_prompt("greeting")
    assert masked.value.code == InvalidParams.default_code  # the code still says what kind
    assert masked.value.message == "greeting: refused" and masked.value.data is None


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="no other field"):
        ErrorMasking("failed: {error}")
    with pytest.raises(ValueError, match="tool_errors"):
        ErrorMasking(tool_errors="some")  # type: ignore[arg-type]


@pytest.mark.parametrize(("transport", "version"), WIRES)
@sync
async def test_over_the_wire(transport: str, version: str) -> None:
    async with served(transport, version) as client:
        crashed = await client.call_tool("boom", {})
        refused = await client.call_tool("refuse", {})
    assert crashed.is_error and texts(crashed) == ["tool boom failed"]
    assert refused.is_error and texts(refused) == ["not today"]
