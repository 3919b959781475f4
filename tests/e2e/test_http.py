"""Streamable HTTP (2026-07-28 era) against a real `mcpkit run --transport http` on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ..conftest import EXAMPLES, free_port, http_server

pytestmark = pytest.mark.e2e

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def serve(example: str) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "mcpkit",
        "run",
        str(EXAMPLES / example),
        "--transport",
        "http",
        "--port",
        str(port),
    ]
    yield from http_server(command, port, startup_seconds=15)


@pytest.fixture(scope="module")
def notes_url() -> Iterator[str]:
    yield from serve("notes.py")


def post(url: str, method: str, params: dict[str, Any] | None = None, *, headers: dict[str, str] | None = None,
         request_id: int = 1, meta: dict[str, Any] | None = None) -> httpx.Response:  # fmt: skip
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"_meta": meta or META, **(params or {})},
    }
    standard = {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
        "Accept": "application/json, text/event-stream",
    }
    return httpx.post(url, json=body, headers={**standard, **(headers or {})}, timeout=60)


def test_discover_list_and_call(notes_url: str) -> None:
    discovered = post(notes_url, "server/discover")
    assert discovered.status_code == 200 and discovered.headers["content-type"] == "application/json"
    assert "2026-07-28" in discovered.json()["result"]["supportedVersions"]
    tools = post(notes_url, "tools/list").json()["result"]
    assert "create_notebook" in [t["name"] for t in tools["tools"]] and tools["resultType"] == "complete"
    created = post(
        notes_url,
        "tools/call",
        {"name": "create_notebook", "arguments": {}},
        headers={"Mcp-Name": "create_notebook"},
    )
    assert created.json()["result"]["structuredContent"]["notebook_id"].startswith("nb_")


def test_progress_turns_the_answer_into_an_event_stream(notes_url: str) -> None:
    created = post(
        notes_url,
        "tools/call",
        {"name": "create_notebook", "arguments": {}},
        headers={"Mcp-Name": "create_notebook"},
    )
    notebook = created.json()["result"]["structuredContent"]["notebook_id"]
    post(
        notes_url,
        "tools/call",
        {"name": "add_note", "arguments": {"notebook_id": notebook, "text": "x"}},
        headers={"Mcp-Name": "add_note"},
    )
    meta = {**META, "progressToken": "p1"}
    streamed = post(
        notes_url,
        "tools/call",
        {"name": "export", "arguments": {"notebook_id": notebook}},
        headers={"Mcp-Name": "export"},
        meta=meta,
    )
    assert streamed.headers["content-type"] == "text/event-stream"
    events = [json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert events[0]["method"] == "notifications/progress" and events[0]["params"]["progressToken"] == "p1"
    assert events[-1]["id"] == 1 and events[-1]["result"]["content"][0]["text"].startswith("# notes")


@pytest.mark.parametrize(
    ("headers", "method", "params", "status", "code"),
    [
        ({"MCP-Protocol-Version": "2025-11-25"}, "tools/list", {}, 400, -32020),
        ({"Mcp-Method": "prompts/list"}, "tools/list", {}, 400, -32020),
        ({"Mcp-Name": "other"}, "tools/call", {"name": "create_notebook", "arguments": {}}, 400, -32020),
        ({}, "tools/call", {"name": "create_notebook", "arguments": {}}, 400, -32020),  # Mcp-Name missing
        ({}, "no/such/method", {}, 404, -32601),
        ({"Origin": "https://evil.example"}, "tools/list", {}, 403, -32600),
        ({"Host": "evil.example"}, "tools/list", {}, 421, -32600),
    ],
)
def test_header_validation(
    notes_url: str, headers: dict[str, str], method: str, params: dict[str, Any], status: int, code: int
) -> None:
    answer = post(notes_url, method, params, headers=headers)
    assert answer.status_code == status
    assert answer.json()["error"]["code"] == code


def test_base64_names_version_errors_and_bad_bodies(notes_url: str) -> None:
    encoded = "=?base64?Y3JlYXRlX25vdGVib29r?="  # create_notebook
    assert (
        post(
            notes_url,
            "tools/call",
            {"name": "create_notebook", "arguments": {}},
            headers={"Mcp-Name": encoded},
        ).status_code
        == 200
    )
    unsupported = post(notes_url, "tools/list", meta={**META, "io.modelcontextprotocol/protocolVersion": "1900-01-01"},
                       headers={"MCP-Protocol-Version": "1900-01-01"})  # fmt: skip
    assert unsupported.status_code == 400 and unsupported.json()["error"]["code"] == -32022
    headers = {
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }
    assert httpx.post(notes_url, content=b"{nope", headers=headers).json()["error"]["code"] == -32700
    assert httpx.post(notes_url, content=b"x" * (5 * 2**20), headers=headers).status_code == 413
    assert httpx.get(notes_url).status_code == 405
    note = {"jsonrpc": "2.0", "method": "notifications/whatever"}
    assert httpx.post(notes_url, json=note, headers=headers).status_code == 202
    # after all that, the server still serves
    assert post(notes_url, "tools/list").status_code == 200


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    yield from serve("weather.py")


def test_mirrored_parameters_are_checked(weather_url: str) -> None:
    call = {"name": "forecast", "arguments": {"location": "Zürich", "days": 2}}
    base = {"Mcp-Name": "forecast"}
    missing = post(weather_url, "tools/call", call, headers=base)
    assert missing.status_code == 400 and missing.json()["error"]["code"] == -32020
    wrong = post(weather_url, "tools/call", call, headers={**base, "Mcp-Param-Location": "Bern"})
    assert wrong.status_code == 400 and "Mcp-Param-Location" in wrong.json()["error"]["message"]
    right = post(
        weather_url, "tools/call", call, headers={**base, "Mcp-Param-Location": "=?base64?WsO8cmljaA==?="}
    )
    assert right.status_code == 200 and "day 1" in right.json()["result"]["content"][0]["text"]


def test_our_client_mirrors_parameters_by_itself(weather_url: str) -> None:
    import asyncio

    from mcpkit import Client

    async def main() -> None:
        async with Client(weather_url, probe_timeout=60) as client:  # a slow answer is no legacy server
            # Not listed first: the server's -32020 makes the client list the tools and retry.
            result = await client.call_tool("forecast", {"location": "Zürich", "days": 1})
            assert result.structured_content == {
                "result": ["day 1: " + result.structured_content["result"][0][7:]]
            }  # type: ignore[index]

    asyncio.run(asyncio.wait_for(main(), 120))


@pytest.fixture(scope="module")
def travel_url() -> Iterator[str]:
    yield from serve("travel.py")


def initialize(url: str, version: str = "2025-11-25") -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    answer = httpx.post(url, json=body, headers={"Accept": "application/json, text/event-stream"}, timeout=60)
    assert answer.status_code == 200 and answer.json()["result"]["protocolVersion"] == version
    return answer.headers["mcp-session-id"]


def test_handshake_sessions_over_http(notes_url: str) -> None:
    session = initialize(notes_url)
    assert len(session) >= 32
    headers = {
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": "2025-11-25",
        "Accept": "application/json, text/event-stream",
    }
    listed = httpx.post(
        notes_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers, timeout=60
    )
    assert listed.status_code == 200 and "resultType" not in listed.json()["result"]
    note = httpx.post(
        notes_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=60
    )
    assert note.status_code == 202
    missing = httpx.post(notes_url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, timeout=60)
    assert missing.status_code == 400
    unknown = httpx.post(
        notes_url,
        json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        headers={"Mcp-Session-Id": "nope"},
        timeout=60,
    )
    assert unknown.status_code == 404
    wrong_version = httpx.post(
        notes_url,
        json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
        headers={**headers, "MCP-Protocol-Version": "2025-06-18"},
        timeout=60,
    )
    assert wrong_version.status_code == 400
    unknown_method = httpx.post(
        notes_url, json={"jsonrpc": "2.0", "id": 5, "method": "nope"}, headers=headers, timeout=60
    )
    assert unknown_method.status_code == 200 and unknown_method.json()["error"]["code"] == -32601
    with httpx.stream("GET", notes_url, headers=headers, timeout=60) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"] == "text/event-stream"
        second = httpx.get(notes_url, headers=headers, timeout=60)
        assert second.status_code == 409
    assert httpx.delete(notes_url, headers=headers, timeout=60).status_code == 200
    gone = httpx.post(
        notes_url, json={"jsonrpc": "2.0", "id": 6, "method": "tools/list"}, headers=headers, timeout=60
    )
    assert gone.status_code == 404


def test_2025_03_26_batches_over_http(notes_url: str) -> None:
    session = initialize(notes_url, "2025-03-26")
    headers = {"Mcp-Session-Id": session, "Accept": "application/json, text/event-stream"}
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    answers = httpx.post(notes_url, json=batch, headers=headers, timeout=60).json()
    assert sorted(a["id"] for a in answers) == [1, 2]
    other = initialize(notes_url, "2025-06-18")
    refused = httpx.post(notes_url, json=batch, headers={**headers, "Mcp-Session-Id": other}, timeout=60)
    assert refused.status_code == 400


@pytest.mark.parametrize("version", [None, "2025-11-25", "2025-06-18"])
def test_a_tool_asks_back_over_http_in_both_eras(travel_url: str, version: str | None) -> None:
    import asyncio

    from mcpkit import Client

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True, "travellers": 4}}

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "swim"}, "model": "m"}

    async def main() -> None:
        async with Client(
            travel_url, protocol_version=version, elicitation=elicit, sampling=sample
        ) as client:
            result = await client.call_tool("plan_trip", {"destination": "Nice"})
            assert result.content[0].text == "Trip to Nice for 4 (medium budget). Idea: swim"  # type: ignore[union-attr]

    asyncio.run(asyncio.wait_for(main(), 120))


def test_the_client_starts_a_new_session_after_404(notes_url: str) -> None:
    import asyncio

    from mcpkit import Client

    async def main() -> None:
        async with Client(notes_url, protocol_version="2025-11-25") as client:
            transport: Any = client._transport
            first = transport.session_id
            assert first
            async with httpx.AsyncClient() as other:  # the server forgets the session
                await other.delete(notes_url, headers={"Mcp-Session-Id": first}, timeout=60)
            tools = await client.list_tools()
            assert "create_notebook" in [t.name for t in tools]
            assert transport.session_id and transport.session_id != first

    asyncio.run(asyncio.wait_for(main(), 120))


@pytest.fixture(scope="module")
def jobs_url() -> Iterator[str]:
    yield from serve("jobs.py")


def _events(lines: Iterator[str], count: int) -> list[dict[str, str]]:
    """The next *count* SSE events, as field dicts."""
    events: list[dict[str, str]] = []
    event: dict[str, str] = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            event[name] = value.removeprefix(" ")
        elif event:
            events.append(event)
            event = {}
            if len(events) == count:
                break
    return events


def test_a_dropped_stream_is_resumed_with_last_event_id(jobs_url: str) -> None:
    session = initialize(jobs_url)
    headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25", "Accept": "application/json, text/event-stream"}  # fmt: skip
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "slow_compute", "arguments": {"seconds": 1}, "_meta": {"progressToken": "p"}},
    }
    with httpx.stream("POST", jobs_url, json=call, headers=headers, timeout=60) as stream:
        assert stream.headers["content-type"] == "text/event-stream"
        priming, first = _events(stream.iter_lines(), 2)
    # The priming event: an id, a retry, empty data. Then each message has an id of its own.
    assert priming["data"] == "" and priming["id"] and int(priming["retry"]) > 0
    assert json.loads(first["data"])["params"]["progress"] == 1
    # The connection was dropped; the request goes on. Resume after the first progress event.
    resume = {**headers, "Last-Event-ID": first["id"]}
    with httpx.stream("GET", jobs_url, headers=resume, timeout=60) as stream:
        rest = [json.loads(e["data"]) for e in _events(stream.iter_lines(), 10)]
    assert [m["params"]["progress"] for m in rest[:-1]] == list(range(2, 11))  # nothing lost or repeated
    assert rest[-1]["id"] == 7 and rest[-1]["result"]["content"][0]["text"] == "job done after 1s"
    # An id of no stream of this session cannot be resumed.
    other = initialize(jobs_url)
    foreign = {**headers, "Mcp-Session-Id": other, "Last-Event-ID": first["id"]}
    assert httpx.get(jobs_url, headers=foreign, timeout=60).status_code == 400
    assert httpx.get(jobs_url, headers={**resume, "Last-Event-ID": "nope/1"}, timeout=60).status_code == 400


def test_idle_sessions_expire_and_busy_ones_stay() -> None:
    """A handshake-era session unused for ``session_idle_seconds`` is ended (404, initialize again);
    one in use stays. Served by uvicorn on 127.0.0.1; the app's session table reads a clock the test
    moves (``SessionTable.clock``), so how fast the machine runs the requests does not matter."""
    import asyncio

    import uvicorn

    from mcpkit import Server

    server = Server("idle")

    @server.tool
    async def hello() -> str:
        return "hi"

    app = server.http_app(session_idle_seconds=2.0)
    now = [1000.0]
    app.table.clock = lambda: now[0]
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    accept = {"Accept": "application/json, text/event-stream"}

    async def checks(http: httpx.AsyncClient) -> None:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}  # fmt: skip
        idle, busy = [
            (await http.post(url, json=init, headers=accept)).headers["mcp-session-id"] for _ in range(2)
        ]

        async def list_tools(session: str, request_id: int) -> httpx.Response:
            body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
            return await http.post(url, json=body, headers={**accept, "Mcp-Session-Id": session})

        # 6 s in all: the busy session used every 1.5 s (under the 2 s limit), the idle one never.
        for request_id in range(4):
            now[0] += 1.5
            assert (await list_tools(busy, request_id)).status_code == 200, request_id
        gone = await list_tools(idle, 10)
        assert gone.status_code == 404 and "initialize" in gone.json()["error"]["message"]
        assert (await list_tools(busy, 11)).status_code == 200

    async def main() -> None:
        web = uvicorn.Server(uvicorn.Config(app, port=port, log_level="error", lifespan="off"))
        serving = asyncio.ensure_future(web.serve())
        try:
            async with asyncio.timeout(120):
                while not web.started:
                    assert not serving.done(), "uvicorn stopped before it started"
                    await asyncio.sleep(0.01)
                async with httpx.AsyncClient(timeout=60) as http:
                    await checks(http)
        finally:
            web.should_exit = True
            await serving

    asyncio.run(main())
