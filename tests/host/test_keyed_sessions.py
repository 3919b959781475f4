"""A 2026-07-28 caller that can be asked questions keeps one upstream session of a handshake-era
server across its calls, named by its authorization subject or by ``_meta["io.mcpkit/session"]``:
the upstream process is not restarted per call, its in-memory state carries over, its questions
reach the call in flight, and the sessions are bounded and expire when idle."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit._errors import MCPError
from mcpkit.gateway import Gateway
from mcpkit.host._forward import SESSION_KEY
from mcpkit.transports.http.server.serving import serve_here

from ..conftest import free_port, http_server
from ..interop.venvs import ensure_venv
from ._util import SERVERS, config, run, toolbox
from .test_gateway import gateway, write_config

pytestmark = pytest.mark.e2e


async def _accept(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


async def _call(client: Client, name: str, key: str | None = None) -> str:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if key is not None:
        params["_meta"] = {SESSION_KEY: key}
    result = await client.request("tools/call", params)
    assert not result.get("isError"), result
    return str(result["content"][0]["text"])


async def _wait_for(url: str, tool: str) -> None:
    deadline = time.monotonic() + 60
    while True:  # the port accepts before the servers behind it are connected
        try:
            async with Client(url) as client:
                if tool in [t.name for t in await client.list_tools()]:
                    return
        except MCPError:  # not listening yet: uvicorn starts in the same loop, after this
            pass
        assert time.monotonic() < deadline
        await asyncio.sleep(0.2)


@pytest.fixture(scope="module")
def sdk1_gateway(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``mcpkit gateway --transport http`` in front of the official SDK 1.30.0 counter server."""
    mcp1 = ensure_venv("mcp1", "mcp==1.30.0")
    tmp_path = tmp_path_factory.mktemp("sdk1")
    counter = {
        "command": str(mcp1),
        "args": [str(SERVERS / "sdk_counter.py")],
        "protocolVersion": "2025-06-18",
    }
    path = write_config(tmp_path, {"c": counter})
    port = free_port()
    yield from http_server(gateway(path, "--transport", "http", "--port", str(port)), port, 60)


def test_a_keyed_2026_caller_keeps_its_upstream_session(sdk1_gateway: str) -> None:
    """State made in call 1 is there in call 2 (one process); the upstream's question reaches the
    call in flight each time; another key has a session of its own; an unkeyed call still gets a
    session for itself alone."""

    async def main() -> None:
        await _wait_for(sdk1_gateway, "c__bump")
        async with Client(sdk1_gateway, elicitation=_accept) as client:
            assert client.protocol_version == "2026-07-28"
            first = [(await _call(client, "c__bump", "alice")).split() for _ in range(3)]
            assert [count for count, _, _ in first] == ["1", "2", "3"]
            assert {pid for _, pid, _ in first} == {first[0][1]}
            assert {answer for _, _, answer in first} == {"accept"}
            count, pid = (await _call(client, "c__peek", "alice")).split()
            assert (count, pid) == ("3", first[0][1])
            other = (await _call(client, "c__bump", "bob")).split()
            assert other[0] == "1" and other[1] != pid
            alone = (await _call(client, "c__bump")).split()
            assert alone[0] == "1" and alone[1] not in (pid, other[1])
            assert (await _call(client, "c__bump", "alice")).split()[:2] == ["4", pid]

    run(main(), 180)


def test_a_handshake_caller_keeps_its_connections_session(sdk1_gateway: str) -> None:
    """The handshake era as before: the caller's connection owns its session, key or none."""

    async def main() -> None:
        await _wait_for(sdk1_gateway, "c__bump")
        async with Client(sdk1_gateway, protocol_version="2025-11-25", elicitation=_accept) as client:
            runs = [(await _call(client, "c__bump")).split() for _ in range(2)]
            assert [count for count, _, _ in runs] == ["1", "2"]
            assert runs[0][1] == runs[1][1]

    run(main(), 180)


def test_keyed_sessions_are_bounded_and_expire(tmp_path: Path) -> None:
    """At most ``maxSessions`` per server (an idle one of another key is closed to make room), and
    one unused for ``sessionIdleTimeout`` is closed: measured by the pool's clock, here a fake one."""
    cfg = config(
        {"box": toolbox(protocolVersion="2025-06-18", maxSessions=2, sessionIdleTimeout=60)}, tmp_path
    )
    now = [1000.0]

    async def main() -> None:
        gateway = Gateway(cfg)
        port = free_port()
        async with gateway:
            pool = gateway.upstreams["box"].pool
            pool.clock = lambda: now[0]
            serving = asyncio.ensure_future(
                serve_here(gateway.server.http_app(), host="127.0.0.1", port=port)
            )
            try:
                url = f"http://127.0.0.1:{port}/mcp"
                await _wait_for(url, "box__pid")
                async with Client(url, elicitation=_accept) as client:
                    a = await _call(client, "box__pid", "a")
                    assert await _call(client, "box__pid", "a") == a
                    b = await _call(client, "box__pid", "b")
                    assert b != a and len(pool) == 2
                    c = await _call(client, "box__pid", "c")  # full: a's, the oldest idle, goes
                    assert len(pool) == 2 and c not in (a, b)
                    assert await _call(client, "box__pid", "b") == b
                    now[0] += 61  # b and c idle too long
                    a_again = await _call(client, "box__pid", "a")
                    assert a_again not in (a, b, c)
                    assert [s.owner for s in pool.sessions] == [("key", "a")]
            finally:
                serving.cancel()
                await asyncio.gather(serving, return_exceptions=True)

    run(main(), 120)
