"""The era probe against real handshake-era Streamable HTTP servers: no stall before ``initialize``.

Both refuse the 2026-07-28 ``server/discover`` probe with an HTTP 400 whose JSON-RPC error names no
request of ours: the official Python SDK 1.30.0 (FastMCP) answers ``"id": "server-error"`` ("Missing
session ID"), the TypeScript SDK (its reference ``server-everything``, pinned in
``everything/package.json`` with the Node 24 it runs on) ``"id": null`` ("Server not initialized").
Either is "any other error", so the client must fall back to ``initialize`` at once. The clients
here wait up to ``PROBE_TIMEOUT`` seconds for a probe that goes unanswered, so a regression (the
answer dropped as "an answer to no pending request") takes at least that long and fails the
connect-time check with a message saying so; a working client connects in well under a second.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpkit import Client, Era

from ..conftest import free_port, http_server, node_project
from .test_official_sdk import PEERS
from .venvs import ensure_venv

pytestmark = [pytest.mark.e2e, pytest.mark.interop]

EVERYTHING = Path(__file__).parent / "everything"
PROBE_TIMEOUT = 120.0
#: Connecting may take at most this share of PROBE_TIMEOUT: far above a real connect (tens of
#: milliseconds, a few seconds on a loaded machine), far below a stalled one (PROBE_TIMEOUT and more).
STALL_SHARE = 0.5


@pytest.fixture(scope="module")
def sdk1_url() -> Iterator[str]:
    python = ensure_venv("mcp1", "mcp==1.30.0")
    port = free_port()
    yield from http_server([str(python), str(PEERS / "official_server.py"), "--http", str(port)], port, 20)


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    """``server-everything`` over Streamable HTTP, installed with ``npm ci`` from the lock file if missing."""
    node, entry = node_project(EVERYTHING, "@modelcontextprotocol/server-everything/dist/index.js")
    port = free_port()
    # server-everything takes its port from the environment only; env(1) execs node with it set.
    yield from http_server(["env", f"PORT={port}", node, entry, "streamableHttp"], port, 30)


async def connect_and_list(url: str, **options: object) -> tuple[float, Client, list[str]]:
    """Seconds to connect, the client (closed again), and the names of the server's tools."""
    client = Client(url, **options)  # type: ignore[arg-type]
    started = time.monotonic()
    await client.connect()
    elapsed = time.monotonic() - started
    try:
        names = [tool.name for tool in await client.list_tools()]
    finally:
        await client.aclose()
    return elapsed, client, names


def check_no_stall(url: str, expected_tools: set[str]) -> None:
    async def main() -> None:
        await connect_and_list(url, protocol_version="2025-11-25")  # warm: imports, the server's JIT
        forced, _, _ = await connect_and_list(url, protocol_version="2025-11-25")
        probed, client, names = await connect_and_list(url, probe_timeout=PROBE_TIMEOUT)
        assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-11-25"
        assert expected_tools <= set(names)
        assert probed < PROBE_TIMEOUT * STALL_SHARE, (
            f"connecting took {probed:.1f} s (a forced 2025-11-25 took {forced:.2f} s): the server's "
            f"refusal of server/discover was not taken as its answer, and the probe waited for "
            f"probe_timeout={PROBE_TIMEOUT:g} s"
        )

    # Leaves room for a stalled probe to be measured and reported, not cut short.
    asyncio.run(asyncio.wait_for(main(), PROBE_TIMEOUT * 2 + 30))


def test_official_sdk1_http_server_gets_initialize_at_once(sdk1_url: str) -> None:
    check_no_stall(sdk1_url, {"get_weather", "add", "echo", "fail"})


def test_typescript_everything_server_gets_initialize_at_once(everything_url: str) -> None:
    check_no_stall(everything_url, {"echo", "get-sum"})


def test_typescript_everything_server_serves_calls_after_the_fallback(everything_url: str) -> None:
    async def main() -> None:
        async with Client(everything_url, probe_timeout=PROBE_TIMEOUT) as client:
            assert client.server_info is not None and client.server_info.name
            echoed = await client.call_tool("echo", {"message": "héllo"})
            assert echoed.is_error is not True and "héllo" in str(echoed.content)
            summed = await client.call_tool("get-sum", {"a": 2, "b": 40})
            assert "42" in str(summed.content)

    asyncio.run(asyncio.wait_for(main(), PROBE_TIMEOUT * 2))
