"""How one request is carried through (``mcpkit.client.exchange``): retry params, tasks, pages."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from mcpkit import MCPError, RequestTimeout, RPCError
from mcpkit.client.exchange import (
    Deadlines,
    Progress,
    await_answer,
    check_result_type,
    follow_task,
    list_all,
    retry_params,
)

from ._clock import run_in_virtual_time


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


class _SilentPeer:
    """Stands in for a Peer whose answers never come: records the cancellations sent."""

    def __init__(self) -> None:
        self.cancelled: list[tuple[Any, str]] = []

    async def cancel(self, request_id: Any, reason: str) -> None:
        self.cancelled.append((request_id, reason))


def test_silence_times_out_progress_extends_and_max_timeout_caps() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        peer = _SilentPeer()
        # Silence: the request times out and is cancelled on the server.
        with pytest.raises(RequestTimeout):
            await await_answer(peer, 1, loop.create_future(), Progress(None), 0.05, None)  # type: ignore[arg-type]
        assert peer.cancelled == [(1, "request timed out")]
        # Progress heard every 30 ms keeps a 50 ms timeout alive until the answer comes.
        future: asyncio.Future[Any] = loop.create_future()
        progress = Progress(None)

        async def report_then_answer() -> None:
            for _ in range(5):
                await asyncio.sleep(0.03)
                await progress.update({"progress": 1})
            future.set_result("done")

        task = asyncio.ensure_future(report_then_answer())
        assert await await_answer(peer, 2, future, progress, 0.05, None) == "done"  # type: ignore[arg-type]
        await task
        # ...but never past max_timeout.
        progress = Progress(None)
        task = asyncio.ensure_future(report_then_answer())
        started = loop.time()
        with pytest.raises(RequestTimeout):
            await await_answer(peer, 3, loop.create_future(), progress, 0.05, 0.08)  # type: ignore[arg-type]
        assert loop.time() - started == pytest.approx(0.08)  # max_timeout, not the silence
        task.cancel()
        # A caller's cancellation is passed on too, and is not a timeout.
        waiting = asyncio.ensure_future(await_answer(peer, 4, loop.create_future(), Progress(None), 5, None))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert peer.cancelled[-1] == (4, "request cancelled by the caller")

    # The loop's own clock, moved only by the test's timers: the 30 ms reports always come before
    # the 50 ms silence is up, however busy the machine.
    run_in_virtual_time(asyncio.wait_for(main(), 5))


def test_restarting_the_timeouts_gives_every_waiting_request_its_full_silence_again() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        deadlines = Deadlines()
        quiet: asyncio.Future[Any] = loop.create_future()
        heard: asyncio.Future[Any] = loop.create_future()
        progress = Progress(None)
        deadlines.watch(quiet, None, 0.2, math.inf, loop.time())
        deadlines.watch(heard, progress, 0.2, math.inf, loop.time())
        await asyncio.sleep(0.15)
        deadlines.restart(loop.time())  # someone typing for the server: not its silence
        await asyncio.sleep(0.15)  # 0.3 s since sent, 0.15 s since restarted
        assert not quiet.done() and not heard.done()
        await asyncio.sleep(0.2)
        assert quiet.done() and heard.done()  # then silence counts again
        deadlines.close()

    # The loop's own clock: 0.15 s is 0.15 s for the timers too, however busy the machine.
    run_in_virtual_time(asyncio.wait_for(main(), 5))
