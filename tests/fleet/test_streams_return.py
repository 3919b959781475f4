"""A stream of change notifications whose node dies comes back, and every change after it is heard.

Three nodes behind nginx round-robin on one redis-server, a :class:`~mcpkit.Client` of each era holding
its stream: a 2026-07-28 ``subscriptions/listen`` stream, or a handshake-era session's GET stream.
To know which node holds the stream, the nodes are started one at a time: the stream opens on node 0
(the only one running); node 1 is started and node 0 killed with SIGKILL, so the stream can only come
back on node 1; node 2 is started and node 1 killed, so it comes back on node 2, the one node left.

After each kill the client must tell the application that changes may have been missed (a change
marked ``_meta[MAY_HAVE_MISSED]``), then hear every change made after that, each once. Changes are
made one at a time, each waited for (none lost); a different kind of change (the prompt list) ends
each round, and since one stream carries both in order, the count of tool list changes when it
arrives shows none was repeated.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.client import MAY_HAVE_MISSED, Backoff, Subscription

from ..conftest import free_port
from .conftest import nginx_in_front, start_node, wait_ready

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).with_name("streams_server.py")
TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
UPDATED = "notifications/resources/updated"
#: The resources a 2026-07-28 listener subscribes to: two rounds of five updates, and a spare.
URIS = [f"note://{n}" for n in range(11)]
CHANGES = 5


@dataclass
class StagedFleet:
    """Three node ports behind nginx, the nodes started and killed by the test."""

    url: str
    ports: list[int]
    redis_url: str
    nodes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, index: int) -> None:
        self.nodes[index] = start_node(self.ports[index], self.redis_url, server=SERVER)
        wait_ready(self.ports[index], self.nodes[index])

    def kill(self, index: int) -> None:
        self.nodes[index].send_signal(signal.SIGKILL)
        self.nodes[index].wait()


@contextlib.contextmanager
def staged_fleet(redis_url: str) -> Iterator[StagedFleet]:
    ports = [free_port() for _ in range(3)]
    fleet = StagedFleet("", ports, redis_url)
    try:
        fleet.start(0)
        with nginx_in_front(ports) as front:
            fleet.url = f"http://127.0.0.1:{front}/mcp"
            yield fleet
    finally:
        for node in fleet.nodes.values():
            if node.poll() is None:
                node.kill()
                node.wait()


class Heard:
    """Every change the client passed on to the application, in order."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []
        self._more = asyncio.Event()

    def add(self, method: str, params: dict[str, Any]) -> None:
        self.items.append((method, params))
        self._more.set()

    def count(self, method: str, uri: str | None = None) -> int:
        """How many *method* notifications the server sent (not the client's own notices)."""
        return sum(
            1
            for heard, params in self.items
            if heard == method
            and not (params.get("_meta") or {}).get(MAY_HAVE_MISSED)
            and (uri is None or params.get("uri") == uri)
        )

    def notices(self) -> int:
        """How many "changes may have been missed" notices of the tool list."""
        return sum(
            1
            for heard, params in self.items
            if heard == TOOLS_CHANGED and (params.get("_meta") or {}).get(MAY_HAVE_MISSED)
        )

    async def until(self, counter: Callable[[], int], at_least: int, what: str) -> None:
        """Wait until *counter* reaches *at_least*."""
        try:
            async with asyncio.timeout(90):  # generous: node start-up and a loaded machine
                while counter() < at_least:
                    self._more.clear()
                    await self._more.wait()
        except TimeoutError:
            pytest.fail(f"never heard {what}; heard {self.items}")


async def read(subscription: Subscription, heard: Heard) -> None:
    async for method, params in subscription:
        heard.add(method, params)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25", "2025-03-26"])
def test_a_stream_whose_node_died_comes_back_twice_and_hears_every_change(
    version: str, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    stateless = version == "2026-07-28"

    async def main(fleet: StagedFleet) -> None:
        heard = Heard()

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            heard.add(method, params)

        client = Client(fleet.url, protocol_version=version, on_notification=on_notification)
        client.reconnect = Backoff(initial=0.05, cap=0.5)  # small bounds: the test need not wait long
        async with client:
            reader = None
            if stateless:
                subscription = await client.listen(tools=True, prompts=True, uris=URIS)
                reader = asyncio.ensure_future(read(subscription, heard))
            # Heard once: the stream is open (on node 0, the only node running).
            await client.call_tool("change_tools")
            await heard.until(partial(heard.count, TOOLS_CHANGED), 1, "the first change")

            for round_number, (started, killed) in enumerate(((1, 0), (2, 1)), start=1):
                fleet.start(started)
                fleet.kill(killed)  # the node holding the stream
                await heard.until(heard.notices, round_number, f"the notice of reopen {round_number}")
                before = heard.count(TOOLS_CHANGED)
                for n in range(CHANGES):
                    await client.call_tool("change_tools")
                    await heard.until(
                        partial(heard.count, TOOLS_CHANGED),
                        before + n + 1,
                        f"change {n} of round {round_number}",
                    )
                    if stateless:  # each resource subscribed before the kills, subscribed again since
                        uri = URIS[(round_number - 1) * CHANGES + n]
                        await client.call_tool("update", {"uri": uri})
                        await heard.until(partial(heard.count, UPDATED, uri), 1, f"the update of {uri}")
                await client.call_tool("change_prompts")
                await heard.until(partial(heard.count, PROMPTS_CHANGED), round_number, "the last change")
                assert heard.count(PROMPTS_CHANGED) == round_number
                assert heard.count(TOOLS_CHANGED) == before + CHANGES  # none repeated
                assert heard.notices() == round_number  # one notice per reopen
            if stateless:
                assert all(heard.count(UPDATED, uri) == 1 for uri in URIS[: 2 * CHANGES])
                assert heard.count(UPDATED, URIS[-1]) == 0
                # The notice also covers the subscribed resources: one per reopen for each.
                told = [p["uri"] for m, p in heard.items if m == UPDATED and p["_meta"].get(MAY_HAVE_MISSED)]
                assert sorted(told) == sorted(URIS * 2)
                assert reader is not None and not reader.done()
        if reader is not None:
            async with asyncio.timeout(30):
                await reader  # closing the client ends the iteration

    with caplog.at_level(logging.INFO, "mcpkit.client"), staged_fleet(redis_url) as fleet:
        asyncio.run(main(fleet))
    client_lines = [r for r in caplog.records if r.name == "mcpkit.client"]
    lost = [r for r in client_lines if r.levelno == logging.WARNING and "lost" in r.getMessage()]
    back = [r for r in client_lines if r.levelno == logging.INFO and "may have been missed" in r.getMessage()]
    assert (len(lost), len(back)) == (2, 2), [r.getMessage() for r in client_lines]
