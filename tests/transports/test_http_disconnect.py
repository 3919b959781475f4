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

from .._held import HeldTransport, held_protocol
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
async def nap() -> str:
    """Wait a moment, then answer."""
    await asyncio.sleep(0.01)
    return "rested"


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


def stateless_post(method: str, params: dict[str, Any], request_id: int = 1) -> bytes:
    """A whole 2026-07-28 POST, as bytes on the wire (``Mcp-Name``: the tool's, for a call)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
    body = json.dumps(message).encode()
    name = f"Mcp-Name: {params['name']}\r\n" if method == "tools/call" else ""
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        f"Mcp-Method: {method}\r\n{name}Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def read_json_answer(sock: socket.socket) -> dict[str, Any]:
    """One response with a Content-Length, read from *sock*: its JSON body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536) or pytest.fail(f"the server closed the connection: {data!r}")
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(
        next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")).split(b":")[
            1
        ]
    )
    while len(body) < length:
        body += sock.recv(65536) or pytest.fail(f"the server closed the connection: {data!r}")
    answer: dict[str, Any] = json.loads(body)
    return answer


def port_of(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def test_a_call_whose_client_hangs_up_at_once_is_cancelled(served: tuple[str, str]) -> None:
    """The request and the hang-up come together (the server reads the end of the connection right
    behind the request): the tool is cancelled all the same."""
    _, url = served

    async def main() -> None:
        before = await state(url)
        with socket.create_connection(("127.0.0.1", port_of(url)), timeout=PATIENCE) as sock:
            sock.sendall(stateless_post("tools/call", {"name": "hang", "arguments": {}}))
            sock.shutdown(socket.SHUT_RDWR)
        after = await until(url, lambda s: s["cancelled"] > before["cancelled"])
        assert after["started"] == before["started"] + 1 and after["cancelled"] == before["cancelled"] + 1

    run(main())


def test_a_kept_alive_connection_cancels_only_its_waiting_request(served: tuple[str, str]) -> None:
    """One connection: a call that waits and is answered, then one that waits and whose client
    goes away. The first, answered, is not cancelled by the hang-up; the second is."""
    _, url = served

    async def main() -> None:
        before = await state(url)
        with socket.create_connection(("127.0.0.1", port_of(url)), timeout=PATIENCE) as sock:
            sock.sendall(stateless_post("tools/call", {"name": "nap", "arguments": {}}, 1))
            assert read_json_answer(sock)["result"]["content"][0]["text"] == "rested"
            sock.sendall(stateless_post("tools/call", {"name": "hang", "arguments": {}}, 2))
            await until(url, lambda s: s["started"] > before["started"])
        after = await until(url, lambda s: s["cancelled"] > before["cancelled"])
        assert after["started"] == before["started"] + 1 and after["cancelled"] == before["cancelled"] + 1

    run(main())


def test_a_listen_stream_whose_client_hangs_up_is_ended(served: tuple[str, str]) -> None:
    """A ``subscriptions/listen`` POST whose client closes the connection: its listener is gone
    (kept without a watcher task by mcpkit's own protocol)."""
    kind, url = served

    async def main() -> None:
        before = await state(url)
        with socket.create_connection(("127.0.0.1", port_of(url)), timeout=PATIENCE) as sock:
            sock.sendall(
                stateless_post("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            )
            opened = await until(url, lambda s: s["listeners"] > before["listeners"])
            assert opened["listeners"] == before["listeners"] + 1
            assert opened["watchers"] == (0 if kind == "mcpkit" else 1)
        after = await until(url, lambda s: s["listeners"] == before["listeners"])
        assert after["listeners"] == before["listeners"] and after["watchers"] == 0

    run(main())


# -- the extension itself, on mcpkit's protocol over a transport the test holds -----------------------
# The wire cannot order a lost connection before a request's registration at will: here the test
# decides when the connection is lost.


async def connected(app: Any, host: str) -> Any:
    """mcpkit's uvicorn protocol serving *app* on a connection the test holds, with one request in
    (its Host header: *host*)."""
    protocol = held_protocol(app, HeldTransport())
    protocol.data_received(
        b"POST /mcp HTTP/1.1\r\nHost: " + host.encode() + b"\r\nContent-Length: 2\r\n\r\n{}"
    )
    for _ in range(10):  # the request's task takes its first steps
        await asyncio.sleep(0)
    return protocol


def test_the_disconnect_callback_is_called_once_while_the_response_is_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Registered while the response is open, the callback is called when the connection is lost,
    once; registered after that, at once; after the response has ended, never. One that raises is
    logged, and the connection ends all the same."""
    from mcpkit.transports.http.server._asgi import on_disconnect

    called: list[str] = []
    go_on = asyncio.Event()

    def fails() -> None:
        raise RuntimeError("the app's own mistake")

    async def app(scope: Any, receive: Any, send: Any) -> None:
        register = on_disconnect(scope)
        assert register is not None
        await receive()
        what = scope["headers"][0][1].decode()  # the Host header names the case
        if what == "late":
            await go_on.wait()  # the connection is lost meanwhile
        register(fails if what == "raises" else lambda: called.append(what))
        if what == "answered":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
        await asyncio.Event().wait()

    async def case(what: str) -> list[str]:
        called.clear()
        protocol = await connected(app, what)
        protocol.connection_lost(None)
        protocol.connection_lost(None)  # once only, however often it is told
        if what == "late":
            go_on.set()
            for _ in range(10):
                await asyncio.sleep(0)
        for task in list(protocol.tasks):
            task.cancel()
        return list(called)

    async def main() -> None:
        assert await case("open") == ["open"]
        assert await case("late") == ["late"]
        assert await case("answered") == []
        assert await case("raises") == []

    run(main())
    assert "a callback for a lost connection failed" in caplog.text
