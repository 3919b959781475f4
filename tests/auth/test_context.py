"""``ctx.auth``: a handler of a protected ``mcpkit run`` server sees the caller's verified identity,
async or sync (a worker thread), in both eras, each request that of its own POST; ``None`` where
nothing is verified (stdio)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import httpx
import pytest

from mcpkit import Client, TextContent

from ._serve import SERVER, protected
from .issuer import TestIssuer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def url(issuer: TestIssuer) -> Iterator[str]:
    with protected(issuer.url, "--auth-scope", "mcp") as served:
        yield served


async def texts(client: Client, *tools: str) -> list[str]:
    answers = []
    for tool in tools:
        content = (await client.call_tool(tool, {})).content[0]
        assert isinstance(content, TextContent)
        answers.append(content.text)
    return answers


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_async_and_sync_handlers_see_the_caller(url: str, issuer: TestIssuer, version: str) -> None:
    token = issuer.mint(url, scope="mcp notes:read", subject="alice", client_id="notes-app")

    async def go() -> list[str]:
        async with Client(
            url, protocol_version=version, headers={"Authorization": f"Bearer {token}"}
        ) as client:
            return await texts(client, "whoami", "whoami_sync")

    assert asyncio.run(go()) == ["alice via notes-app with mcp notes:read"] * 2


def test_each_post_of_a_session_sees_its_own_token(url: str, issuer: TestIssuer) -> None:
    accept = {"Accept": "application/json, text/event-stream"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    first = issuer.mint(url, scope="mcp", subject="alice")
    opened = httpx.post(url, json=init, headers={"Authorization": f"Bearer {first}", **accept}, timeout=60)
    session = {
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-11-25",
        **accept,
    }
    httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
               headers={"Authorization": f"Bearer {first}", **session}, timeout=60)  # fmt: skip

    def call(token: str, tool: str) -> str:
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {}}}
        answer = httpx.post(
            url, json=body, headers={"Authorization": f"Bearer {token}", **session}, timeout=60
        )
        return str(answer.json()["result"]["content"][0]["text"])

    assert call(first, "whoami_sync") == "alice via test-client with mcp"
    wider = issuer.mint(url, scope="mcp extra", subject="alice", key=issuer.ec)  # refreshed, more scope
    assert call(wider, "whoami_sync") == "alice via test-client with extra mcp"
    assert call(wider, "whoami") == "alice via test-client with extra mcp"


def test_nothing_is_verified_over_stdio() -> None:
    async def go() -> list[str]:
        async with Client([sys.executable, "-m", "mcpkit", "run", str(SERVER)]) as client:
            return await texts(client, "whoami", "whoami_sync")

    assert asyncio.run(go()) == ["anonymous", "anonymous"]
