"""A client going away cancels what it asked for, over real HTTP, whichever ASGI server serves the app.

"The server MUST treat a client disconnect as cancellation of that request" (2026-07-28). Served by
mcpkit's own uvicorn protocol (``mcpkit run --transport http``), the app is called back when the
connection is lost and keeps no task per waiting request; served by another ASGI server (plain
uvicorn, with its httptools or its h11 parser), a task of the request's own waits for
``http.disconnect``. Both are driven here the same way: a tool call left waiting whose client goes
away, and a ``subscriptions/listen`` stream whose client hangs up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import Client, TextContent

from ..conftest import free_port, http_server
from ._client import run
from ._raw import ERAS, MODERN

pytestmark = pytest.mark.e2e

SERVER = '''
import asyncio, json, sys

from mcpkit import Server

server = Server("disconnect", "1.0.0")
calls = {"started": 0, "cancelled": 0}


@server.tool
async def hang() -> str:
    """Wait until cancelled."""
    calls["started"] += 1
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        calls["cancelled"] += 1
        raise
    return "never"


@server.tool
async def state() -> str:
    """The calls so far, the listen streams open, and the disconnect watchers running."""
    watchers = [
        task for task in asyncio.all_tasks()
        if getattr(task.get_coro(), "__qualname__", "").endswith("_watch_disconnect")
    ]
    return json.dumps({**calls, "listeners": len(server.listeners), "watchers": len(watchers)})


if __name__ == "__main__":  # served by plain uvicorn: python SCRIPT PORT httptools|h11
    import uvicorn

    uvicorn.run(server.http_app(), host="127.0.0.1", port=int(sys.argv[1]), http=sys.argv[2],
                log_level="warning")
'''

#: Which server serves the app: mcpkit's own (called back on disconnect), or plain uvicorn.
SERVERS = ["mcpkit", "uvicorn-httptools", "uvicorn-h11"]
#: How long a step that must happen is waited for: a busy machine is slow, and a step that never
#: happens still fails its test.
PATIENCE = 60.0


@pytest.fixture(scope="module", params=SERVERS)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    script = tmp_path_factory.mktemp("disconnect") / "disconnect_server.py"
    script.write_text(SERVER)
    port = free_port()
    kind: str = request.param
    if kind == "mcpkit":
        command = [
            sys.executable,
            "-m",
            "mcpkit",
            "run",
            str(script),
            "--transport",
            "http",
            "--port",
            str(port),
        ]
    else:
        command = [sys.executable, str(script), str(port), kind.split("-")[1]]
    for url in http_server(command, port, 120):
        yield kind, url


async def state(url: str) -> dict[str, int]:
    async with Client(url, protocol_version=MODERN) as client:
        block = (await client.call_tool("state")).content[0]
        assert isinstance(block, TextContent)
        figures: dict[str, int] = json.loads(block.text)
        return figures


async def until(url: str, check: Any) -> dict[str, int]:
    """The server's state once *check* holds of it (or PATIENCE has passed: the caller's assertion fails)."""
    deadline = time.monotonic() + PATIENCE
    while True:
        figures = await state(url)
        if check(figures) or time.monotonic() > deadline:
            return figures
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("version", ERAS)
def test_a_waiting_call_whose_client_goes_away_is_cancelled(served: tuple[str, str], version: str) -> None:
    """The client cancels a call that waits (in 2026-07-28 by closing its connection: the server's
    only news of it); the tool is cancelled. A 2026-07-28 request served by mcpkit's own protocol
    keeps no watcher task while it waits."""
    kind, url = served

    async def main() -> None:
        before = await state(url)
        async with Client(url, protocol_version=version) as client:
            call = asyncio.ensure_future(client.call_tool("hang"))
            during = await until(url, lambda s: s["started"] > before["started"])
            assert during["started"] == before["started"] + 1
            if version == MODERN:
                assert during["watchers"] == (0 if kind == "mcpkit" else 1)
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
        after = await until(url, lambda s: s["cancelled"] > before["cancelled"])
        assert after["cancelled"] == before["cancelled"] + 1 and after["watchers"] == 0

    run(main())


def test_a_listen_stream_whose_client_hangs_up_is_ended(served: tuple[str, str]) -> None:
    """A ``subscriptions/listen`` POST whose client closes the connection: its listener is gone
    (kept without a watcher task by mcpkit's own protocol)."""
    kind, url = served
    port = int(url.split(":")[2].split("/")[0])
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"notifications": {"toolsListChanged": True}, "_meta": meta}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params}
    ).encode()
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        f"Mcp-Method: subscriptions/listen\r\nContent-Length: {len(body)}\r\n\r\n"
    )

    async def main() -> None:
        before = await state(url)
        with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as sock:
            sock.sendall(head.encode() + body)
            opened = await until(url, lambda s: s["listeners"] > before["listeners"])
            assert opened["listeners"] == before["listeners"] + 1
            assert opened["watchers"] == (0 if kind == "mcpkit" else 1)
        after = await until(url, lambda s: s["listeners"] == before["listeners"])
        assert after["listeners"] == before["listeners"] and after["watchers"] == 0

    run(main())
