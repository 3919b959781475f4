"""``tools/call`` of a plain tool by ``ToolsAPI.start_now``.

A ``def`` tool's call is the future of its worker thread's job, with no task, and its answer is sent
from that future's done-callback; an ``async def`` tool's is one coroutine, without ``_handle`` and
``_call_tool``. These tests hold it to the general path (a task awaiting :meth:`handle`): the same
answers for every outcome, the calls it must leave to the general path, cancellation by
``notifications/cancelled`` and by the client going away, and a transport that cannot take an
answer at once.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from mcpkit import Context, InvalidParams, RPCError, Server, ToolError
from mcpkit._connection import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION
from mcpkit._mrtr import InputRequired
from mcpkit.session import Peer
from mcpkit.transports.memory import MemoryTransport

VERSION = "2025-11-25"
STATELESS = "2026-07-28"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))  # a hang bound: threads start slowly on a busy machine


class NowaitTransport(MemoryTransport):
    """A memory transport that, like stdio's, can take a message without waiting (unless told not to)."""

    def __init__(self, inbox: asyncio.Queue[bytes], outbox: asyncio.Queue[bytes]) -> None:
        super().__init__(inbox, outbox)
        self.accepting = True
        self.sent: list[dict[str, Any]] = []
        self.taken_at_once = 0

    def send_nowait(self, message: bytes) -> bool:
        if not self.accepting or self._closed:
            return False
        self.taken_at_once += 1
        self.sent.append(json.loads(message))
        self._outbox.put_nowait(message)
        return True

    async def send(self, message: bytes) -> None:
        self.sent.append(json.loads(message))
        await super().send(message)


class ThreadSendTransport(NowaitTransport):
    """A :class:`NowaitTransport` that, like stdio's, also takes an answer from a worker thread
    (unless told not to), and records which thread sent what."""

    def __init__(self, inbox: asyncio.Queue[bytes], outbox: asyncio.Queue[bytes]) -> None:
        super().__init__(inbox, outbox)
        self.from_threads = True
        self.loop = asyncio.get_running_loop()
        self.sent_from: list[tuple[int, int]] = []  # (thread ident, message id)

    def send_from_thread(self, message: bytes) -> bool:
        if not self.from_threads or self._closed:
            return False
        decoded = json.loads(message)
        self.sent_from.append((threading.get_ident(), decoded["id"]))
        self.sent.append(decoded)
        self.loop.call_soon_threadsafe(self._outbox.put_nowait, message)
        return True


class Gate(threading.Event):
    """What the ``wait`` tool blocks on; ``entered`` is set once a call of it runs on its thread."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()

    async def running(self) -> None:
        """Wait (generously: a busy machine starts threads slowly) until ``wait`` runs."""
        assert await asyncio.to_thread(self.entered.wait, 30), "the wait tool never ran"


def make_server(**options: Any) -> tuple[Server, Gate]:
    server = Server("defs", "1.0", **options)
    gate = Gate()

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    def total(a: int, b: int) -> int:
        return a + b

    @server.tool
    def refuse() -> str:
        raise ToolError("not today")

    @server.tool
    def explode() -> str:
        raise RuntimeError("kaboom")

    @server.tool
    def invalid() -> str:
        raise InvalidParams("bad input", {"field": "x"})

    @server.tool
    def ask() -> str:
        raise InputRequired({})

    @server.tool
    def opaque() -> Any:
        return object()  # cannot be shaped into content: answered -32603

    @server.tool
    def whoami(ctx: Context) -> str:
        return f"{ctx.request_id} {ctx.method} {ctx.protocol_version} {ctx.connection is not None}"

    @server.tool
    def wait() -> str:
        gate.entered.set()
        gate.wait(30)
        return "late"

    @server.tool(timeout=5)
    def timed() -> str:
        return "in time"

    @server.tool(rate_limit="100/s")
    def limited() -> str:
        return "allowed"

    @server.tool(task_support="optional")
    def tasky() -> str:
        return "as a call"

    @server.tool(blocking=False)
    def inline() -> str:
        return "on the loop"

    @server.tool
    async def aecho(text: str) -> str:
        return text

    @server.tool
    async def atotal(a: int, b: int) -> int:
        return a + b

    @server.tool
    async def arefuse() -> str:
        raise ToolError("not today")

    @server.tool
    async def aexplode() -> str:
        raise RuntimeError("kaboom")

    @server.tool
    async def ainvalid() -> str:
        raise InvalidParams("bad input", {"field": "x"})

    @server.tool
    async def aask() -> str:
        raise InputRequired({})

    @server.tool
    async def aopaque() -> Any:
        return object()

    @server.tool
    async def awhoami(ctx: Context) -> str:
        return f"{ctx.request_id} {ctx.method} {ctx.protocol_version} {ctx.connection is not None}"

    @server.tool(timeout=5)
    async def atimed() -> str:
        return "in time"

    @server.tool(task_support="optional")
    async def atasky() -> str:
        return "as a call"

    return server, gate


#: (tool, arguments, whether start_now takes it)
CALLS: list[tuple[str, Any, bool]] = [
    ("echo", {"text": "hi"}, True),
    ("total", {"a": 2, "b": 3}, True),
    ("refuse", {}, True),
    ("explode", {}, True),
    ("invalid", {}, True),
    ("ask", {}, True),
    ("whoami", None, True),
    ("opaque", {}, True),
    ("echo", {"text": 5}, False),  # arguments that do not bind: answered by the general path
    ("echo", [1], False),
    ("timed", {}, False),
    ("limited", {}, False),
    ("tasky", {}, False),
    ("inline", {}, False),
    ("aecho", {"text": "hi"}, True),  # async tools: one coroutine, no _handle or _call_tool
    ("atotal", {"a": 2, "b": 3}, True),
    ("arefuse", {}, True),
    ("aexplode", {}, True),
    ("ainvalid", {}, True),
    ("aask", {}, True),
    ("aopaque", {}, True),
    ("awhoami", None, True),
    ("aecho", {"text": 5}, False),
    ("atimed", {}, False),
    ("atasky", {}, False),
    ("missing", {}, False),
]


#: A 2026-07-28 request's _meta: that revision has no session, each request says who sends it.
STATELESS_META = {
    META_PROTOCOL_VERSION: STATELESS,
    META_CLIENT_CAPABILITIES: {},
    META_CLIENT_INFO: {"name": "t", "version": "1"},
}


async def open_session(
    server: Server, version: str = VERSION, kind: type[NowaitTransport] = NowaitTransport
) -> tuple[Peer, NowaitTransport, asyncio.Task[None]]:
    to_server: asyncio.Queue[bytes] = asyncio.Queue()
    to_client: asyncio.Queue[bytes] = asyncio.Queue()
    ours = MemoryTransport(to_client, to_server)
    theirs = kind(to_server, to_client)
    client = Peer(ours)
    asyncio.ensure_future(client.run())
    serving = asyncio.ensure_future(server.serve(theirs, drain_seconds=0.2))
    if version != STATELESS:
        await client.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        )
        await client.notify("notifications/initialized")
    return client, theirs, serving


async def outcome(client: Peer, name: str, arguments: Any, version: str = VERSION) -> Any:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    if version == STATELESS:
        params["_meta"] = STATELESS_META
    try:
        return await client.request("tools/call", params)
    except RPCError as exc:
        return ("error", exc.code, exc.message, exc.data)


@pytest.mark.parametrize("kind", [NowaitTransport, ThreadSendTransport], ids=["loop", "threads"])
@pytest.mark.parametrize("version", [VERSION, STATELESS])
@pytest.mark.parametrize("options", [{}, {"mask_errors": True}], ids=["plain", "masked"])
def test_every_outcome_is_answered_as_the_general_path_answers_it(
    options: dict[str, Any], version: str, kind: type[NowaitTransport]
) -> None:
    async def answers(fast: bool) -> tuple[list[Any], list[bool]]:
        server, _ = make_server(**options)
        taken: list[bool] = []
        start_now = server.start_now

        def spy(*args: Any) -> Any:
            started = start_now(*args) if fast else None
            taken.append(started is not None)
            return started

        server.start_now = spy  # type: ignore[method-assign,assignment]
        client, _, _ = await open_session(server, version, kind)
        results = [await outcome(client, name, arguments, version) for name, arguments, _ in CALLS]
        for result in results:  # sealed with each server's own key, at its own time
            if isinstance(result, dict) and isinstance(result.get("requestState"), str):
                result["requestState"] = "sealed"
        return results, taken

    async def main() -> None:
        fast, taken = await answers(True)
        general, _ = await answers(False)
        assert fast == general
        if version == STATELESS:
            # A tool taking a Context may ask for input in rounds: 2026-07-28 leaves it to handle().
            assert taken == [expected and "whoami" not in name for name, _, expected in CALLS]
            by_name = dict(zip([f"{name}{i}" for i, (name, _, _) in enumerate(CALLS)], fast, strict=True))
            assert by_name["echo0"]["resultType"] == "complete" and "_meta" in by_name["echo0"]
            assert (
                by_name["ask5"]["resultType"] == "input_required"
                and by_name["aask19"]["requestState"] == "sealed"
            )
            assert by_name["awhoami21"]["content"][0]["text"].endswith(f"tools/call {STATELESS} True")
            return
        assert taken == [expected for _, _, expected in CALLS]
        by_name = dict(zip([f"{name}{i}" for i, (name, _, _) in enumerate(CALLS)], fast, strict=True))
        assert by_name["echo0"]["content"] == [{"type": "text", "text": "hi"}]
        assert by_name["total1"]["structuredContent"] == {"result": 5}
        assert by_name["refuse2"]["isError"] is True
        assert by_name["invalid4"][:2] == ("error", -32602)
        assert by_name["ask5"][:2] == ("error", -32603)
        assert by_name["opaque7"][:2] == ("error", -32603)
        assert by_name["aecho14"]["content"] == [{"type": "text", "text": "hi"}]
        assert by_name["atotal15"]["structuredContent"] == {"result": 5}
        assert by_name["arefuse16"]["isError"] is True
        assert "kaboom" in by_name["aexplode17"]["content"][0]["text"] or options
        assert by_name["ainvalid18"][:2] == ("error", -32602)
        assert by_name["aask19"][:2] == ("error", -32603)
        assert by_name["aopaque20"][:2] == ("error", -32603)
        assert by_name["awhoami21"]["content"][0]["text"].endswith("tools/call 2025-11-25 True")

    run(main())


def test_a_lone_def_call_is_answered_from_its_worker_thread_and_only_once() -> None:
    async def main() -> None:
        server, gate = make_server()
        client, transport, _ = await open_session(server, kind=ThreadSendTransport)
        assert isinstance(transport, ThreadSendTransport)
        loop_thread = threading.get_ident()
        # A lone call: its worker thread sends the answer, and the loop sends nothing more for it.
        assert (await outcome(client, "echo", {"text": "a"}))["content"] == [{"type": "text", "text": "a"}]
        assert len(transport.sent_from) == 1 and transport.sent_from[0][0] != loop_thread
        # What the tool raised, and what could not be shaped, are the loop's to answer.
        assert (await outcome(client, "refuse", {}))["isError"] is True  # a ToolError is a result
        assert (await outcome(client, "explode", {}))["isError"] is True
        assert (await outcome(client, "opaque", {}))[:2] == ("error", -32603)
        assert (await outcome(client, "invalid", {}))[:2] == ("error", -32602)
        assert (await outcome(client, "total", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
        assert [thread != loop_thread for thread, _ in transport.sent_from] == [True, True]
        # An async tool's answer is the loop's.
        assert (await outcome(client, "aecho", {"text": "b"}))["content"][0]["text"] == "b"
        assert len(transport.sent_from) == 2
        # With another call running, answers are the loop's (they go out together from there).
        waiting = asyncio.ensure_future(outcome(client, "wait", {}))
        await gate.running()
        assert (await outcome(client, "echo", {"text": "c"}))["content"][0]["text"] == "c"
        (answer_c,) = [
            m for m in transport.sent if m.get("result", {}).get("content", [{}])[0].get("text") == "c"
        ]
        assert answer_c["id"] not in [sent_id for _, sent_id in transport.sent_from]
        gate.set()  # "wait" now runs alone, as it began: its answer is its thread's again
        assert (await waiting)["content"][0]["text"] == "late"
        assert len(transport.sent_from) == 3
        # A transport that declines: the loop answers, once.
        transport.from_threads = False
        assert (await outcome(client, "echo", {"text": "d"}))["content"][0]["text"] == "d"
        await asyncio.sleep(0.05)
        ids = [message["id"] for message in transport.sent if "id" in message]
        assert len(ids) == len(set(ids))  # every call answered exactly once

    run(main())


class _PopLog(dict[Any, Any]):
    """A running-requests table that notes every entry taken out of it."""

    def __init__(self) -> None:
        super().__init__()
        self.popped: list[Any] = []

    def pop(self, key: Any, *default: Any) -> Any:
        self.popped.append(key)
        return super().pop(key, *default)


def test_an_id_answered_from_a_worker_thread_is_free_again_at_once() -> None:
    # Once its answer is out, a client may send the same id again, before the loop has heard that
    # the job is done; and the old job's settling must not touch the new request.
    async def main() -> None:
        transport = ThreadSendTransport(asyncio.Queue(), asyncio.Queue())
        peer = Peer(transport)
        running = peer._running = _PopLog()
        loop = asyncio.get_running_loop()
        old = loop.create_future()
        peer._running[7] = old
        old.add_done_callback(peer._answerer(7))
        del peer._running[7]
        answer = peer.thread_answerer(7)
        assert answer is not None
        peer._running[7] = old
        assert peer.thread_answerer(8) is None  # 7 runs: 8 is not a lone call
        sent = await loop.run_in_executor(None, answer, old, lambda: {"content": []})
        assert sent and 7 not in peer._running
        new = loop.create_future()
        peer._running[7] = new  # the same id again, as the loop would start it
        # Offered the old job again, the answerer finds a later request under its id: it declines,
        # without taking that request's entry out even for a moment (its done-callback, finding
        # none, would take it for answered).
        popped = len(running.popped)
        assert not await loop.run_in_executor(None, answer, old, lambda: {"content": []})
        assert peer._running[7] is new
        assert len(running.popped) == popped
        old.set_result(None)  # the old job settles on the loop
        await asyncio.sleep(0)
        assert peer._running[7] is new
        assert [message["id"] for message in transport.sent] == [7]
        # A maker that raises: nothing sent, the request still runs, the error goes to the caller.
        del peer._running[7]
        answer = peer.thread_answerer(7)
        assert answer is not None
        peer._running[7] = new

        def broken() -> Any:
            raise ValueError("unshapeable")

        with pytest.raises(ValueError):
            await loop.run_in_executor(None, answer, new, broken)
        assert peer._running[7] is new
        # A cancelled request is never answered from the thread.
        new.cancel()
        assert not await loop.run_in_executor(None, answer, new, lambda: {"content": []})
        assert [message["id"] for message in transport.sent] == [7]

    run(main())


def test_answers_go_through_send_nowait_and_fall_back_to_send() -> None:
    async def main() -> None:
        server, _ = make_server()
        client, transport, _ = await open_session(server)
        before = transport.taken_at_once
        assert (await outcome(client, "echo", {"text": "a"}))["content"] == [{"type": "text", "text": "a"}]
        assert transport.taken_at_once == before + 1
        transport.accepting = False  # as stdio over its high-water mark: the answer waits in a task
        assert (await outcome(client, "echo", {"text": "b"}))["content"] == [{"type": "text", "text": "b"}]
        assert (await outcome(client, "aecho", {"text": "c"}))["content"] == [{"type": "text", "text": "c"}]
        assert transport.taken_at_once == before + 1

    run(main())


def test_a_cancelled_call_is_never_answered_and_serving_goes_on() -> None:
    async def main() -> None:
        server, gate = make_server()
        client, transport, _ = await open_session(server)
        future = await client.send_request(99, "tools/call", {"name": "wait"})
        await gate.running()
        await client.cancel(99, "changed my mind")
        await asyncio.sleep(0.05)
        gate.set()
        assert (await outcome(client, "echo", {"text": "after"}))["content"][0]["text"] == "after"
        await asyncio.sleep(0.05)
        assert not future.done()
        assert all(message.get("id") != 99 for message in transport.sent)

    run(main())


def test_a_cancelled_async_call_is_cancelled_where_it_awaits_and_never_answered() -> None:
    async def main() -> None:
        server, _ = make_server()
        stopped: list[str] = []

        @server.tool
        async def linger() -> str:
            stopped.append("awaiting")
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                stopped.append("cancelled")
                raise
            return "late"

        client, transport, _ = await open_session(server)
        future = await client.send_request(98, "tools/call", {"name": "linger"})
        async with asyncio.timeout(30):  # the tool is awaiting (not a nap: a busy machine is slow)
            while not stopped:  # noqa: ASYNC110 (the tool's first step says so)
                await asyncio.sleep(0.01)
        await client.cancel(98, "changed my mind")
        assert (await outcome(client, "aecho", {"text": "after"}))["content"][0]["text"] == "after"
        await asyncio.sleep(0.05)
        assert stopped == ["awaiting", "cancelled"]
        assert not future.done()
        assert all(message.get("id") != 98 for message in transport.sent)

    run(main())


def test_a_call_running_when_the_client_goes_away_is_cancelled_after_the_grace() -> None:
    async def main() -> None:
        server, gate = make_server()
        client, transport, serving = await open_session(server)
        await client.send_request(7, "tools/call", {"name": "wait"})
        await gate.running()
        await client.transport.aclose()
        await asyncio.wait_for(serving, 30)  # drain_seconds=0.2, then the call is cancelled
        gate.set()
        assert all(message.get("id") != 7 for message in transport.sent)

    run(main())


def test_a_tools_call_handler_set_in_place_of_ours_is_never_bypassed() -> None:
    async def main() -> None:
        server, _ = make_server()
        seen: list[str] = []
        original = server._call_tool

        async def audited(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
            seen.append(params["name"])
            return await original(params, ctx)

        client, _, _ = await open_session(server)
        assert (await outcome(client, "aecho", {"text": "x"}))["content"][0]["text"] == "x"  # ours
        server.set_handler("tools/call", audited)  # after start_now has found ours once
        assert (await outcome(client, "echo", {"text": "x"}))["content"][0]["text"] == "x"
        assert (await outcome(client, "aecho", {"text": "x"}))["content"][0]["text"] == "x"
        assert seen == ["echo", "aecho"]
        server.set_handler("tools/call", original)  # ours again: the short way again
        assert (await outcome(client, "echo", {"text": "x"}))["content"][0]["text"] == "x"
        assert seen == ["echo", "aecho"]

    run(main())


def test_a_subclass_overriding_run_tool_is_never_bypassed() -> None:
    class Audited(Server):
        calls = 0

        async def _run_tool(self, *args: Any) -> dict[str, Any]:
            Audited.calls += 1
            return await super()._run_tool(*args)

    async def main() -> None:
        server = Audited("audited")

        @server.tool
        def echo(text: str) -> str:
            return text

        client, _, _ = await open_session(server)
        assert (await outcome(client, "echo", {"text": "y"}))["content"][0]["text"] == "y"
        assert Audited.calls == 1

    run(main())


def test_a_subclass_overriding_handle_sees_every_tool_call() -> None:
    seen: list[str] = []

    class Audited(Server):
        async def handle(self, request: Any, *args: Any) -> Any:
            seen.append(request.method)
            return await super().handle(request, *args)

    async def main() -> None:
        server = Audited("audited")

        @server.tool
        def echo(text: str) -> str:
            return text

        @server.tool
        async def aecho(text: str) -> str:
            return text

        client, _, _ = await open_session(server)
        assert (await outcome(client, "echo", {"text": "y"}))["content"][0]["text"] == "y"
        assert (await outcome(client, "aecho", {"text": "z"}))["content"][0]["text"] == "z"
        assert seen.count("tools/call") == 2

    run(main())


def test_a_def_call_started_for_an_outbound_that_is_not_a_peer_finds_the_loop_itself() -> None:
    """start_now takes the loop from a Peer (asking asyncio costs a system call); any other
    outbound, and run_sync's callers without a loop, have it found for them."""
    from mcpkit._connection import Scope
    from mcpkit._jsonrpc import Request
    from mcpkit._versions import Era

    server, _ = make_server()

    class Outbound:  # what start_now needs of one, here: nothing (echo takes no Context)
        pass

    async def main() -> None:
        request = Request(id=1, method="tools/call", params={"name": "echo", "arguments": {"text": "hi"}})
        scope = Scope(version=VERSION, era=Era.HANDSHAKE)
        started = server.start_now(request, scope, Outbound(), None)  # type: ignore[arg-type]
        assert isinstance(started, asyncio.Future)
        result = await started
        assert result["content"] == [{"type": "text", "text": "hi"}]

    run(main())
