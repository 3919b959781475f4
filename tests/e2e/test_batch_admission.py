"""A 2025-03-26 batch past the in-flight cap, and a reused request id, over stdio and HTTP+SSE.

Streamable HTTP's answers are proved in ``test_http_hardening.py`` and the hostile corpus; here the
two transports whose sessions apply ``Server(max_in_flight=)`` themselves must answer the same way:
the members that fit are served, each member past the cap gets -32000 with its own id in the one
array, and a request reusing an id in flight gets -32600 with that id.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import free_port, http_server
from ..hostile.harness import TIMEOUT, SSEStream, StdioTarget

pytestmark = pytest.mark.e2e

SERVER = """
import asyncio

from mcpkit import Context, Server

server = Server("batches", max_in_flight=4)


@server.tool
async def nap(seconds: float, ctx: Context) -> str:
    await ctx.report_progress(0.5, 1.0)
    await asyncio.sleep(seconds)
    return "rested"
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-03-26",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LONG = {
    "jsonrpc": "2.0",
    "id": "long",
    "method": "tools/call",
    "params": {"name": "nap", "arguments": {"seconds": 3}, "_meta": {"progressToken": "long"}},
}
BATCH_SIZE = 10_000


def big_batch() -> list[dict[str, Any]]:
    """Two tool calls, a notification, then pings: 10,000 requests for a session with room for 3."""
    naps = [
        {
            "jsonrpc": "2.0",
            "id": f"nap-{i}",
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 0}},
        }
        for i in (0, 1)
    ]
    pings = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(BATCH_SIZE - 2)]
    return [naps[0], {"jsonrpc": "2.0", "method": "notifications/nothing"}, naps[1], *pings]


def check_batch_answer(members: Any) -> None:
    assert isinstance(members, list) and len(members) == BATCH_SIZE
    by_id = {m["id"]: m for m in members}
    assert len(by_id) == BATCH_SIZE  # one answer per request, each with its own id
    assert [by_id[f"nap-{i}"]["result"]["content"][0]["text"] for i in (0, 1)] == ["rested", "rested"]
    assert by_id[0] == {"jsonrpc": "2.0", "id": 0, "result": {}}
    assert {by_id[i]["error"]["code"] for i in range(1, BATCH_SIZE - 2)} == {-32000}


def check_reused_id(answer: Any) -> None:
    assert answer["id"] == "long" and answer["error"]["code"] == -32600, answer


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "batches.py"
    path.write_text(SERVER)
    return path


def until_begun(read: Callable[[], Any]) -> None:
    """Read until the long nap reports progress: it is running, one of the four slots taken."""
    while read().get("method") != "notifications/progress":
        pass


def test_stdio_answers_a_big_batch_member_by_member_and_a_reused_id_with_that_id(script: Path) -> None:
    target = StdioTarget([sys.executable, "-m", "mcpkit", "run", str(script)])
    try:
        target.write(json.dumps(INITIALIZE).encode())
        assert target.messages_until("init")[-1]["result"]["protocolVersion"] == "2025-03-26"
        target.write(json.dumps(INITIALIZED).encode())
        target.write(json.dumps(LONG).encode())
        until_begun(lambda: json.loads(target.lines.get(timeout=TIMEOUT)))
        target.write(json.dumps({"jsonrpc": "2.0", "id": "long", "method": "ping"}).encode())
        check_reused_id(json.loads(target.lines.get(timeout=TIMEOUT)))
        target.write(json.dumps(big_batch()).encode())
        seen: list[Any] = []
        while not any(isinstance(m, list) for m in seen) or not any(
            isinstance(m, dict) and m.get("id") == "long" for m in seen
        ):
            seen.append(json.loads(target.lines.get(timeout=TIMEOUT)))
        [members] = [m for m in seen if isinstance(m, list)]
        check_batch_answer(members)
        [long] = [m for m in seen if isinstance(m, dict) and m.get("id") == "long"]
        assert long["result"]["content"][0]["text"] == "rested"
        [after] = target.call("ping")
        assert after["result"] == {}
    finally:
        target.close()


@pytest.fixture
def sse_url(script: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", str(script), "--transport", "http", "--port", str(port)]
    for url in http_server(command, port, startup_seconds=15):
        yield url.rsplit("/", 1)[0]


def test_http_sse_answers_a_big_batch_member_by_member_and_a_reused_id_with_that_id(sse_url: str) -> None:
    with httpx.Client(timeout=TIMEOUT) as http:
        stream = SSEStream(http, sse_url + "/sse", {"Accept": "text/event-stream"})
        try:
            name, endpoint = stream.next()
            assert name == "endpoint"
            post_url = sse_url + endpoint
            assert http.post(post_url, json=INITIALIZE).status_code == 202
            assert stream.messages_until("init")[-1]["result"]["protocolVersion"] == "2025-03-26"
            http.post(post_url, json=INITIALIZED)
            assert http.post(post_url, json=LONG).status_code == 202
            until_begun(lambda: json.loads(stream.next()[1]))
            assert (
                http.post(post_url, json={"jsonrpc": "2.0", "id": "long", "method": "ping"}).status_code
                == 202
            )
            check_reused_id(json.loads(stream.next()[1]))
            assert http.post(post_url, json=big_batch()).status_code == 202
            seen: list[Any] = []
            while len(seen) < 2:  # the batch's array and the long nap's answer, in either order
                message = json.loads(stream.next()[1])
                if isinstance(message, list) or message.get("id") == "long":
                    seen.append(message)
            [members] = [m for m in seen if isinstance(m, list)]
            check_batch_answer(members)
            [long] = [m for m in seen if isinstance(m, dict)]
            assert long["result"]["content"][0]["text"] == "rested"
            assert (
                http.post(post_url, json={"jsonrpc": "2.0", "id": "after", "method": "ping"}).status_code
                == 202
            )
            assert stream.messages_until("after")[-1]["result"] == {}
        finally:
            stream.close()
