"""Tasks over real stdio: the 2025-11-25 core methods and the 2026-07-28 extension; and kept to
their requestor (a session of an open HTTP server, a connection)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import secrets
import subprocess
from typing import Any

import pytest

from mcpkit import Client, InternalError, InvalidParams, MethodNotFound, MissingClientCapability, TextContent
from mcpkit.transports.memory import memory_pair

from ..conftest import EXAMPLES, free_port, http_server, mcpkit_run

pytestmark = pytest.mark.e2e


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))  # a hang bound: a busy machine starts servers slowly


async def approve(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def test_2025_11_25_task_lifecycle() -> None:
    async def main() -> None:
        statuses: list[str] = []

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            if method == "notifications/tasks/status":
                statuses.append(params["status"])

        async with Client(
            mcpkit_run("jobs.py"),
            protocol_version="2025-11-25",
            elicitation=approve,
            on_notification=on_notification,
        ) as client:
            assert client.server_capabilities["tasks"] == {
                "list": {},
                "cancel": {},
                "requests": {"tools": {"call": {}}},
            }
            tools = {t.name: t.execution for t in await client.list_tools()}
            assert tools["slow_compute"] == {"taskSupport": "optional"}
            task = await client.start_task("slow_compute", {"seconds": 0.2}, ttl_ms=60_000)
            assert task["status"] == "working" and task["ttl"] == 60_000
            assert (await client.get_task(task["taskId"]))["taskId"] == task["taskId"]  # durable at once
            result = await client.task_result(task["taskId"])
            assert result.content == [TextContent(text="job done after 0.2s")]
            assert result.meta == {"io.modelcontextprotocol/related-task": {"taskId": task["taskId"]}}
            assert (await client.get_task(task["taskId"]))["status"] == "completed"
            assert task["taskId"] in [t["taskId"] for t in await client.list_tasks()]
            # cancel: a running task is cancelled; a terminal one is refused with -32602
            slow = await client.start_task("slow_compute", {"seconds": 30})
            assert (await client.cancel_task(slow["taskId"]))["status"] == "cancelled"
            with pytest.raises(InvalidParams):
                await client.cancel_task(slow["taskId"])
            # a task that asks the user: elicitation carries the related task
            asked = await client.start_task("approve", {"job": "deploy"})
            assert (await client.task_result(asked["taskId"])).content == [
                TextContent(text="deploy approved and run")
            ]
            # a protocol-level failure comes back from tasks/result as the error it was
            broken = await client.start_task("broken_job")
            with pytest.raises(InternalError, match="the worker crashed"):
                await client.task_result(broken["taskId"])
            # tools that cannot be tasks, and unknown tasks
            with pytest.raises(MethodNotFound):
                await client.start_task("greet", {"name": "x"})
            with pytest.raises(InvalidParams):
                await client.get_task("no-such-task")
            async with asyncio.timeout(30):  # the last notifications may still be on their way
                while not {"completed", "cancelled", "input_required"} <= set(statuses):  # noqa: ASYNC110
                    await asyncio.sleep(0.02)

    run(main())


def test_2026_extension_is_followed_by_call_tool() -> None:
    async def main() -> None:
        async with Client(mcpkit_run("jobs.py"), elicitation=approve) as client:
            assert client.server_capabilities["extensions"] == {"io.modelcontextprotocol/tasks": {}}
            assert "tasks" not in client.server_capabilities
            reports: list[Any] = []

            async def on_progress(*args: Any) -> None:
                reports.append(args)

            done = await client.call_tool(
                "slow_compute", {"seconds": 0.2, "label": "x"}, on_progress=on_progress
            )
            assert done.content == [TextContent(text="x done after 0.2s")]
            assert (await client.call_tool("approve", {"job": "j"})).content == [
                TextContent(text="j approved and run")
            ]
            assert (await client.call_tool("greet", {"name": "a"})).content == [TextContent(text="Hello, a!")]
            with pytest.raises(InternalError):
                await client.call_tool("broken_job")
            for removed in ("tasks/result", "tasks/list"):
                with pytest.raises(MethodNotFound):
                    await client.request(removed, {"taskId": "x"})

    run(main())


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
WITH_TASKS = {
    **META,
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {},
    },
}
WITHOUT = {**META, "io.modelcontextprotocol/clientCapabilities": {}}


def test_2026_wire_shapes() -> None:
    async def main() -> None:
        plain = Client(mcpkit_run("jobs.py"), capabilities={})
        async with plain:
            # Without the extension: task tools run synchronously, and tasks/* are refused.
            result = await plain.request(
                "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.01}}
            )
            assert result["resultType"] == "complete" and "taskId" not in result
            with pytest.raises(MissingClientCapability):
                await plain.request("tasks/get", {"taskId": "x"})
        async with Client(mcpkit_run("jobs.py"), elicitation=approve) as client:
            # 3 s: still working when tasks/get comes, however busy the machine
            created = await client._request_once(
                "tools/call", {"name": "slow_compute", "arguments": {"seconds": 3}}, None, None, None
            )
            assert created["resultType"] == "task"
            assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"} <= created.keys()
            assert "task" not in created and "ttl" not in created and "pollInterval" not in created
            task_id = created["taskId"]
            working = await client.request("tasks/get", {"taskId": task_id})
            assert working["status"] == "working" and "result" not in working
            while working["status"] == "working":
                await asyncio.sleep(0.05)
                working = await client.request("tasks/get", {"taskId": task_id})
            assert (
                working["status"] == "completed"
                and working["result"]["content"][0]["text"] == "job done after 3s"
            )
            assert "io.modelcontextprotocol/related-task" not in working.get("_meta", {})
            # input_required: the question shows on tasks/get until tasks/update answers it
            asked = await client._request_once(
                "tools/call", {"name": "approve", "arguments": {"job": "k"}}, None, None, None
            )
            state = await client.request("tasks/get", {"taskId": asked["taskId"]})
            while state["status"] == "working":
                await asyncio.sleep(0.02)
                state = await client.request("tasks/get", {"taskId": asked["taskId"]})
            assert state["status"] == "input_required"
            (key,) = state["inputRequests"]
            assert state["inputRequests"][key]["method"] == "elicitation/create"
            ack = await client.request(
                "tasks/update",
                {
                    "taskId": asked["taskId"],
                    "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
                },
            )
            assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
            # cancel acknowledges with an empty result, even twice
            slow = await client._request_once(
                "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}}, None, None, None
            )
            for _ in range(2):
                ack = await client.request("tasks/cancel", {"taskId": slow["taskId"]})
                assert set(ack) == {"resultType", "_meta"}
            assert (await client.request("tasks/get", {"taskId": slow["taskId"]}))["status"] == "cancelled"
            failed = await client._request_once("tools/call", {"name": "broken_job"}, None, None, None)
            state = await client.request("tasks/get", {"taskId": failed["taskId"]})
            while state["status"] == "working":
                await asyncio.sleep(0.02)
                state = await client.request("tasks/get", {"taskId": failed["taskId"]})
            assert state["status"] == "failed" and state["error"]["code"] == -32603 and "result" not in state

    run(main())


def test_tasks_need_no_extension_for_sync_tools_on_the_raw_wire() -> None:
    line = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": WITH_TASKS, "name": "greet", "arguments": {"name": "z"}, "task": {"ttl": 5}},
    }
    proc = subprocess.run(
        mcpkit_run("jobs.py"), input=(json.dumps(line) + "\n").encode(), capture_output=True, timeout=120
    )
    answer = json.loads(proc.stdout)
    assert answer["result"]["resultType"] == "complete"  # a legacy task param never promotes a sync tool
    assert answer["result"]["content"][0]["text"] == "Hello, z!"


async def refused(call: Any, task_id: str) -> str:
    """The error *call* raises for *task_id*, as JSON with the id taken out: another requestor's
    task must be answered exactly as an unknown one."""
    with pytest.raises(InvalidParams) as caught:
        await call(task_id)
    return json.dumps(caught.value.to_wire()).replace(task_id, "ID")


async def kept_apart(mine: Client, theirs: Client) -> None:
    """*theirs* can neither list, read, wait on nor cancel the tasks of *mine* (2025-11-25)."""
    done = await mine.start_task("slow_compute", {"seconds": 0.05, "label": "private"})
    assert (await mine.task_result(done["taskId"])).content == [TextContent(text="private done after 0.05s")]
    running = await mine.start_task("slow_compute", {"seconds": 60})
    ids = [done["taskId"], running["taskId"]]
    assert [task["taskId"] for task in await mine.list_tasks()] == ids
    assert await theirs.list_tasks() == []
    for call in (theirs.get_task, theirs.task_result, theirs.cancel_task):
        unknown = await refused(call, secrets.token_urlsafe(16))
        assert json.loads(unknown)["code"] == -32602
        for task_id in ids:
            assert await refused(call, task_id) == unknown
    assert (await mine.get_task(running["taskId"]))["status"] == "working"
    own = await theirs.start_task("slow_compute", {"seconds": 0.05})
    assert [task["taskId"] for task in await theirs.list_tasks()] == [own["taskId"]]
    assert [task["taskId"] for task in await mine.list_tasks()] == ids
    assert (await mine.cancel_task(running["taskId"]))["status"] == "cancelled"


def test_two_sessions_of_an_open_http_server_do_not_see_each_others_tasks() -> None:
    """No authorization: "to the session where one exists" (each its own ``Mcp-Session-Id``)."""

    async def main(url: str) -> None:
        first = Client(url, protocol_version="2025-11-25")
        second = Client(url, protocol_version="2025-11-25")
        async with first, second:
            await kept_apart(first, second)

    port = free_port()
    for url in http_server([*mcpkit_run("jobs.py"), "--transport", "http", "--port", str(port)], port, 15):
        run(main(url))


def test_two_connections_to_one_server_do_not_see_each_others_tasks() -> None:
    """Without authorization or a session id, the connection binds: stdio has one per process, so
    two in-memory connections to one server (as a host embedding it would make) show it."""
    spec = importlib.util.spec_from_file_location("jobs_example", EXAMPLES / "jobs.py")
    assert spec is not None and spec.loader is not None
    jobs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jobs)

    async def main() -> None:
        served = []
        clients = []
        for _ in range(2):
            ours, theirs = memory_pair()
            served.append(asyncio.ensure_future(jobs.server.serve(theirs)))
            clients.append(Client(ours, protocol_version="2025-11-25"))
        async with clients[0], clients[1]:
            await kept_apart(clients[0], clients[1])
        await asyncio.gather(*served)

    run(main())
