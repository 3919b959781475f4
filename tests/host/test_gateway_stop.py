"""A gateway served over HTTP stops cleanly: in the caller's own loop, when its task is cancelled,
uvicorn shuts down as on SIGINT, so its listening socket and accepted connections are closed then,
not left for the garbage collector (whose ResourceWarning would fail some later test); as a process,
SIGTERM drains its long-lived streams first."""

from __future__ import annotations

import asyncio
import gc
import json
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import httpx
import pytest

from mcpkit import Client
from mcpkit._errors import MCPError
from mcpkit.gateway import Gateway
from mcpkit.transports.http.server.serving import serve_here

from ..conftest import free_port
from ._util import config, run, toolbox

pytestmark = pytest.mark.e2e


def _refused(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_cancelling_the_served_gateway_closes_its_sockets(tmp_path: Path, revision: str) -> None:
    cfg = config({"box": toolbox()}, tmp_path)

    async def main() -> None:
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        async with Gateway(cfg) as gateway:
            serving = asyncio.ensure_future(
                serve_here(gateway.server.http_app(), host="127.0.0.1", port=port)
            )
            deadline = time.monotonic() + 60
            while True:  # uvicorn starts in this loop, after the first attempt
                try:
                    async with Client(url, protocol_version=revision) as client:
                        assert "box__pid" in [t.name for t in await client.list_tools()]
                        break
                except MCPError:
                    assert time.monotonic() < deadline
                    await asyncio.sleep(0.2)
            # A connection the client holds open while the server stops: uvicorn closes it.
            held = await asyncio.open_connection("127.0.0.1", port)
            serving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await serving
            assert _refused(port)  # the listening socket is closed, not merely idle
            assert await asyncio.wait_for(held[0].read(), 30) == b""  # and the held one sees EOF
            held[1].close()
            await held[1].wait_closed()

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        run(main(), 120)
        gc.collect()  # what is left unclosed warns here, in this test, not in a later one


def test_sigterm_ends_the_served_gateways_listen_streams_gracefully(tmp_path: Path) -> None:
    """`mcpkit gateway --transport http` drains on SIGTERM as `mcpkit run` does: a 2026-07-28
    `subscriptions/listen` stream gets its final result (the graceful close) before the process exits."""
    path = tmp_path / "gateway.json"
    audit = {"path": str(tmp_path / "audit.jsonl")}
    path.write_text(json.dumps({"mcpServers": {"box": toolbox()}, "mcpkit": {"audit": audit}}))
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "mcpkit",
        "gateway",
        str(path),
        "--transport",
        "http",
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "drain-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"notifications": {"toolsListChanged": True}, "_meta": meta}
    body = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params}
    headers = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
        "accept": "application/json, text/event-stream",
    }
    try:
        deadline = time.monotonic() + 60
        while _refused(port):
            assert proc.poll() is None and time.monotonic() < deadline, "the gateway did not start"
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx.stream("POST", url, json=body, headers=headers, timeout=30) as stream:
            lines = stream.iter_lines()
            assert "acknowledged" in next(line for line in lines if line.startswith("data: "))
            proc.send_signal(signal.SIGTERM)
            final = json.loads(next(line for line in lines if line.startswith("data: "))[6:])
            assert final["id"] == 1 and "result" in final
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)  # uvicorn exits by the signal it caught
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
