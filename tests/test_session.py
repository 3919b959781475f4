"""The async JSON-RPC endpoint over the in-memory transport."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcpkit import ConnectionClosed, InvalidParams, RequestTimeout, RPCError
from mcpkit._jsonrpc import Request
from mcpkit.session import Peer, first_step
from mcpkit.transports.memory import memory_pair

from ._clock import run_in_virtual_time


def run(coro: Any) -> Any:
    """Run *coro* on a loop whose clock jumps to the next timer (over memory streams nothing waits
    for the machine): a timeout fires after every step due before it, however slow the machine."""
    return run_in_virtual_time(asyncio.wait_for(coro, 10))


async def pair(handler: Any) -> tuple[Peer, Peer, list[asyncio.Task[None]]]:
    a, b = memory_pair()
    client = Peer(a)
    server = Peer(b, on_request=handler)
    tasks = [asyncio.ensure_future(client.run()), asyncio.ensure_future(server.run())]
    return client, server, tasks


def test_results_and_errors_reach_the_caller() -> None:
    async def handler(request: Request) -> Any:
        if request.method == "fail":
            raise InvalidParams("bad", {"field": "x"})
        if request.method == "crash":
            raise ValueError("boom")
        return {"echo": request.params}

    async def main() -> None:
        client, _, _ = await pair(handler)
        assert await client.request("echo", {"a": 1}) == {"echo": {"a": 1}}
        with pytest.raises(InvalidParams) as info:
            await client.request("fail")
        assert info.value.data == {"field": "x"}
        with pytest.raises(RPCError) as crashed:
            await client.request("crash")
        assert crashed.value.code == -32603 and "boom" in crashed.value.message

    run(main())


def test_concurrent_requests_are_answered_out_of_order() -> None:
    async def handler(request: Request) -> Any:
        await asyncio.sleep(float(request.params["delay"]))  # type: ignore[index]
        return request.params

    async def main() -> None:
        client, _, _ = await pair(handler)
        done: list[float] = []

        async def one(delay: float) -> None:
            await client.request("x", {"delay": delay})
            done.append(delay)

        await asyncio.gather(one(0.05), one(0.0))
        assert done == [0.0, 0.05]

    run(main())


def test_timeout_cancels_the_handler_and_no_answer_is_sent() -> None:
    started = asyncio.Event
    state: dict[str, Any] = {}

    async def handler(request: Request) -> Any:
        state["started"].set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return {}

    async def main() -> None:
        state["started"] = started()
        a, b = memory_pair()
        client = Peer(a)
        sent: list[bytes] = []
        original = b.send

        async def spy(message: bytes) -> None:
            sent.append(message)
            await original(message)

        b.send = spy  # type: ignore[method-assign]
        server = Peer(b, on_request=handler)
        asyncio.ensure_future(client.run())
        asyncio.ensure_future(server.run())
        with pytest.raises(RequestTimeout):
            await client.request("slow", timeout=0.2)
        await asyncio.sleep(0.05)
        assert state.get("cancelled") is True
        assert sent == []  # "MUST NOT send a response for a cancelled request"

    run(main())


def test_closing_fails_every_pending_request() -> None:
    async def handler(request: Request) -> Any:
        await asyncio.sleep(30)

    async def main() -> None:
        client, server, _ = await pair(handler)
        pending = [asyncio.ensure_future(client.request("x")) for _ in range(3)]
        await asyncio.sleep(0.01)
        await server.transport.aclose()
        for future in pending:
            with pytest.raises(ConnectionClosed):
                await future

    run(main())


def test_reused_id_is_refused_while_the_first_is_running() -> None:
    gate = asyncio.Event

    async def main() -> None:
        opened = gate()

        async def handler(request: Request) -> Any:
            await opened.wait()
            return {"ok": True}

        a, b = memory_pair()
        server = Peer(b, on_request=handler)
        asyncio.ensure_future(server.run())
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x"}).encode()
        await a.send(line)
        await a.send(line)
        first = json.loads(await a.receive())
        assert first["id"] == 1 and first["error"]["code"] == -32600
        opened.set()
        second = json.loads(await a.receive())
        assert second == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}

    run(main())


class Routed:
    """A transport with a stream per request: records what each message was said to belong to."""

    def __init__(self) -> None:
        self.sent: list[tuple[Any, Any, bool]] = []
        self.done = asyncio.Event()

    async def receive(self) -> bytes:
        raise EOFError

    async def send(self, message: bytes) -> None:
        await self.send_related(message, None, False)

    async def send_related(self, message: bytes, related: Any, final: bool) -> None:
        self.sent.append((json.loads(message) if message else None, related, final))
        if final:
            self.done.set()

    async def close_stream(self, related: Any) -> None:
        self.sent.append(("close", related, False))

    async def aclose(self) -> None:
        pass


def test_every_message_names_the_request_it_belongs_to() -> None:
    async def handler(request: Request) -> Any:
        if request.method == "slow":
            await asyncio.sleep(30)
        await peer.notify("notifications/progress", {"progress": 1}, related=request.id)
        await peer.notify("notifications/tools/list_changed")
        return {}

    transport = Routed()
    peer = Peer(transport, on_request=handler)

    async def main() -> None:
        await peer.deliver(Request(id="a", method="work"))
        await asyncio.wait_for(transport.done.wait(), 5)
        assert transport.sent == [
            ({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}, "a", False),
            ({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, None, False),
            ({"jsonrpc": "2.0", "id": "a", "result": {}}, "a", True),
        ]
        # A cancelled request owes no answer, but its stream is told it is over.
        transport.sent.clear()
        transport.done.clear()
        await peer.deliver(Request(id="b", method="slow"))
        await asyncio.sleep(0)
        assert peer.cancel_incoming("b")
        await asyncio.wait_for(transport.done.wait(), 5)
        assert transport.sent == [(None, "b", True)]

    run(main())


def test_a_request_cancelled_before_it_starts_still_tells_its_stream_nothing_is_owed() -> None:
    """The race CI caught: notifications/cancelled handled before the request's task first ran.
    Its handler never runs, and the routed transport must still hear the empty final message,
    or the HTTP POST carrying the request waits for ever."""
    started = False

    async def handler(request: Request) -> Any:
        nonlocal started
        started = True
        return {}

    transport = Routed()
    peer = Peer(transport, on_request=handler)

    async def main() -> None:
        await peer.deliver(Request(id="c", method="work"))
        assert peer.cancel_incoming("c")  # no await in between: the task has not taken a step
        await asyncio.wait_for(transport.done.wait(), 5)
        assert transport.sent == [(None, "c", True)] and not started

    run(main())


def test_a_batch_of_one_is_answered_with_an_array() -> None:
    async def handler(request: Request) -> Any:
        return {"n": request.id}

    transport = Routed()
    peer = Peer(transport, on_request=handler)

    async def main() -> None:
        await peer.deliver([Request(id=4, method="x")])
        await asyncio.wait_for(transport.done.wait(), 5)
        assert transport.sent == [([{"jsonrpc": "2.0", "id": 4, "result": {"n": 4}}], 4, True)]

    run(main())


def test_a_handler_that_is_a_future_is_answered_from_it_without_a_task() -> None:
    """on_request may return a future (a def tool's worker-thread job): its result, its error, or
    its cancellation (no answer; a routed transport is told nothing is owed)."""
    futures: dict[Any, asyncio.Future[Any]] = {}

    def handler(request: Request) -> Any:
        futures[request.id] = future = asyncio.get_running_loop().create_future()
        return future

    transport = Routed()
    peer = Peer(transport, on_request=handler)

    async def main() -> None:
        for request_id in ("ok", "bad", "crash", "gone"):
            await peer.deliver(Request(id=request_id, method="work"))
        assert set(peer._running) == {"ok", "bad", "crash", "gone"}
        futures["ok"].set_result({"n": 1})
        futures["bad"].set_exception(InvalidParams("no"))
        futures["crash"].set_exception(ValueError("boom"))
        assert peer.cancel_incoming("gone")
        for _ in range(5):
            await asyncio.sleep(0)
        assert not peer._running
        by_id = {related: (message, final) for message, related, final in transport.sent}
        assert by_id["ok"] == ({"jsonrpc": "2.0", "id": "ok", "result": {"n": 1}}, True)
        assert by_id["bad"][0]["error"]["code"] == -32602
        assert by_id["crash"][0]["error"]["code"] == -32603
        assert by_id["gone"] == (None, True)

    run(main())


def test_a_future_still_running_is_waited_for_by_drain_and_then_cancelled() -> None:
    def handler(request: Request) -> Any:
        return asyncio.get_running_loop().create_future()  # never settled

    transport = Routed()
    peer = Peer(transport, on_request=handler)

    async def main() -> None:
        await peer.deliver(Request(id=1, method="work"))
        await peer.drain(0.05)
        await asyncio.sleep(0)
        assert not peer._running
        assert transport.sent == [(None, 1, True)]

    run(main())


def recording_handler() -> tuple[list[Any], Callable[[Request], Awaitable[Any]]]:
    """A request handler that notes the id of each request it starts on, and the list it notes in."""
    started: list[Any] = []

    async def handler(request: Request) -> Any:
        started.append(request.id)
        return {}

    return started, handler


def test_requests_cancelled_before_they_start_by_cancel_all_or_drain_are_forgotten() -> None:
    """A request's task that never takes a step never runs the code that would take it out of the
    running ones, await its handler's coroutine and tell its stream nothing is owed: the places that
    cancel see to it (under filterwarnings=error an unawaited coroutine fails the test)."""
    started, handler = recording_handler()

    async def main() -> None:
        transport = Routed()
        peer = Peer(transport, on_request=handler)
        for request_id in ("a", "b"):
            await peer.deliver(Request(id=request_id, method="work"))
        peer.cancel_all()  # no await in between: neither task has taken a step
        for _ in range(5):
            await asyncio.sleep(0)
        assert not peer._running and not started
        assert sorted(transport.sent) == [(None, "a", True), (None, "b", True)]

        transport = Routed()
        peer = Peer(transport, on_request=handler)
        await peer.deliver(Request(id="c", method="work"))
        await peer.drain(0)  # a grace of nothing: cancelled, maybe before its first step
        for _ in range(5):
            await asyncio.sleep(0)
        assert not peer._running
        assert transport.sent in (
            [(None, "c", True)],
            [({"jsonrpc": "2.0", "id": "c", "result": {}}, "c", True)],
        )

    run(main())
    gc.collect()


def test_a_request_the_loop_cancels_at_shutdown_before_it_starts_is_forgotten() -> None:
    """The loop cancels every task left when it shuts down; the peer was closed by then."""
    started, handler = recording_handler()

    async def main() -> None:
        transport = Routed()
        peer = Peer(transport, on_request=handler)
        await peer.deliver(Request(id="d", method="work"))
        peer.close()
        for task in asyncio.all_tasks():  # what asyncio.run does with the tasks left at its end
            if task is not asyncio.current_task():
                task.cancel()
        for _ in range(5):
            await asyncio.sleep(0)
        assert not peer._running and not started
        assert transport.sent == [(None, "d", True)]

    asyncio.run(main())  # not run(): its wait_for would be one of the tasks cancelled
    gc.collect()


def test_a_request_counts_against_max_in_flight_until_its_answer_is_sent() -> None:
    async def handler(request: Request) -> Any:
        return {"n": request.id}

    async def main() -> None:
        a, b = memory_pair()
        peer = Peer(b, on_request=handler, max_in_flight=1)
        await peer.deliver(Request(id=1, method="x"))
        await peer.deliver(Request(id=2, method="x"))  # the first has not run yet: refused
        for _ in range(5):
            await asyncio.sleep(0)
        assert not peer._running
        answers = {answer["id"]: answer for answer in [json.loads(await a.receive()) for _ in range(2)]}
        assert answers[2]["error"]["code"] == -32000
        assert answers[1] == {"jsonrpc": "2.0", "id": 1, "result": {"n": 1}}

    run(main())


async def _by_hand(coro: Any) -> Any:
    """Await *coro* as the HTTP server does: its first step by hand, the rest through go_on."""
    finished, outcome = first_step(coro)
    return outcome if finished else await outcome


@pytest.mark.parametrize("how", ["await", "by hand"])
def test_first_step_and_go_on_await_a_coroutine_as_await_would(how: str) -> None:
    async def main() -> list[Any]:
        loop = asyncio.get_running_loop()
        seen: list[Any] = []

        def run(coro: Any) -> Any:
            return coro if how == "await" else _by_hand(coro)

        async def steps(value: Any) -> Any:
            await asyncio.sleep(0)  # a bare yield
            future = loop.create_future()
            loop.call_soon(future.set_result, value)
            return await future

        async def fails() -> None:
            await asyncio.sleep(0)
            raise ValueError("after a wait")

        async def cleans_up(started: asyncio.Event) -> str:
            try:
                started.set()
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                await asyncio.sleep(0)  # still waits for things while it cleans up
                return "cleaned up"
            return "not cancelled"

        async def stays_cancelled(started: asyncio.Event) -> None:
            started.set()
            await asyncio.sleep(10)

        async def at_once() -> str:
            return "at once"

        seen.append(await run(at_once()))
        seen.append(await run(steps(42)))
        with pytest.raises(ValueError, match="after a wait"):
            await run(fails())
        for body in (cleans_up, stays_cancelled):
            started = asyncio.Event()
            task = asyncio.ensure_future(run(body(started)))
            await started.wait()
            task.cancel()
            try:
                seen.append(await task)
            except asyncio.CancelledError:
                seen.append("cancelled")
        return seen

    assert asyncio.run(main()) == ["at once", 42, "cleaned up", "cancelled"]
