"""How one request is carried through (``mcpkit.client.exchange``): retry params, tasks, pages."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import MCPError, RPCError
from mcpkit.client.exchange import check_result_type, follow_task, list_all, retry_params


def test_a_retry_carries_the_answers_and_echoes_the_state_verbatim() -> None:
    params = {"name": "t", "inputResponses": {"old": 1}, "requestState": "old"}
    again = retry_params(params, {"resultType": "input_required", "requestState": "s2"}, {"k": {"v": 1}})
    assert again == {"name": "t", "inputResponses": {"k": {"v": 1}}, "requestState": "s2"}
    assert retry_params(params, {"resultType": "input_required"}, {}) == {"name": "t"}


def test_unknown_result_types_are_refused() -> None:
    check_result_type("tools/call", {"content": []})
    check_result_type("tools/call", {"resultType": "task"})
    with pytest.raises(MCPError, match="unsupported resultType 'later'"):
        check_result_type("tools/call", {"resultType": "later"})


class FakeServer:
    def __init__(self, answers: dict[str, list[Any]]) -> None:
        self.answers = answers
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append((method, params))
        return self.answers[method].pop(0)


async def no_questions(requests: Any, answered: set[str]) -> dict[str, Any]:
    raise AssertionError("no question was expected")


def test_a_task_is_polled_until_it_ends() -> None:
    server = FakeServer(
        {
            "tasks/get": [
                {"status": "working", "pollIntervalMs": 1},
                {"status": "input_required", "inputRequests": {"q": {"method": "roots/list"}}},
                {"status": "input_required", "inputRequests": {"q": {"method": "roots/list"}}},
                {"status": "completed", "result": {"content": []}},
            ],
            "tasks/update": [{}],
        }
    )

    async def answer(requests: Any, answered: set[str]) -> dict[str, Any]:
        fresh: dict[str, Any] = {k: {"roots": []} for k in requests if k not in answered}
        answered.update(fresh)
        return fresh

    result = asyncio.run(follow_task(server.request, answer, {"taskId": "t1", "pollIntervalMs": 1}))
    assert result == {"content": []}
    # The same question shown again before the update is processed is not answered twice.
    assert [m for m, _ in server.sent] == ["tasks/get", "tasks/get", "tasks/update", "tasks/get", "tasks/get"]
    assert server.sent[2][1] == {"taskId": "t1", "inputResponses": {"q": {"roots": []}}}


def test_a_failed_or_cancelled_task_raises() -> None:
    failed = FakeServer({"tasks/get": [{"status": "failed", "error": {"code": -32602, "message": "bad"}}]})
    with pytest.raises(RPCError, match="bad"):
        asyncio.run(follow_task(failed.request, no_questions, {"taskId": "t"}))
    cancelled = FakeServer({"tasks/get": [{"status": "cancelled"}]})
    with pytest.raises(MCPError, match="cancelled"):
        asyncio.run(follow_task(cancelled.request, no_questions, {"taskId": "t"}))


def test_pages_are_followed_to_the_end() -> None:
    server = FakeServer(
        {
            "tools/list": [
                {"tools": [1, 2], "nextCursor": "c1"},
                {"tools": [3], "nextCursor": "c2"},
                {"tools": [4], "nextCursor": ""},
            ]
        }
    )
    assert asyncio.run(list_all(server.request, "tools/list", "tools", {"x": 1})) == [1, 2, 3, 4]
    assert [p for _, p in server.sent] == [{"x": 1}, {"x": 1, "cursor": "c1"}, {"x": 1, "cursor": "c2"}]
