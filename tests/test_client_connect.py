"""Connecting: the era probe's answers (over memory and real stdio), and what importing the client loads."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, Era, RPCError
from mcpkit.client.connect import ProbeAnswers
from mcpkit.transports.memory import MemoryTransport, memory_pair

from .conftest import ROOT

#: Long enough that a probe which waits it out fails the test's own deadline.
PROBE_TIMEOUT = 60.0

INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "legacy", "version": "1"},
}

Script = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]


async def scripted_server(transport: MemoryTransport, script: Script) -> list[dict[str, Any]]:
    """Answer each message with what *script* returns (``None``: no answer); return what arrived."""
    seen: list[dict[str, Any]] = []
    while True:
        try:
            message = json.loads(await transport.receive())
        except EOFError:
            await transport.aclose()
            return seen
        seen.append(message)
        answer = await script(message)
        if answer is not None:
            await transport.send(json.dumps({"jsonrpc": "2.0", **answer}).encode())


def legacy(probe_answer: dict[str, Any]) -> Script:
    """A handshake-era server that answers ``server/discover`` with *probe_answer* (plus the probe's
    id where *probe_answer* has no ``id`` of its own)."""

    async def script(message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("method") == "server/discover":
            return {"id": message["id"], **probe_answer}
        if message.get("method") == "initialize":
            return {"id": message["id"], "result": INITIALIZED}
        if message.get("method") == "tools/list":
            return {"id": message["id"], "result": {"tools": []}}
        return None

    return script


async def connect(script: Script, **options: Any) -> tuple[Client, asyncio.Task[list[dict[str, Any]]]]:
    ours, theirs = memory_pair()
    server = asyncio.ensure_future(scripted_server(theirs, script))
    client = Client(ours, probe_timeout=PROBE_TIMEOUT, **options)
    await client.connect()
    return client, server


@pytest.mark.parametrize(
    "probe_answer",
    [
        {"error": {"code": -32601, "message": "Method not found"}},
        {"id": None, "error": {"code": -32600, "message": "Invalid Request"}},
        {"id": "server-error", "error": {"code": -32600, "message": "Bad Request: Missing session ID"}},
        {"id": 999, "error": {"code": -32000, "message": "Server not initialized"}},
    ],
    ids=["own-id", "null-id", "foreign-string-id", "foreign-number-id"],
)
def test_any_error_to_the_probe_means_initialize_at_once(probe_answer: dict[str, Any]) -> None:
    async def main() -> None:
        client, server = await connect(legacy(probe_answer))
        assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-11-25"
        assert client.server_info is not None and client.server_info.name == "legacy"
        assert await client.list_tools() == []
        await client.aclose()
        methods = [m.get("method") for m in await server]
        assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]

    # Far below PROBE_TIMEOUT: an error answer that was not taken as the probe's would time out here.
    asyncio.run(asyncio.wait_for(main(), 10))


def test_unsupported_version_retries_the_probe_with_an_advertised_one() -> None:
    async def script(message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("method") != "server/discover":
            return None
        asked = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        if asked != "2026-07-28":
            raise AssertionError(asked)
        return {
            "id": None,  # still the probe's: nothing else is pending
            "error": {"code": -32022, "message": "Unsupported", "data": {"supported": ["2099-01-01"]}},
        }

    async def main() -> None:
        with pytest.raises(Exception, match="none of which mcpkit speaks"):
            await connect(script)

    asyncio.run(asyncio.wait_for(main(), 10))


def test_only_the_probe_adopts_errors_that_name_no_pending_request() -> None:
    async def main() -> None:
        ours, theirs = memory_pair()
        probe = ProbeAnswers(ours)
        stray = b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}'
        await theirs.send(stray)
        assert await probe.receive() == stray  # no probe pending: passed as it is
        with probe.expecting(7):
            await theirs.send(stray)
            assert json.loads(await probe.receive())["id"] == 7
            notification = b'{"jsonrpc": "2.0", "method": "notifications/message", "params": {"error": 1}}'
            await theirs.send(notification)
            assert await probe.receive() == notification  # not an answer: untouched
        await theirs.send(stray)
        assert await probe.receive() == stray

    asyncio.run(asyncio.wait_for(main(), 5))


def test_an_error_to_initialize_is_raised() -> None:
    async def script(message: dict[str, Any]) -> dict[str, Any] | None:
        if "id" in message:
            return {"id": message["id"], "error": {"code": -32602, "message": "no such version"}}
        return None

    async def main() -> None:
        with pytest.raises(RPCError, match="no such version"):
            await connect(script)

    asyncio.run(asyncio.wait_for(main(), 10))


def test_a_stdio_server_that_answers_the_probe_with_a_null_id(tmp_path: Path) -> None:
    script = tmp_path / "legacy.py"
    script.write_text(
        textwrap.dedent("""
        import json, sys
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("method") == "initialize":
                result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "null-id", "version": "0"}}
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
            elif msg.get("method") == "tools/list":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
            elif "id" in msg:  # it cannot tell what it refuses, so it names no request
                error = {"code": -32600, "message": "Invalid Request"}
                print(json.dumps({"jsonrpc": "2.0", "id": None, "error": error}), flush=True)
    """)
    )

    async def main() -> float:
        started = time.monotonic()
        async with Client([sys.executable, str(script)], probe_timeout=PROBE_TIMEOUT) as client:
            elapsed = time.monotonic() - started
            assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-06-18"
            assert await client.list_tools() == []
        return elapsed

    elapsed = asyncio.run(asyncio.wait_for(main(), PROBE_TIMEOUT + 30))
    assert elapsed < PROBE_TIMEOUT / 2, f"connecting took {elapsed:.1f} s: the probe waited for its timeout"


#: A modern stdio server that takes a second to start: it answers server/discover and tools/list,
#: and refuses the handshake naming 2026-07-28 (as the official SDK's server does).
SLOW_MODERN = textwrap.dedent("""
        import json, sys, time
        time.sleep(1.0)  # a heavy import
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("method") == "server/discover":
                result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
            elif msg.get("method") == "initialize":
                error = {"code": -32022, "message": "this connection speaks 2026-07-28",
                         "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}), flush=True)
            elif msg.get("method") == "tools/list":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
""")


def test_a_modern_server_slower_than_the_probe_is_still_reached_in_its_era(tmp_path: Path) -> None:
    """A stdio server still importing when the probe times out answers ``server/discover`` late,
    then refuses the fallback ``initialize`` (-32022, naming 2026-07-28), as the official SDK's
    server does on a loaded machine: the client probes again rather than failing."""
    script = tmp_path / "slow_modern.py"
    script.write_text(SLOW_MODERN)

    async def main() -> None:
        async with Client([sys.executable, str(script)], probe_timeout=0.2) as client:  # meant to run out
            assert client.era is Era.STATELESS and client.protocol_version == "2026-07-28"
            assert await client.list_tools() == []

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_client_forced_to_2026_07_28_waits_for_a_server_still_starting(tmp_path: Path) -> None:
    """Forced to a stateless revision there is no fallback, so a probe unanswered within
    ``probe_timeout`` is no sign of a legacy server: a stdio server still importing (slow on a busy
    machine) is waited for as any request is, not given up on with 'did not answer server/discover'."""
    script = tmp_path / "slow_modern.py"
    script.write_text(SLOW_MODERN)

    async def main() -> None:
        command = [sys.executable, str(script)]
        async with Client(command, protocol_version="2026-07-28", probe_timeout=0.2) as client:
            assert client.protocol_version == "2026-07-28"
            assert await client.list_tools() == []

    asyncio.run(asyncio.wait_for(main(), 60))


def test_importing_the_client_loads_no_server_side() -> None:
    # mcpkit/__init__.py imports the server too, so the client package is imported under a bare
    # parent package: what it loads is what it needs.
    code = textwrap.dedent(f"""
        import json, sys, types
        parent = types.ModuleType("mcpkit")
        parent.__path__ = [{str(ROOT / "src" / "mcpkit")!r}]
        sys.modules["mcpkit"] = parent
        import mcpkit.client
        print(json.dumps(sorted(sys.modules)))
    """)
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    server_side = ("mcpkit.server", "mcpkit.lowlevel", "mcpkit.context", "mcpkit.kernel")
    assert [m for m in loaded if m.startswith(server_side)] == []
    assert [m for m in loaded if m.split(".")[0] in ("httpx", "httpcore", "anyio", "yaml")] == []


@pytest.mark.e2e
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25", "2024-11-05"])
def test_headers_given_to_the_client_reach_every_http_request(version: str) -> None:
    """``Client(url, headers=...)``: an ``Authorization`` header, say, on every request of both eras
    and of HTTP+SSE (real HTTP on 127.0.0.1); the protocol's own headers cannot be overridden."""
    import uvicorn

    from mcpkit import Server

    from .conftest import free_port

    server = Server("headers", "1")

    @server.tool
    def ping() -> str:
        return "pong"

    inner = server.http_app()
    seen: list[dict[str, str]] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
        await inner(scope, receive, send)

    port = free_port()
    url = f"http://127.0.0.1:{port}/{'sse' if version == '2024-11-05' else 'mcp'}"

    async def main() -> None:
        web = uvicorn.Server(uvicorn.Config(recording, port=port, log_level="error", lifespan="on"))
        serving = asyncio.ensure_future(web.serve())
        while not web.started:  # noqa: ASYNC110 (uvicorn offers no event for it)
            await asyncio.sleep(0.01)
        try:
            async with Client(
                url,
                protocol_version=version,
                headers={"Authorization": "Bearer t0ken"},
            ) as client:
                assert client.protocol_version == version
                assert [t.name for t in await client.list_tools()] == ["ping"]
        finally:
            web.should_exit = True
            await serving

    asyncio.run(main())
    assert len(seen) >= 2
    for headers in seen:
        assert headers.get("authorization") == "Bearer t0ken"
    for name in ("MCP-Protocol-Version", "mcp-session-id", "Mcp-Param-Region"):
        with pytest.raises(ValueError, match="set by the protocol"):
            Client(url, headers={name: "x"})


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("version", "endpoint"), [("2026-07-28", "mcp"), ("2025-11-25", "mcp"), ("2024-11-05", "sse")]
)
def test_an_app_mounted_under_a_prefix_serves_there(version: str, endpoint: str) -> None:
    """``http_app()`` mounted by Starlette under ``/api``: served at ``/api/mcp`` (and HTTP+SSE at
    ``/api/sse``, whose endpoint event names ``/api/messages``), over real HTTP."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from mcpkit import Server

    from .conftest import free_port

    server = Server("mounted", "1")

    @server.tool
    def ping() -> str:
        return "pong"

    app = Starlette(routes=[Mount("/api", app=server.http_app())])
    port = free_port()

    async def main() -> None:
        web = uvicorn.Server(uvicorn.Config(app, port=port, log_level="error", lifespan="off"))
        serving = asyncio.ensure_future(web.serve())
        while not web.started:  # noqa: ASYNC110 (uvicorn offers no event for it)
            await asyncio.sleep(0.01)
        try:
            url = f"http://127.0.0.1:{port}/api/{endpoint}"
            async with Client(url, protocol_version=version) as client:
                assert client.protocol_version == version
                result = await client.call_tool("ping")
                assert result.content[0].text == "pong"  # type: ignore[union-attr]
        finally:
            web.should_exit = True
            await serving

    asyncio.run(main())
