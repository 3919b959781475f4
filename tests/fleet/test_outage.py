"""Redis stopped under a running fleet: every kind of request is answered, none with a 500.

Three real nodes on a redis-server of this module's own (stopped and started again on the same
port), behind nginx round-robin. While Redis is down, what needs no shared state is served as
usual (2026-07-28 requests, a listen stream, a session the node holds); what needs it gets 503 with
``Retry-After`` and a JSON-RPC -32000 error; no node logs a traceback; ``/readyz`` stays 200
(``degraded``) and ``/healthz`` 200. Started again, Redis serves every kind of request once more.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import free_port
from .conftest import SERVER, nginx_in_front, wait_port, wait_ready
from .test_fleet import message

HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
UNAVAILABLE = "Service unavailable: the shared state cannot be reached, retry later"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


class StoppableRedis:
    """A redis-server on one port that the test stops and starts again."""

    def __init__(self, folder: str) -> None:
        self.port, self.folder = free_port(), folder
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        options = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen([binary, *options, "--dir", self.folder], stdout=subprocess.DEVNULL)
        wait_port(self.port, 60, self.proc)

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()


@dataclass
class OutageFleet:
    url: str
    ports: list[int]
    redis: StoppableRedis
    logs: list[Path]

    def node_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.ports[index]}/mcp"

    def tracebacks(self) -> list[str]:
        return [log.name for log in self.logs if "Traceback" in log.read_text()]


@pytest.fixture(scope="module")
def outage_fleet() -> Iterator[OutageFleet]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    with tempfile.TemporaryDirectory(prefix="mcpkit-outage-") as folder:
        redis = StoppableRedis(folder)
        redis.start()
        ports = [free_port() for _ in range(3)]
        logs = [Path(folder) / f"node-{port}.log" for port in ports]
        nodes = []
        for port, log in zip(ports, logs, strict=True):
            command = [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http",
                       "--port", str(port), "--redis", redis.url]  # fmt: skip
            with log.open("wb") as out:
                nodes.append(subprocess.Popen(command, stdout=out, stderr=out))
        try:
            for port, node in zip(ports, nodes, strict=True):
                wait_ready(port, node)
            with nginx_in_front(ports) as front:
                yield OutageFleet(f"http://127.0.0.1:{front}/mcp", ports, redis, logs)
        finally:
            for node in nodes:
                node.kill()
                node.wait()
            for log in logs:  # shown for a failing test
                sys.stdout.write(f"--- {log.name}\n{log.read_text()}")
            if redis.proc is not None and redis.proc.poll() is None:
                redis.stop()


def initialize_body(request_id: int = 0) -> dict[str, Any]:
    params = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def session_headers(session_id: str) -> dict[str, str]:
    return {"mcp-session-id": session_id, "mcp-protocol-version": HANDSHAKE, "accept": ACCEPT}


async def open_session(http: httpx.AsyncClient, url: str) -> str:
    response = await http.post(url, json=initialize_body(), headers={"accept": ACCEPT})
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=note, headers=session_headers(session_id))).status_code == 202
    return session_id


def assert_unavailable(response: httpx.Response, request_id: Any = None) -> None:
    """503, Retry-After, and the JSON-RPC -32000 error naming *request_id*."""
    assert response.status_code == 503, (response.status_code, response.text)
    assert response.headers["retry-after"] == "1"
    answer = json.loads(response.text)
    assert answer == {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": UNAVAILABLE}}


def last_answer(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, (response.status_code, response.text)
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = [line[6:] for line in text.splitlines() if line.startswith("data: ") and line[6:]][-1]
    answer: dict[str, Any] = json.loads(text)
    return answer


def test_redis_stopped_every_request_is_answered_and_none_with_500(
    outage_fleet: OutageFleet, tmp_path: Path
) -> None:
    fleet = outage_fleet
    statuses: list[tuple[str, int]] = []
    task_runs = tmp_path / "task-runs.txt"  # a line each time the refused task's tool runs

    async def main() -> None:
        async with httpx.AsyncClient(timeout=30) as http:

            async def post(what: str, url: str, body: Any, headers: dict[str, str]) -> httpx.Response:
                response = await http.post(url, json=body, headers=headers)
                statuses.append((what, response.status_code))
                return response

            async def get(
                what: str, url: str, headers: dict[str, str], method: str = "GET"
            ) -> httpx.Response:
                response = await http.request(method, url, headers=headers)
                statuses.append((what, response.status_code))
                return response

            home = fleet.node_url(0)
            held = await open_session(http, home)  # this node holds a replica of it
            elsewhere = await open_session(http, fleet.node_url(1))  # no replica on node 0
            # A resumable stream's event id, for a replay asked while Redis is down.
            slow = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "slow", "arguments": {"seconds": 0.2}, "_meta": {"progressToken": 1}}}  # fmt: skip
            streamed = await http.post(home, json=slow, headers=session_headers(held))
            event_id = next(line[4:] for line in streamed.text.splitlines() if line.startswith("id: "))

            fleet.redis.stop()

            # initialize, through nginx and on every node: 503, naming the request.
            for url in [fleet.url, *map(fleet.node_url, range(3))]:
                assert_unavailable(await post("initialize", url, initialize_body(7), {"accept": ACCEPT}), 7)
            # A session this node holds: served as usual (its change notification too).
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "held"}}}  # fmt: skip
            answer = last_answer(await post("held session", home, call, session_headers(held)))
            assert answer["result"]["content"][0]["text"] == "held"
            touch = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "touch", "arguments": {"uri": "note://a"}}}  # fmt: skip
            answer = last_answer(await post("held session, touch", home, touch, session_headers(held)))
            assert "isError" not in answer["result"], answer
            # A session this node would have to restore from Redis: 503 (not 404: it may exist).
            assert_unavailable(await post("session held elsewhere", home, call, session_headers(elsewhere)))
            # What every replica must see: refused whole.
            level = {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "debug"}}
            assert_unavailable(await post("setLevel", home, level, session_headers(held)), 3)
            # A notification for this replica alone is accepted; a cancellation travels: 503.
            roots = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
            assert (await post("notification", home, roots, session_headers(held))).status_code == 202
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
            assert_unavailable(await post("cancellation", home, cancel, session_headers(held)))
            # The GET stream (its claim), a replay (the shared event store), DELETE: 503.
            sse = {**session_headers(held), "accept": "text/event-stream"}
            assert_unavailable(await get("GET stream", home, sse))
            assert_unavailable(await get("GET replay", home, {**sse, "last-event-id": event_id}))
            assert_unavailable(await get("DELETE", home, session_headers(held), "DELETE"))
            # HTTP+SSE (2024-11-05): a new session's stream, and a message for another node's session.
            base = home.rsplit("/", 1)[0]
            assert_unavailable(await get("HTTP+SSE stream", base + "/sse", {"accept": "text/event-stream"}))
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert_unavailable(await post("HTTP+SSE message", base + "/messages?session_id=x", note, {}))
            # 2026-07-28: served as usual, through nginx (any node).
            for _ in range(3):
                body, headers = message("tools/call", {"name": "echo", "arguments": {"text": "x"}})
                assert "result" in last_answer(await post("2026-07-28 call", fleet.url, body, headers))
                body, headers = message("tools/call", {"name": "touch", "arguments": {"uri": "note://b"}})
                answer = last_answer(await post("2026-07-28 touch", fleet.url, body, headers))
                assert "isError" not in answer["result"], answer
            # A listen stream opens and is acknowledged (the node's subscription is its own).
            body, headers = message("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            async with http.stream("POST", home, json=body, headers=headers) as listen:
                statuses.append(("listen", listen.status_code))
                lines = listen.aiter_lines()
                first = await anext(line async for line in lines if line.startswith("data: "))
                assert "acknowledged" in first
            # A task: it cannot be made findable by the other nodes, so it is not started: 503, and
            # its tool never runs (the caller is told to try again: a retry must not be a second run).
            meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": TASKS}  # fmt: skip
            arguments = {"path": str(task_runs), "seconds": 0.1}
            body, headers = message("tools/call", {"name": "record_task", "arguments": arguments, "task": {}})
            body["params"]["_meta"] = meta
            assert_unavailable(await post("2026-07-28 task", home, body, headers), 1)
            body, headers = message("tasks/get", {"taskId": "nope"})
            body["params"]["_meta"] = meta
            assert_unavailable(await post("2026-07-28 tasks/get", home, body, headers), 1)
            # Probes: alive, and still ready (degraded), on every node.
            for port in fleet.ports:
                health = await http.get(f"http://127.0.0.1:{port}/healthz")
                ready = await http.get(f"http://127.0.0.1:{port}/readyz")
                statuses.append(("probes", health.status_code))
                assert health.status_code == 200 and health.text == "ok"
                assert ready.status_code == 200 and ready.text.startswith("degraded:"), ready.text

            fleet.redis.start()

            # Back: within a generous wait, a new session opens through nginx, and every kind of
            # request that was refused is served.
            deadline = time.monotonic() + 60
            while True:
                response = await http.post(fleet.url, json=initialize_body(), headers={"accept": ACCEPT})
                if response.status_code == 200:
                    break
                assert response.status_code == 503 and time.monotonic() < deadline, response.text
                await asyncio.sleep(0.2)

            async def served(method: str, url: str, **options: Any) -> httpx.Response:
                """As a client honouring Retry-After would: a 503 while connections to the
                restarted Redis are made again is asked again."""
                while True:
                    response = await http.request(method, url, **options)
                    statuses.append(("after", response.status_code))
                    if response.status_code != 503:
                        return response
                    assert time.monotonic() < deadline, response.text
                    await asyncio.sleep(float(response.headers["retry-after"]))

            session = await open_session(http, fleet.url)
            for _ in range(3):
                headers = session_headers(session)
                assert "result" in last_answer(await served("POST", fleet.url, json=call, headers=headers))
            # This Redis keeps nothing across a restart: a session goes on where a replica of it
            # lives, and is gone elsewhere (404: its client initializes again).
            headers = session_headers(elsewhere)
            assert "result" in last_answer(
                await served("POST", fleet.node_url(1), json=call, headers=headers)
            )
            assert (await served("POST", fleet.node_url(2), json=call, headers=headers)).status_code == 404
            headers = session_headers(held)
            assert "result" in last_answer(await served("POST", home, json=level, headers=headers))
            for port in fleet.ports:
                assert (await http.get(f"http://127.0.0.1:{port}/readyz")).text == "ok"
            while True:
                async with http.stream("GET", home, headers=sse) as stream:
                    if stream.status_code == 200:
                        break
                    assert stream.status_code == 503 and time.monotonic() < deadline
                await asyncio.sleep(1)
            assert (await served("DELETE", home, headers=session_headers(held))).status_code == 200

    asyncio.run(main())
    assert [what for what, status in statuses if status >= 500 and status != 503] == []
    assert fleet.tracebacks() == []
    assert not task_runs.exists()  # refused with 503, and never run (checked once all else is done)
