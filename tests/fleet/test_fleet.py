"""The 2026-07-28 era across a fleet: three nodes on one redis-server behind nginx round-robin.

Every request may land on any node (nginx takes turns), so each test here makes consecutive
requests of one exchange land on different nodes: a retry, a poll, a change and its listener.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from .conftest import Fleet

VERSION = "2026-07-28"
CAPABILITIES = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": CAPABILITIES,
}


def message(
    method: str, params: dict[str, Any], request_id: int = 1
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request and the headers that must agree with it."""
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": META}}
    headers = {
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
        "accept": "application/json, text/event-stream",
    }
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    elif method.startswith("tasks/"):
        headers["mcp-name"] = params["taskId"]
    return body, headers


def result_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = [line[6:] for line in text.splitlines() if line.startswith("data: ") and line[6:]][-1]
    answer = json.loads(text)
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


async def call(client: httpx.AsyncClient, url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body, headers = message(method, params)
    return result_of(await client.post(url, json=body, headers=headers))


def text_of(result: dict[str, Any]) -> str:
    text: str = result["content"][0]["text"]
    return text


def test_any_node_answers_and_nginx_takes_turns(fleet: Fleet) -> None:
    async def main() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            pids = {
                text_of(await call(client, fleet.url, "tools/call", {"name": "whoami", "arguments": {}}))
                for _ in range(6)
            }
            assert len(pids) == 3
            discovered = await call(client, fleet.url, "server/discover", {})
            assert VERSION in discovered["supportedVersions"]
            for port in fleet.ports:
                assert (await client.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200
                assert (await client.get(f"http://127.0.0.1:{port}/readyz")).text == "ok"

    asyncio.run(main())


def test_a_multi_round_trip_retry_opens_on_another_node(fleet: Fleet) -> None:
    async def main() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            params: dict[str, Any] = {"name": "ask", "arguments": {}}
            answers = iter(["a", "b"])
            for _ in range(3):
                result = await call(client, fleet.url, "tools/call", params)
                if result["resultType"] != "input_required":
                    break
                (key,) = result["inputRequests"]
                params = {
                    "name": "ask",
                    "arguments": {},
                    "requestState": result["requestState"],
                    "inputResponses": {key: {"action": "accept", "content": {"value": next(answers)}}},
                }
            assert result["resultType"] == "complete" and text_of(result).startswith("a+b@")

    asyncio.run(main())


def test_a_task_is_polled_updated_and_cancelled_through_any_node(fleet: Fleet) -> None:
    async def main() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            created = await call(
                client, fleet.url, "tools/call", {"name": "slow", "arguments": {"seconds": 0.5}}
            )
            assert created["resultType"] == "task"
            task_id = created["taskId"]
            state = await call(client, fleet.url, "tasks/get", {"taskId": task_id})  # the next node
            assert state["status"] == "working"
            deadline = time.monotonic() + 10
            while state["status"] == "working" and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                state = await call(client, fleet.url, "tasks/get", {"taskId": task_id})
            assert state["status"] == "completed" and text_of(state["result"]).startswith("slept 0.5s on ")

            asks = await call(client, fleet.url, "tools/call", {"name": "ask_later", "arguments": {}})
            assert asks["resultType"] == "task"
            for value in ("x", "y"):
                state = await call(client, fleet.url, "tasks/get", {"taskId": asks["taskId"]})
                while state["status"] != "input_required":
                    await asyncio.sleep(0.02)
                    state = await call(client, fleet.url, "tasks/get", {"taskId": asks["taskId"]})
                (key,) = state["inputRequests"]
                answer = {key: {"action": "accept", "content": {"value": value}}}
                await call(
                    client, fleet.url, "tasks/update", {"taskId": asks["taskId"], "inputResponses": answer}
                )
                await asyncio.sleep(0.1)  # the answer travels to the node running the task
            while state["status"] != "completed":
                await asyncio.sleep(0.02)
                state = await call(client, fleet.url, "tasks/get", {"taskId": asks["taskId"]})
            assert text_of(state["result"]).startswith("x+y@")

            long = await call(client, fleet.url, "tools/call", {"name": "slow", "arguments": {"seconds": 60}})
            await call(client, fleet.url, "tasks/cancel", {"taskId": long["taskId"]})
            for _ in range(3):  # every node sees it cancelled
                state = await call(client, fleet.url, "tasks/get", {"taskId": long["taskId"]})
                assert state["status"] == "cancelled"

    asyncio.run(main())


def test_a_listener_on_one_node_hears_a_change_made_through_another(fleet: Fleet) -> None:
    async def main() -> None:
        body, headers = message(
            "subscriptions/listen",
            {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["note://a"]}},
        )
        async with httpx.AsyncClient(timeout=10) as client:
            # Each listener holds its node (nginx took turns): three streams, one per node.
            streams = [client.stream("POST", fleet.url, json=body, headers=headers) for _ in range(3)]
            responses = [await stream.__aenter__() for stream in streams]
            try:
                lines = [response.aiter_lines() for response in responses]
                for reader in lines:
                    assert "acknowledged" in await anext_data(reader)
                # A change made through nginx lands on some node; every listener hears of it.
                await call(
                    client, fleet.url, "tools/call", {"name": "touch", "arguments": {"uri": "note://a"}}
                )
                for reader in lines:
                    heard = {json.loads(await anext_data(reader))["method"] for _ in range(2)}
                    assert heard == {"notifications/resources/updated", "notifications/tools/list_changed"}
            finally:
                for stream in streams:
                    await stream.__aexit__(None, None, None)

    asyncio.run(main())


async def anext_data(lines: Any) -> str:
    async with asyncio.timeout(60):  # must not fire: a busy machine is slow, not wrong
        async for line in lines:
            if line.startswith("data: ") and line[6:]:
                return str(line[6:])
    raise AssertionError("the stream ended")


def test_a_bounded_load_across_the_nodes_has_no_errors(fleet: Fleet) -> None:
    calls, clients = 2000, 8

    async def main() -> None:
        limits = httpx.Limits(max_connections=clients)
        async with httpx.AsyncClient(timeout=30, limits=limits) as client:

            async def worker(n: int) -> None:
                for i in range(calls // clients):
                    text = f"{n}-{i}"
                    result = await call(
                        client, fleet.url, "tools/call", {"name": "echo", "arguments": {"text": text}}
                    )
                    assert text_of(result) == text

            started = time.perf_counter()
            await asyncio.gather(*(worker(n) for n in range(clients)))
            elapsed = time.perf_counter() - started
            print(f"{calls} calls over {clients} clients through nginx to 3 nodes: {calls / elapsed:.0f}/s")

    asyncio.run(main())
