"""Resource subscriptions through the gateway: one upstream subscription per URI, held while any
caller wants it, and ``resources/unsubscribe`` upstream when the last one goes (by unsubscribing, by
its connection ending, or by its 2026-07-28 listen stream ending). The upstream is a real process
that records what it was sent."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, RPCError, TextContent
from mcpkit.gateway import Gateway
from mcpkit.transports.memory import memory_pair

from ._util import SERVERS, config, run

pytestmark = pytest.mark.e2e


class Caller:
    """A client of the gateway over memory streams."""

    def __init__(self, gateway: Gateway, version: str | None) -> None:
        ours, theirs = memory_pair()
        self.serving = asyncio.ensure_future(gateway.server.serve(theirs))
        self.client = Client(ours, protocol_version=version)

    async def __aenter__(self) -> Client:
        return await self.client.__aenter__()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.__aexit__(*exc_info)
        await asyncio.wait_for(self.serving, 10)


def test_the_last_caller_to_go_unsubscribes_upstream(tmp_path: Path) -> None:
    servers = {
        "rec": {
            "command": sys.executable,
            "args": [str(SERVERS / "recorder.py")],
            "protocolVersion": "2025-11-25",
        }
    }
    gateway = Gateway(config(servers, tmp_path))

    async def main() -> None:
        async with gateway, Caller(gateway, None) as watcher:

            async def events(expected: list[str]) -> None:
                """What the upstream was sent, once it is *expected* (changes may still be on their way)."""
                async with asyncio.timeout(20):
                    while True:
                        result = await watcher.call_tool("rec__events")
                        text = " ".join(b.text for b in result.content if isinstance(b, TextContent))
                        if text.split() == expected:
                            return
                        await asyncio.sleep(0.05)

            a_session = Caller(gateway, "2025-11-25")
            async with a_session as a, Caller(gateway, "2025-06-18") as b:
                await a.subscribe_resource("rec://a")
                await b.subscribe_resource("rec://a")
                await a.subscribe_resource("rec://b")
                await events(["+rec://a", "+rec://b"])  # once per URI
                await a.unsubscribe_resource("rec://a")  # b still wants it
                await a.unsubscribe_resource("rec://b")  # nobody does
                await events(["+rec://a", "+rec://b", "-rec://b"])

                listening = await watcher.listen(uris=["rec://a", "rec://b"])
                await events(["+rec://a", "+rec://b", "-rec://b", "+rec://b"])
            # b went away without unsubscribing: the listen stream still holds both
            async with asyncio.timeout(20):
                while len(gateway.host.subscriptions.holders["rec://a"]) > 1:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
            await events(["+rec://a", "+rec://b", "-rec://b", "+rec://b"])
            await listening.close()
            await events(["+rec://a", "+rec://b", "-rec://b", "+rec://b", "-rec://a", "-rec://b"])
            assert gateway.host.subscribed == {}
            assert gateway.host.subscriptions.holders == {}

    run(main())


def test_a_caller_that_goes_away_unsubscribes(tmp_path: Path) -> None:
    servers = {
        "rec": {
            "command": sys.executable,
            "args": [str(SERVERS / "recorder.py")],
            "protocolVersion": "2025-11-25",
        }
    }
    gateway = Gateway(config(servers, tmp_path))

    async def main() -> Any:
        async with gateway:
            async with Caller(gateway, "2025-11-25") as a:
                await a.subscribe_resource("rec://a")
                assert gateway.host.subscribed == {"rec://a": "rec"}
            async with asyncio.timeout(20):
                while gateway.host.subscribed:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
            async with Caller(gateway, None) as watcher:
                result = await watcher.call_tool("rec__events")
                assert (
                    " ".join(b.text for b in result.content if isinstance(b, TextContent))
                    == "+rec://a -rec://a"
                )

    run(main())


def test_a_server_that_restarts_is_subscribed_again(tmp_path: Path) -> None:
    servers = {
        "rec": {
            "command": sys.executable,
            "args": [str(SERVERS / "recorder.py")],
            "protocolVersion": "2025-11-25",
        }
    }
    gateway = Gateway(config(servers, tmp_path))

    def text(result: Any) -> str:
        return " ".join(b.text for b in result.content if isinstance(b, TextContent))

    async def main() -> None:
        async with gateway, Caller(gateway, "2025-11-25") as caller:
            await caller.subscribe_resource("rec://a")
            os.kill(int(text(await caller.call_tool("rec__pid"))), signal.SIGKILL)
            async with asyncio.timeout(30):
                while True:  # the host restarts the server; the new process is asked again
                    if gateway.host.status()["rec"].state == "ready":
                        try:
                            if text(await caller.call_tool("rec__events")) == "+rec://a":
                                break
                        except RPCError:
                            pass
                    await asyncio.sleep(0.1)
            assert gateway.host.status()["rec"].restarts >= 1

    run(main())
