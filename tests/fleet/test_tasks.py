"""Tasks across a fleet: listed on every node, kept to their requestor on every node, and failed
(not left "working") when their node dies.

Three nodes on one redis-server behind nginx round-robin; requests are sent through nginx, or to
one node directly where the test must know which node runs a task (the one it then kills).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import signal
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpkit.tasks import NODE_DIED

from ..auth.issuer import TestIssuer
from ..conftest import free_port
from .conftest import Fleet, start_node, wait_ready
from .test_fleet import call, message, result_of

HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a POST's response (JSON, or the last event of an SSE stream)."""
    assert response.status_code == 200, response.text
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = [line[6:] for line in text.splitlines() if line.startswith("data: ") and line[6:]][-1]
    answer: dict[str, Any] = json.loads(text)
    return answer


class Session:
    """A handshake-era session spoken in raw HTTP, so each request can go where the test says."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url, self.id, self._next = http, url, "", 0

    async def open(self) -> Session:
        params = {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        response = await self.http.post(self.url, json=body, headers={"accept": ACCEPT})
        assert "result" in answer_of(response)
        self.id = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.http.post(self.url, json=note, headers=self.headers())).status_code == 202
        return self

    def headers(self) -> dict[str, str]:
        return {"accept": ACCEPT, "mcp-session-id": self.id, "mcp-protocol-version": HANDSHAKE}

    async def request(self, method: str, params: dict[str, Any], url: str | None = None) -> dict[str, Any]:
        """The whole answer (``result`` or ``error``)."""
        self._next += 1
        body = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        return answer_of(await self.http.post(url or self.url, json=body, headers=self.headers()))

    async def result(self, method: str, params: dict[str, Any], url: str | None = None) -> dict[str, Any]:
        answer = await self.request(method, params, url)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result


def test_tasks_list_shows_the_sessions_tasks_from_every_node(fleet: Fleet) -> None:
    async def main() -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            mine, other = await Session(http, fleet.url).open(), await Session(http, fleet.url).open()
            created = []
            for index in range(3):  # one task started on each node
                result = await mine.result(
                    "tools/call",
                    {"name": "slow", "arguments": {"seconds": 0.1}, "task": {"ttl": 60_000}},
                    fleet.node_url(index),
                )
                created.append(result["task"]["taskId"])
            theirs = await other.result(
                "tools/call", {"name": "slow", "arguments": {"seconds": 0.1}, "task": {}}
            )
            for _ in range(3):  # asked through nginx: each node in turn lists all three
                listed = [task["taskId"] for task in (await mine.result("tasks/list", {}))["tasks"]]
                assert listed == created
            assert [t["taskId"] for t in (await other.result("tasks/list", {}))["tasks"]] == [
                theirs["task"]["taskId"]
            ]

    asyncio.run(main())


def test_a_task_whose_node_dies_fails_on_the_others(own_fleet: Fleet) -> None:
    """2026-07-28: started on node 0, which is killed; polled through node 1, the task ends
    ``failed`` with the error saying why, instead of staying ``working`` for ever."""
    fleet = own_fleet

    async def main() -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            started = await call(
                http, fleet.node_url(0), "tools/call", {"name": "slow", "arguments": {"seconds": 600}}
            )
            assert started["resultType"] == "task"
            task_id = started["taskId"]
            assert (await call(http, fleet.node_url(1), "tasks/get", {"taskId": task_id}))[
                "status"
            ] == "working"
            fleet.nodes[0].send_signal(signal.SIGKILL)
            fleet.nodes[0].wait()
            async with asyncio.timeout(20):  # the heartbeat lapses after 3 s
                while True:
                    state = await call(http, fleet.node_url(1), "tasks/get", {"taskId": task_id})
                    if state["status"] != "working":
                        break
                    await asyncio.sleep(0.2)
            assert state["status"] == "failed"
            assert state["statusMessage"] == NODE_DIED
            assert state["error"]["message"] == NODE_DIED
            # Every other node (and nginx's pick) now says the same.
            assert (await call(http, fleet.node_url(2), "tasks/get", {"taskId": task_id}))[
                "status"
            ] == "failed"

    asyncio.run(main())


def test_tasks_result_answers_with_the_error_when_the_node_dies(own_fleet: Fleet) -> None:
    """2025-11-25: ``tasks/result`` waiting on node 2 for a task of node 1 returns the error once
    node 1 is killed (it would block until the task's ttl otherwise)."""
    fleet = own_fleet

    async def main() -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            session = await Session(http, fleet.node_url(2)).open()
            task = (
                await session.result(
                    "tools/call",
                    {"name": "slow", "arguments": {"seconds": 600}, "task": {}},
                    fleet.node_url(1),
                )
            )["task"]
            waiting = asyncio.ensure_future(session.request("tasks/result", {"taskId": task["taskId"]}))
            await asyncio.sleep(0.5)
            assert not waiting.done()
            fleet.nodes[1].send_signal(signal.SIGKILL)
            fleet.nodes[1].wait()
            async with asyncio.timeout(20):
                answer = await waiting
            assert answer["error"]["code"] == -32603
            assert answer["error"]["message"] == NODE_DIED
            state = await session.result("tasks/get", {"taskId": task["taskId"]})
            assert (state["status"], state["statusMessage"]) == ("failed", NODE_DIED)

    asyncio.run(main())


def unknown_task(answer: dict[str, Any], task_id: str) -> dict[str, Any]:
    """An error answer with the task id taken out (and the request id, which differs)."""
    assert "error" in answer, answer
    error: dict[str, Any] = json.loads(json.dumps(answer["error"]).replace(task_id, "ID"))
    return error


def test_another_sessions_task_is_unknown_on_every_node(fleet: Fleet) -> None:
    """2025-11-25 without authorization: a task belongs to its session, on every node; another
    session's ``tasks/get|result|cancel`` of it, on the node running it or any other, is answered as
    for an unknown id, and its ``tasks/list`` (through nginx) does not show it."""

    async def main() -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            mine, other = await Session(http, fleet.url).open(), await Session(http, fleet.url).open()
            params = {"name": "slow", "arguments": {"seconds": 60}, "task": {"ttl": 60_000}}
            task_id = (await mine.result("tools/call", params, fleet.node_url(0)))["task"]["taskId"]
            nobody = secrets.token_urlsafe(16)
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                unknown = unknown_task(await other.request(method, {"taskId": nobody}), nobody)
                assert unknown["code"] == -32602
                for index in range(3):
                    answer = await other.request(method, {"taskId": task_id}, fleet.node_url(index))
                    assert unknown_task(answer, task_id) == unknown, (method, index)
            for _ in range(3):
                assert (await other.result("tasks/list", {}))["tasks"] == []
            for index in range(3):  # untouched, and still its session's everywhere
                state = await mine.result("tasks/get", {"taskId": task_id}, fleet.node_url(index))
                assert state["status"] == "working"
            assert (await mine.result("tasks/cancel", {"taskId": task_id}, fleet.node_url(2)))[
                "status"
            ] == "cancelled"

    asyncio.run(main())


@pytest.fixture(scope="module")
def protected_nodes(redis_url: str) -> Iterator[tuple[TestIssuer, str, list[str]]]:
    """Two nodes of one fleet, each protected by the same issuer and audience: the issuer, the
    audience, and the nodes' endpoints."""
    audience = "https://fleet.example/mcp"
    with TestIssuer() as issuer:
        ports = [free_port() for _ in range(2)]
        flags = ("--auth-issuer", issuer.url, "--auth-audience", audience)
        nodes = [start_node(port, redis_url, *flags) for port in ports]
        try:
            for port, node in zip(ports, nodes, strict=True):
                wait_ready(port, node)
            yield issuer, audience, [f"http://127.0.0.1:{port}/mcp" for port in ports]
        finally:
            for node in nodes:
                node.terminate()
                node.wait(timeout=10)


async def raw(
    http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any], auth: dict[str, str]
) -> tuple[int, str]:
    """A 2026-07-28 request with a bearer token: the answer's HTTP status and body."""
    body, headers = message(method, params)
    response = await http.post(url, json=body, headers={**headers, **auth})
    return response.status_code, response.text


async def result(
    http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any], auth: dict[str, str]
) -> dict[str, Any]:
    body, headers = message(method, params)
    return result_of(await http.post(url, json=body, headers={**headers, **auth}))


def test_another_subjects_task_is_unknown_on_the_other_node(
    protected_nodes: tuple[TestIssuer, str, list[str]],
) -> None:
    """2026-07-28 on a protected fleet: Alice's task, started on node 0, is hers on node 1 too (its
    snapshot names its owner); Bob's ``tasks/get|cancel|update`` of it there answer as for an
    unknown id."""
    issuer, audience, (first, second) = protected_nodes
    alice = {"authorization": f"Bearer {issuer.mint(audience, subject='alice')}"}
    bob = {"authorization": f"Bearer {issuer.mint(audience, subject='bob')}"}

    async def main() -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            params = {"name": "slow", "arguments": {"seconds": 60}}
            started = await result(http, first, "tools/call", params, alice)
            assert started["resultType"] == "task"
            task_id = started["taskId"]
            nobody = secrets.token_urlsafe(16)
            extras: tuple[tuple[str, dict[str, Any]], ...] = (
                ("tasks/get", {}),
                ("tasks/cancel", {}),
                ("tasks/update", {"inputResponses": {}}),
            )
            for method, extra in extras:
                unknown = await raw(http, second, method, {"taskId": nobody, **extra}, bob)
                assert unknown[0] == 400
                for url in (first, second):
                    status, text = await raw(http, url, method, {"taskId": task_id, **extra}, bob)
                    assert (status, text.replace(task_id, "ID")) == (400, unknown[1].replace(nobody, "ID"))
            state = await result(http, second, "tasks/get", {"taskId": task_id}, alice)
            assert state["status"] == "working"  # untouched, and Alice's on the other node too
            await result(http, second, "tasks/cancel", {"taskId": task_id}, alice)

    asyncio.run(main())
