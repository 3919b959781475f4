"""Tasks belong to their requestor's authorization context, on a protected ``mcpkit run`` over real
HTTP: another subject, with his own valid token, cannot list, read, wait on, cancel or answer them.

"When an authorization context is provided, receivers MUST bind tasks to said context" and "MUST
reject tasks/get, tasks/result, and tasks/cancel requests for tasks that do not belong to the same
authorization context as the requestor" (2025-11-25, basic/utilities/tasks); the 2026-07-28 tasks
extension: "Servers MUST perform authentication and authorization checks on each task-related
request". Another's task is answered exactly as an unknown one, so nothing tells it exists.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpkit import Client, InvalidParams, TextContent

from ..conftest import EXAMPLES, free_port, http_server
from .issuer import TestIssuer

pytestmark = pytest.mark.e2e

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {},
    },
}


@pytest.fixture(scope="module")
def url(issuer: TestIssuer) -> Iterator[str]:
    """``examples/jobs.py`` (tools that run as tasks) served over HTTP, protected by *issuer*."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}/mcp"
    command = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "jobs.py"), "--transport", "http",
               "--port", str(port), "--auth-issuer", issuer.url, "--auth-audience", endpoint]  # fmt: skip
    yield from http_server(command, port, 15)


def bearer(issuer: TestIssuer, url: str, subject: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {issuer.mint(url, subject=subject)}"}


def unknown_id() -> str:
    return secrets.token_urlsafe(16)  # the shape of a real task id


async def refused(call: Any, task_id: str) -> str:
    """The error *call* raises for *task_id*, as JSON with the id taken out, to compare another's
    task with an unknown one."""
    with pytest.raises(InvalidParams) as caught:
        await call(task_id)
    return json.dumps(caught.value.to_wire()).replace(task_id, "ID")


def test_2025_11_25_another_subjects_task_is_an_unknown_task(url: str, issuer: TestIssuer) -> None:
    async def main() -> None:
        alice = Client(url, protocol_version=HANDSHAKE, headers=bearer(issuer, url, "alice"))
        bob = Client(url, protocol_version=HANDSHAKE, headers=bearer(issuer, url, "bob"))
        async with alice, bob:
            done = await alice.start_task("slow_compute", {"seconds": 0.05, "label": "alice-private"})
            assert (await alice.task_result(done["taskId"])).content == [
                TextContent(text="alice-private done after 0.05s")
            ]
            running = await alice.start_task("slow_compute", {"seconds": 60})
            mine = [done["taskId"], running["taskId"]]
            assert [task["taskId"] for task in await alice.list_tasks()] == mine

            assert await bob.list_tasks() == []
            for call in (bob.get_task, bob.task_result, bob.cancel_task):
                unknown = await refused(call, unknown_id())
                assert json.loads(unknown)["code"] == -32602
                for task_id in mine:
                    assert await refused(call, task_id) == unknown
            # Bob's cancel did nothing; Bob's own tasks are his, and not listed to Alice.
            assert (await alice.get_task(running["taskId"]))["status"] == "working"
            his = await bob.start_task("slow_compute", {"seconds": 0.05})
            assert [task["taskId"] for task in await bob.list_tasks()] == [his["taskId"]]
            assert [task["taskId"] for task in await alice.list_tasks()] == mine

            # The binding is the authorization context, not the session: Alice's second session
            # (a new token for the same subject) reaches her tasks.
            async with Client(url, protocol_version=HANDSHAKE, headers=bearer(issuer, url, "alice")) as again:
                assert [task["taskId"] for task in await again.list_tasks()] == mine
                assert (await again.cancel_task(running["taskId"]))["status"] == "cancelled"

    asyncio.run(asyncio.wait_for(main(), 120))


def post(url: str, headers: dict[str, str], method: str, params: dict[str, Any]) -> httpx.Response:
    """One 2026-07-28 request declaring the tasks extension, with the headers its method needs."""
    name = params.get("name", params.get("taskId"))
    sent = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": STATELESS,
            "Mcp-Method": method, "Mcp-Name": str(name), **headers}  # fmt: skip
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    return httpx.post(url, json=body, headers=sent, timeout=60)


def state(url: str, headers: dict[str, str], task_id: str, leaving: str) -> dict[str, Any]:
    """``tasks/get`` until the task's status is no longer *leaving*."""
    deadline = time.monotonic() + 60
    while True:
        answer = post(url, headers, "tasks/get", {"taskId": task_id}).json()["result"]
        if answer["status"] != leaving or time.monotonic() > deadline:
            return answer  # type: ignore[no-any-return]
        time.sleep(0.02)


def answered(response: httpx.Response, task_id: str) -> tuple[int, str]:
    """The HTTP status and body of an answer, with the task id taken out."""
    return response.status_code, response.text.replace(task_id, "ID")


def test_2026_07_28_another_subjects_task_is_an_unknown_task(url: str, issuer: TestIssuer) -> None:
    alice, bob = bearer(issuer, url, "alice"), bearer(issuer, url, "bob")
    started = post(url, alice, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.05, "label": "alice-private"}})  # fmt: skip
    assert started.json()["result"]["resultType"] == "task"
    done = started.json()["result"]["taskId"]
    result = state(url, alice, done, "working")
    assert result["result"]["content"][0]["text"] == "alice-private done after 0.05s"
    asked = post(url, alice, "tools/call", {"name": "approve", "arguments": {"job": "alice-job"}}).json()
    waiting = asked["result"]["taskId"]
    asking = state(url, alice, waiting, "working")
    assert asking["status"] == "input_required"
    (key,) = asking["inputRequests"]  # Bob answers with the right key: he still gets nowhere

    nobody = unknown_id()
    for method, extra in (
        ("tasks/get", {}),
        ("tasks/cancel", {}),
        ("tasks/update", {"inputResponses": {key: {"action": "accept", "content": {"ok": True}}}}),
    ):
        unknown = answered(post(url, bob, method, {"taskId": nobody, **extra}), nobody)
        assert unknown[0] == 400 and '"code":-32602' in unknown[1].replace(" ", "")
        for task_id in (done, waiting):
            assert answered(post(url, bob, method, {"taskId": task_id, **extra}), task_id) == unknown, method
    # Bob's cancel and answer did nothing: the task still waits for Alice's answer.
    still = state(url, alice, waiting, "never")
    assert still["status"] == "input_required" and "alice-job" in str(still["inputRequests"])
    assert post(url, alice, "tasks/cancel", {"taskId": waiting}).status_code == 200
    assert state(url, alice, waiting, "input_required")["status"] == "cancelled"
