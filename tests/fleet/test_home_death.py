"""A handshake-era session whose home node (where ``initialize`` was answered) dies keeps hearing
about list changes, through whichever of its nodes are alive.

Requests go to one node directly where the test must know which node holds what.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator

import httpx

from .conftest import Fleet
from .test_tasks import Session

CHANGED = "notifications/tools/list_changed"


async def open_stream(http: httpx.AsyncClient, session: Session, url: str) -> httpx.Response:
    """The session's GET stream on *url*; a 409 (the fleet thinks another node still holds it) is
    retried, as a client reconnecting would."""
    while True:
        request = http.build_request("GET", url, headers={**session.headers(), "accept": "text/event-stream"})
        response = await http.send(request, stream=True)
        if response.status_code != 409:
            assert response.status_code == 200, response.status_code
            return response
        await response.aclose()
        await asyncio.sleep(0.2)


async def messages(response: httpx.Response) -> AsyncIterator[str]:
    """The methods of the messages on an event stream, as they come."""
    async for line in response.aiter_lines():
        if line.startswith("data: ") and line[6:]:
            yield json.loads(line[6:]).get("method", "")


async def hears(response: httpx.Response, method: str) -> None:
    async for heard in messages(response):
        if heard == method:
            return


def test_list_changes_reach_a_session_whose_home_died(own_fleet: Fleet) -> None:
    fleet = own_fleet

    async def main() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=60)) as http:
            home = fleet.node_url(0)
            # quiet: no GET stream yet; its replicas on nodes 1 and 2 are made by a request each.
            quiet = await Session(http, home).open()
            for index in (1, 2):
                await quiet.result("tools/list", {}, fleet.node_url(index))
            # listening: its GET stream is on its home.
            listening = await Session(http, home).open()
            stream = await open_stream(http, listening, home)
            fleet.nodes[0].send_signal(signal.SIGKILL)
            fleet.nodes[0].wait()
            await stream.aclose()

            # A change made through node 2 while the quiet session has no stream: kept for the
            # next one, which opens on node 1.
            await quiet.result(
                "tools/call", {"name": "touch", "arguments": {"uri": "note://x"}}, fleet.node_url(2)
            )
            stream = await open_stream(http, quiet, fleet.node_url(1))
            try:
                async with asyncio.timeout(60):
                    await hears(stream, CHANGED)
            finally:
                await stream.aclose()

            # The listening session reconnects its stream to node 1 (its claim on the dead home is
            # void once the home's heartbeat lapsed), and hears a change made through node 2.
            async with asyncio.timeout(60):
                stream = await open_stream(http, listening, fleet.node_url(1))
            try:
                await listening.result(
                    "tools/call", {"name": "touch", "arguments": {"uri": "note://x"}}, fleet.node_url(2)
                )
                async with asyncio.timeout(60):
                    await hears(stream, CHANGED)
            finally:
                await stream.aclose()

    asyncio.run(main())
