"""The public hooks of the Client that the host stands on: ``wait_closed``, ``closed``,
``exit_reason``; and a listen request whose answer nobody awaits leaves no "Future exception was
never retrieved" behind."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from typing import Any

import pytest

from mcpkit import Client, Context, TextContent
from mcpkit.lowlevel import LowLevelServer
from mcpkit.transports.memory import memory_pair

from ._util import SERVERS, run


def _text(result: Any) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


def test_a_stdio_servers_end_is_awaitable_and_described() -> None:
    async def main() -> None:
        client = Client([sys.executable, str(SERVERS / "recorder.py")])
        assert not client.closed
        async with client:
            assert client.exit_reason() == "still running"
            os.kill(int(_text(await client.call_tool("pid"))), signal.SIGKILL)
            await asyncio.wait_for(client.wait_closed(), 60)
            assert client.closed
            assert client.exit_reason() == "killed by SIGKILL"

    run(main())


def test_a_listen_cancelled_before_its_acknowledgement_leaves_nothing_unretrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = LowLevelServer("never-acknowledges")
    server.extra_capabilities = {"tools": {"listChanged": True}}

    @server.handler("tools/list")
    async def tools(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"tools": []}

    @server.handler("subscriptions/listen")
    async def listen(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        await asyncio.Event().wait()  # no acknowledgement, ever
        return {}

    async def main() -> None:
        ours, theirs = memory_pair()
        serving = asyncio.ensure_future(server.serve(theirs))
        client = Client(ours)
        await client.connect()
        listening = asyncio.ensure_future(client.listen(tools=True))
        await asyncio.sleep(0.1)  # the request is out, its acknowledgement never comes
        listening.cancel()
        serving.cancel()  # the server goes: the connection closes under the listen request's answer
        await asyncio.gather(serving, return_exceptions=True)
        await client.aclose()
        gc.collect()
        await asyncio.sleep(0)

    run(main())
    gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
