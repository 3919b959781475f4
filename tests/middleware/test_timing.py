"""Timing and Logging: a record per request (method, name, seconds, outcome, error kind), in both
eras, each round of a 2026-07-28 question counted; argument values only when asked."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import Call, CallNext, Client, Context, ElicitResult, InvalidParams, RPCError, Server, ToolError
from mcpkit.middleware import CallRecord, Logging, Timing

from ..framework._sync import sync
from ._wire import ERAS, WIRES, seen, served


class Ticks:
    """A clock that moves half a second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.5
        return self.now


def observed(middleware: Any) -> Server:
    server = Server("observed")
    server.add_middleware(middleware)

    @server.middleware("prompts/get")
    async def bad_prompt(call: Call, call_next: CallNext) -> Any:
        raise InvalidParams("no such greeting")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def fails() -> str:
        raise ToolError("no")

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hi {answer.content['name'] if answer.content else '?'}"

    @server.prompt
    def greeting() -> str:
        return "hello"

    return server


async def _answer(params: dict[str, Any]) -> ElicitResult[Any]:
    return ElicitResult(action="accept", content={"name": "Ada"})


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_timing_records_each_request(version: str) -> None:
    records: list[CallRecord] = []
    server = observed(Timing(records.append, logger=None, clock=Ticks()))
    async with Client(server, protocol_version=version, elicitation=_answer) as client:
        records.clear()  # (the 2026-07-28 client's discovery request)
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("fails", {})
        with pytest.raises(RPCError):
            await client.get_prompt("greeting")
        await client.list_tools()
        await client.call_tool("ask", {})
    summary = [(r.method, r.name, r.seconds, r.outcome, r.error, r.arguments) for r in records]
    assert summary[:4] == [
        ("tools/call", "add", 0.5, "ok", None, None),
        ("tools/call", "fails", 0.5, "tool-error", None, None),
        ("prompts/get", "greeting", 0.5, "error", "InvalidParams -32602", None),
        ("tools/list", None, 0.5, "ok", None, None),
    ]
    if version == "2026-07-28":  # the question is a round of its own, then the retry
        assert [r.outcome for r in records[4:]] == ["input-required", "ok"]
    else:
        assert [r.outcome for r in records[4:]] == ["ok"]


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def kept() -> Iterator[tuple[logging.Logger, Kept]]:
    log = logging.getLogger("tests.middleware.timing")
    handler = Kept()
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        yield log, handler
    finally:
        log.removeHandler(handler)


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_timing_logs_a_line(version: str, kept: tuple[logging.Logger, Kept]) -> None:
    log, handler = kept
    server = observed(Timing(logger=log, clock=Ticks()))
    async with Client(server, protocol_version=version) as client:
        handler.records.clear()
        await client.call_tool("add", {"a": 1, "b": 2})
    [line] = handler.records
    assert line.levelno == logging.DEBUG
    assert line.getMessage() == "tools/call add 500.000 ms ok"
    assert isinstance(line.__dict__["mcp_call"], CallRecord)


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_logging_without_and_with_arguments(version: str, kept: tuple[logging.Logger, Kept]) -> None:
    log, handler = kept
    async with Client(observed(Logging(log, clock=Ticks())), protocol_version=version) as client:
        handler.records.clear()
        await client.call_tool("add", {"a": 41, "b": 1})
        with pytest.raises(RPCError):
            await client.get_prompt("greeting")
    messages = [(r.levelno, r.getMessage()) for r in handler.records]
    assert messages == [
        (logging.INFO, "tools/call add ok 500.000 ms"),  # no argument values
        (logging.WARNING, "prompts/get greeting error (InvalidParams -32602) 500.000 ms: no such greeting"),
    ]
    handler.records.clear()
    async with Client(observed(Logging(log, arguments=True)), protocol_version=version) as client:
        handler.records.clear()
        await client.call_tool("add", {"a": 41, "b": 1})
    assert handler.records[0].getMessage().endswith(' arguments={"a":41,"b":1}')


@pytest.mark.parametrize(("transport", "version"), WIRES)
@sync
async def test_over_the_wire(transport: str, version: str) -> None:
    async with served(transport, version) as client:
        await client.call_tool("login", {"user": "ada", "api_key": "k-123456"})
        await client.call_tool("refuse", {})
        record = await seen(client)
    assert "tools/call login ok" in record["timings"]
    assert "tools/call refuse tool-error" in record["timings"]
    assert any(line.startswith("tools/call refuse tool-error ") for line in record["lines"])
