"""The shared-state contract, run the same on the in-process default and on a real Redis.

A "pair" is two handles on one shared state, as two processes of a fleet hold: for memory, one
object twice; for Redis, two clients with one key prefix.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpkit import Server
from mcpkit._errors import InvalidParams
from mcpkit.fleet import MemoryState, SharedState, StateUnavailable, open_state
from mcpkit.lowlevel import Listener
from mcpkit.tasks import NODE_DIED, TaskRecord, TaskRunner

Pair = Callable[[], Any]


@pytest.fixture(params=["memory", "redis"])
def pair(request: pytest.FixtureRequest) -> Pair:
    """``async with pair() as (a, b)``: two handles on one fresh shared state."""
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None

    @asynccontextmanager
    async def shared() -> AsyncIterator[tuple[SharedState, SharedState]]:
        if url is None:
            one = MemoryState()
            yield one, one
            await one.close()
            return
        prefix = f"test:{secrets.token_hex(4)}:"
        a, b = open_state(url, prefix=prefix), open_state(url, prefix=prefix)
        await a.start()
        await b.start()
        try:
            yield a, b
        finally:
            await a.close()
            await b.close()

    return shared


async def until(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    """Until *condition* holds: what another process does is seen by looking again."""
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 - nothing here to wait on but the condition
            await asyncio.sleep(0.01)


def test_values_secrets_and_expiry(pair: Pair) -> None:
    async def main() -> None:
        async with pair() as (a, b):
            assert await b.get("k") is None
            await a.put("k", b"v")
            assert await b.get("k") == b"v"
            await a.put("short", b"x", ttl=0.05)
            await asyncio.sleep(0.15)
            assert await b.get("short") is None
            secret = await a.shared_secret("key")
            assert len(secret) == 32 and await b.shared_secret("key") == secret
            await a.ping()

    asyncio.run(main())


def test_queues_are_read_whole_or_taken_whole(pair: Pair) -> None:
    async def main() -> None:
        async with pair() as (a, b):
            for value in (b"1", b"2", b"3", b"4"):
                await a.push("q", value, limit=3, ttl=60)
            assert await b.peek("q") == [b"2", b"3", b"4"]  # the last three, left in place
            assert await b.peek("q") == [b"2", b"3", b"4"]
            assert await b.pop_all("q") == [b"2", b"3", b"4"]  # taken
            assert await a.peek("q") == [] and await a.pop_all("q") == []

    asyncio.run(main())


def test_a_message_published_by_one_reaches_the_other(pair: Pair) -> None:
    async def main() -> None:
        async with pair() as (a, b):
            heard: list[bytes] = []
            stop = await b.subscribe("news", heard.append)
            await a.subscribe("other", lambda data: heard.append(b"wrong channel"))
            await a.publish("news", b"one")
            await until(lambda: heard == [b"one"])
            await stop()
            await a.publish("news", b"two")
            await a.publish("other", b"x")
            await until(lambda: b"wrong channel" in heard)
            assert heard == [b"one", b"wrong channel"]

    asyncio.run(main())


def test_events_replay_after_an_id_from_either_handle(pair: Pair) -> None:
    async def main() -> None:
        async with pair() as (a, b):
            ids = [await a.events.append("s1/0", data) for data in (b"", b"one", b"two", b"three")]
            assert len(set(ids)) == 4 and all(i.startswith("s1/0/") for i in ids)
            assert await b.events.after(ids[1]) == [(ids[2], b"two"), (ids[3], b"three")]
            assert await b.events.after(ids[3]) == []
            assert await b.events.after("s1/0/999999-0") is None  # never issued
            assert await b.events.after("nope") is None
            await b.events.forget("s1/0")
            assert await a.events.after(ids[1]) is None

    asyncio.run(main())


@asynccontextmanager
async def runners(pair: Pair) -> AsyncIterator[tuple[TaskRunner, TaskRunner]]:
    """Two task runners, as two processes of a fleet would have, on one fresh shared state."""
    async with pair() as (a, b):
        here, there = TaskRunner(poll_interval_ms=20), TaskRunner(poll_interval_ms=20)
        await here.share(a)
        await there.share(b)
        yield here, there


def test_a_task_is_seen_answered_and_cancelled_from_another_process(pair: Pair) -> None:
    async def main() -> None:
        async with runners(pair) as (here, there):

            async def asks(record: TaskRecord) -> dict[str, Any]:
                answer = await here.ask(record, "q", {"method": "elicitation/create", "params": {}})
                return {"content": [], "answer": answer}

            record = here.start(asks)
            await here.saved(record)
            seen = await there.lookup({"taskId": record.task_id})
            assert seen.remote and seen.status in ("working", "input_required")
            await until(lambda: record.status == "input_required")
            async with asyncio.timeout(60):  # the snapshot is written just after the move
                while (seen := await there.lookup({"taskId": record.task_id})).status != "input_required":  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            assert seen.wire_v2(detailed=True)["inputRequests"] == {"q": record.input_requests["q"]}
            await there.update(seen, {"q": {"action": "accept"}})
            await there.until_done(seen)
            assert seen.status == "completed" and seen.result == {
                "content": [],
                "answer": {"action": "accept"},
            }

            async def forever(record: TaskRecord) -> dict[str, Any]:
                await asyncio.Event().wait()
                return {}

            long = here.start(forever)
            await here.saved(long)
            remote = await there.lookup({"taskId": long.task_id})
            await there.cancel(remote)  # returns once the running process says it stopped
            assert remote.status == "cancelled" and long.status == "cancelled"
            # The runners' last snapshots are written before the stores close.
            await asyncio.gather(*(r.runner for r in (record, long) if r.runner), return_exceptions=True)
            await asyncio.gather(*here._chores, return_exceptions=True)
            with pytest.raises(InvalidParams):
                await there.lookup({"taskId": "unknown"})

    asyncio.run(main())


def test_a_partial_answer_is_in_the_snapshot_when_tasks_update_returns(pair: Pair) -> None:
    # tasks/update lands on the process running the task and answers one of its two questions: by
    # the time it is acknowledged, the snapshot every other process reads asks only the other one,
    # as the next tasks/get must see wherever it lands (the conformance suite's
    # tasks-mrtr-partial-fulfillment through a fleet; before, the ack came first and that
    # tasks/get could still see both).
    async def main() -> None:
        async with runners(pair) as (here, there):

            async def asks_two(record: TaskRecord) -> dict[str, Any]:
                questions = [
                    here.ask(record, key, {"method": "elicitation/create", "params": {}}) for key in "xy"
                ]
                return {"content": [], "answers": await asyncio.gather(*questions)}

            record = here.start(asks_two)
            await here.saved(record)
            async with asyncio.timeout(60):
                while len((await there.lookup({"taskId": record.task_id})).input_requests) < 2:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            await here.update(record, {"x": {"action": "accept"}})
            seen = await there.lookup({"taskId": record.task_id})
            assert seen.status == "input_required" and list(seen.input_requests) == ["y"]
            await here.update(record, {"y": {"action": "decline"}})
            await here.until_done(record)
            assert record.result == {"content": [], "answers": [{"action": "accept"}, {"action": "decline"}]}
            await asyncio.gather(*(r.runner for r in (record,) if r.runner), return_exceptions=True)

    asyncio.run(main())


def test_a_task_answered_where_it_runs_takes_the_answer_with_the_store_away() -> None:
    # The store goes away while the task waits: tasks/update on the process running it still
    # delivers the answers and is acknowledged (only the snapshot others read lags behind).
    class Away(MemoryState):
        away = False

        async def get(self, key: str) -> bytes | None:
            if self.away:
                raise StateUnavailable("stopped")
            return await super().get(key)

    async def main() -> None:
        state = Away()
        here = TaskRunner(poll_interval_ms=20)
        await here.share(state)

        async def asks(record: TaskRecord) -> dict[str, Any]:
            answer = await here.ask(record, "q", {"method": "elicitation/create", "params": {}})
            return {"content": [], "answer": answer}

        record = here.start(asks)
        await until(lambda: record.status == "input_required")
        state.away = True
        await here.update(record, {"q": {"action": "accept"}})
        await here.until_done(record)
        assert record.result == {"content": [], "answer": {"action": "accept"}}
        await asyncio.gather(*(r.runner for r in (record,) if r.runner), return_exceptions=True)
        await state.close()

    asyncio.run(main())


def test_a_task_of_a_dead_node_fails_and_stays_failed(pair: Pair) -> None:
    """Node "a" runs a task; once its heartbeat is gone, node "b" fails the task on reading it, and
    what "a" writes afterwards (it was only cut off, say) does not bring the task back."""

    async def main() -> None:
        async with pair() as (a, b):
            here, there = TaskRunner(), TaskRunner()
            await here.share(a, node="a")
            await there.share(b, node="b")
            await a.put("node:a", b"1", 60)  # the heartbeat fleet.node.Node writes
            release = asyncio.Event()

            async def work(record: TaskRecord) -> dict[str, Any]:
                await release.wait()
                return {"content": []}

            record = here.start(work, requestor="session:s1")
            await here.saved(record)
            assert (await there.lookup({"taskId": record.task_id}, "session:s1")).status == "working"  # alive
            await a.delete("node:a")
            seen = await there.lookup({"taskId": record.task_id}, "session:s1")
            assert (seen.status, seen.status_message) == ("failed", NODE_DIED)
            assert seen.error is not None and seen.error["message"] == NODE_DIED
            release.set()  # "a" finishes after all, and writes "completed": the failure stands
            assert record.runner is not None
            await record.runner
            again = await there.lookup({"taskId": record.task_id}, "session:s1")
            assert again.status == "failed" and record.status == "failed"
            # A task that goes on working after it was failed elsewhere is stopped when it next
            # writes its state.
            asked = asyncio.Event()

            async def asks(record: TaskRecord) -> dict[str, Any]:
                await asked.wait()
                await here.ask(record, "q", {"method": "elicitation/create", "params": {}})
                return {"content": []}

            second = here.start(asks, requestor="session:s1")
            await here.saved(second)
            assert (await there.lookup({"taskId": second.task_id}, "session:s1")).status == "failed"
            asked.set()
            assert second.runner is not None
            async with asyncio.timeout(60):
                await second.runner  # stopped, not waiting for an answer for ever
            assert second.status == "failed"
            # Listed under their requestor, for any process to read.
            assert await there.listed("session:s1") == [record.task_id, second.task_id]
            assert [r.status for r in await there.find_many([record.task_id, "gone"], "session:s1")] == [
                "failed"
            ]

    asyncio.run(main())


def test_changes_made_on_one_server_reach_listeners_of_another(pair: Pair) -> None:
    async def main() -> None:
        async with pair() as (a, b):
            one, two = Server("fleet"), Server("fleet")
            await one.join_fleet(a)
            await two.join_fleet(b)
            # One key for the fleet: a token sealed by one opens on the other.
            token = one.state_sealer.seal("tools/call", {"name": "x"}, {"a": 1}, ["b"])
            assert two.state_sealer.open(token, "tools/call", {"name": "x"}) == ({"a": 1}, ["b"])

            heard: list[tuple[str, dict[str, Any]]] = []

            class Outbound:
                async def notify(self, method: str, params: Any = None, *, related: Any = None) -> None:
                    heard.append((method, params))

            two.add_listener(Listener(Outbound(), kinds={"tools"}, uris={"note://1"}))  # type: ignore[arg-type]
            await one.notify_list_changed("tools")
            await one.notify_resource_updated("note://1")
            await one.notify_resource_updated("note://other")
            await until(lambda: len(heard) == 2)
            assert heard == [
                ("notifications/tools/list_changed", {}),
                ("notifications/resources/updated", {"uri": "note://1"}),
            ]

    asyncio.run(main())
