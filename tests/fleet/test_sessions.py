"""The handshake era across a fleet: sessions, back-channels and streams on whichever node.

nginx takes turns over three nodes, so consecutive requests of one session land on different
nodes: none of them may answer "Session not found", a server request sent from one node is
answered through another, and what belongs on the session's GET stream reaches the node holding it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpkit import Client

from .conftest import Fleet

VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25"]


def text_of(result: Any) -> str:
    text: str = result.content[0].text
    return text


@pytest.mark.parametrize("version", VERSIONS)
def test_a_session_is_served_by_every_node(fleet: Fleet, version: str) -> None:
    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"value": params["message"][:-1]}}

    async def main() -> None:
        async with Client(fleet.url, protocol_version=version, elicitation=answer) as client:
            pids = {text_of(await client.call_tool("whoami")) for _ in range(6)}
            assert len(pids) == 3  # one session, three nodes
            # Each question goes out on its POST's stream, from one node; the answers are POSTed
            # and land on the others.
            for _ in range(3 if version != "2025-03-26" else 0):  # elicitation came in 2025-06-18
                assert text_of(await client.call_tool("ask")).startswith("First+Second@")
            assert [t.name for t in await client.list_tools()][:2] == ["whoami", "echo"]

    asyncio.run(main())


def test_notifications_reach_the_get_stream_wherever_it_is_held(fleet: Fleet) -> None:
    async def main() -> None:
        heard: list[tuple[str, Any]] = []
        changed = asyncio.Event()

        async def on_notification(method: str, params: Any) -> None:
            heard.append((method, params))
            if {m for m, _ in heard} >= {
                "notifications/resources/updated",
                "notifications/tools/list_changed",
            }:
                changed.set()

        async with Client(
            fleet.url, protocol_version="2025-11-25", on_notification=on_notification
        ) as client:
            await client.subscribe_resource("note://a")  # on one node
            for _ in range(3):  # a change made through each node in turn
                await client.call_tool("touch", {"uri": "note://a"})
            async with asyncio.timeout(60):
                await changed.wait()
            updates = [p for m, p in heard if m == "notifications/resources/updated"]
            assert updates and all(p == {"uri": "note://a"} for p in updates)
            await client.unsubscribe_resource("note://a")  # on another node: it ends everywhere
            await asyncio.sleep(0.3)
            before = len([m for m, _ in heard if m == "notifications/resources/updated"])
            for _ in range(3):
                await client.call_tool("touch", {"uri": "note://a"})
            await asyncio.sleep(0.5)
            assert len([m for m, _ in heard if m == "notifications/resources/updated"]) == before

    asyncio.run(main())


def test_a_deleted_session_is_gone_on_every_node(fleet: Fleet) -> None:
    async def main() -> None:
        client = Client(fleet.url, protocol_version="2025-06-18")
        async with client:
            await client.call_tool("whoami")
            session_id = client._transport.session_id  # type: ignore[attr-defined]
        body = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
        headers = {"mcp-session-id": session_id, "accept": "application/json, text/event-stream"}
        # The other nodes hear of the DELETE through Redis, a moment later (longer on a busy
        # machine): within a few seconds, three requests in a row (one per node, round-robin)
        # must all find the session gone.
        async with httpx.AsyncClient(timeout=30) as http, asyncio.timeout(60):
            statuses: list[int] = []
            while statuses[-3:] != [404, 404, 404]:
                statuses.append((await http.post(fleet.url, json=body, headers=headers)).status_code)
                await asyncio.sleep(0.05)
            assert set(statuses) <= {200, 404}

    asyncio.run(main())


def test_the_official_sdk_client_through_the_fleet(fleet: Fleet) -> None:
    """mcp 2.x's Streamable HTTP client, a session of it on every node."""
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> None:
        async with (
            streamable_http_client(fleet.url) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            pids = set()
            for _ in range(6):
                result = await session.call_tool("whoami", {})
                pids.add(result.content[0].text)  # type: ignore[union-attr]
            assert len(pids) == 3
            tools = await session.list_tools()
            assert "ask" in {t.name for t in tools.tools}

    asyncio.run(main())


def test_http_sse_posts_reach_the_node_holding_the_stream(fleet: Fleet) -> None:
    """2024-11-05 HTTP+SSE: the session lives where its one stream is; POSTs landing on the other
    nodes are forwarded there, and every answer comes back on that stream."""

    async def main() -> None:
        url = fleet.url.removesuffix("/mcp") + "/sse"
        async with Client(url, protocol_version="2024-11-05") as client:
            pids = {text_of(await client.call_tool("whoami")) for _ in range(6)}
            assert len(pids) == 1  # six POSTs through nginx, one node serving them
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"

    asyncio.run(main())
