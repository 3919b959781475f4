"""A session's GET stream is held by one node at a time; when that node is killed, the stream opens
again on another at once (not 409 until the dead node's heartbeat lapses), two nodes asked at the
same moment do not both hold it, and list changes reach a reopened stream, or a reopened 2026-07-28
listen stream, after any number of node deaths while one node lives.

Requests go to one node directly where the test must know which node holds what; the clients here
never retry a 409.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import signal
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcpkit.fleet import claims, open_state

from .conftest import Fleet
from .test_at_most_once import revive
from .test_fleet import message
from .test_tasks import Session

CHANGED = "notifications/tools/list_changed"
TOUCH = {"name": "touch", "arguments": {"uri": "note://x"}}


@pytest.fixture
def fleet(own_fleet: Fleet) -> Fleet:
    revive(own_fleet)
    return own_fleet


async def get_stream(http: httpx.AsyncClient, session: Session, url: str) -> httpx.Response:
    """The session's GET stream on *url* (whatever the status: the caller asserts it)."""
    request = http.build_request("GET", url, headers={**session.headers(), "accept": "text/event-stream"})
    return await http.send(request, stream=True)


def kill(fleet: Fleet, index: int) -> None:
    fleet.nodes[index].send_signal(signal.SIGKILL)
    fleet.nodes[index].wait()


async def methods(response: httpx.Response) -> AsyncIterator[str]:
    """The methods of the messages on an event stream, as they come."""
    async for line in response.aiter_lines():
        if line.startswith("data: ") and line[6:]:
            yield json.loads(line[6:]).get("method", "")


class Heard:
    """The list changes a stream carried, counted as they come."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = asyncio.Event()

    async def read(self, response: httpx.Response) -> None:
        async for method in methods(response):
            if method == CHANGED:
                self.count += 1
                self.changed.set()


async def hear_each(touch: Any, heard: Heard, times: int) -> None:
    """Make *times* changes, one after the other, each heard before the next is made: none lost,
    and (after a moment's settling) none twice."""
    for made in range(1, times + 1):
        await touch()
        async with asyncio.timeout(60):
            while heard.count < made:
                heard.changed.clear()
                await heard.changed.wait()
    await asyncio.sleep(1)  # a second copy of any change would have come by now
    assert heard.count == times


def test_a_dead_holders_stream_opens_again_at_once_on_every_node(fleet: Fleet) -> None:
    async def main() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=60)) as http:
            session = await Session(http, fleet.node_url(0)).open()
            held = await get_stream(http, session, fleet.node_url(0))
            assert held.status_code == 200
            kill(fleet, 0)
            await held.aclose()
            # At once, and without a retry: through nginx, then on each surviving node directly.
            for url in (fleet.url, fleet.node_url(1), fleet.node_url(2)):
                stream = await get_stream(http, session, url)
                assert stream.status_code == 200, (url, stream.status_code)
                await stream.aclose()
                # Closed: the claim is let go, and the next GET (on another node) gets it.
                await asyncio.sleep(0.2)
            # A live holder keeps it: 409 on the other node, and through nginx.
            stream = await get_stream(http, session, fleet.node_url(1))
            try:
                assert stream.status_code == 200
                for url in (fleet.node_url(2), fleet.url, fleet.url):
                    refused = await get_stream(http, session, url)
                    assert refused.status_code == 409
                    await refused.aclose()
            finally:
                await stream.aclose()

    asyncio.run(main())


def test_two_nodes_asked_at_once_do_not_both_hold_the_stream(fleet: Fleet) -> None:
    async def main() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=60)) as http:
            for round_ in range(10):
                session = await Session(http, fleet.node_url(0)).open()
                if round_ == 9:  # the last round races for the claim of a holder that was killed
                    held = await get_stream(http, session, fleet.node_url(0))
                    assert held.status_code == 200
                    kill(fleet, 0)
                    await held.aclose()
                streams = await asyncio.gather(
                    get_stream(http, session, fleet.node_url(1)), get_stream(http, session, fleet.node_url(2))
                )
                try:
                    assert sorted(s.status_code for s in streams) == [200, 409], round_
                finally:
                    for stream in streams:
                        await stream.aclose()

    asyncio.run(main())


def test_list_changes_reach_a_get_stream_after_two_of_three_nodes_died(fleet: Fleet) -> None:
    async def main() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=60)) as http:
            session = await Session(http, fleet.node_url(0)).open()

            async def touch() -> None:
                await session.result("tools/call", TOUCH, fleet.url)  # whichever node nginx picks

            for holder in (0, 1, 2):  # the stream on node 0, then 1, then 2; each killed holding it
                stream = await get_stream(http, session, fleet.node_url(holder))
                assert stream.status_code == 200
                heard = Heard()
                reader = asyncio.ensure_future(heard.read(stream))
                try:
                    await hear_each(touch, heard, 5)
                    if holder < 2:
                        kill(fleet, holder)
                finally:
                    reader.cancel()
                    await stream.aclose()

    asyncio.run(main())


def test_list_changes_reach_a_listen_stream_after_two_of_three_nodes_died(fleet: Fleet) -> None:
    body, headers = message("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    call, call_headers = message("tools/call", TOUCH, 2)

    async def main() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=60)) as http:

            async def touch() -> None:
                response = await http.post(fleet.url, json=call, headers=call_headers)
                assert response.status_code == 200

            for node in (0, 1, 2):  # the listener on node 0, then 1, then 2; each node killed under it
                async with http.stream("POST", fleet.node_url(node), json=body, headers=headers) as stream:
                    assert stream.status_code == 200
                    heard = Heard()
                    reader = asyncio.ensure_future(heard.read(stream))
                    try:
                        await hear_each(touch, heard, 5)
                        if node < 2:
                            kill(fleet, node)
                    finally:
                        reader.cancel()

    asyncio.run(main())


def test_a_claim_is_compared_and_set_and_its_holder_judged_by_presence(redis_url: str) -> None:
    """The state operations under the claims, on a real Redis: two processes' handles, one of
    them closed as a killed process's connections are."""
    prefix = f"test:{secrets.token_hex(4)}:"

    async def main() -> None:
        a, b = open_state(redis_url, prefix=prefix), open_state(redis_url, prefix=prefix)
        await a.start()
        await b.start()
        try:
            assert await a.swap("k", None, b"a", 30) and not await b.swap("k", None, b"b", 30)
            assert not await b.swap("k", b"x", b"b", 30) and await b.get("k") == b"a"
            assert await b.swap("k", b"a", None) and await a.get("k") is None
            await a.put("node:A", b"1", 30)  # a's heartbeat, fresh
            await claims.present(a, "A")
            assert await claims.claim(a, "get", b"A", 30) is None
            assert await claims.claim(b, "get", b"B", 30) == b"A"  # alive: kept
            await a.close()  # its connections close, as the kernel closes a killed process's
            assert await claims.gone(b, "A")  # though its heartbeat has not lapsed
            assert await claims.claim(b, "get", b"B", 30) is None
            assert not await claims.refresh(b, "get", b"A", 30) and await b.get("get") == b"B"
        finally:
            await b.close()

    asyncio.run(main())
