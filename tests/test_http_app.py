"""The Streamable HTTP ASGI app driven in process (no socket): bookkeeping that must stay bounded.

What crosses the wire is tested against a real server in ``tests/e2e/test_http.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.transports.http import StreamableHTTPApp

from ._asgi import asgi_request
from ._held import HeldTransport, held_protocol
from .conftest import initialize_request

#: How long a step that must happen is waited for: generous, since a busy machine is slow to take
#: it, and a step that never happens still fails its test (only later).
PATIENCE = 60.0


async def until(check: Callable[[], object]) -> None:
    """Poll *check* until it holds or PATIENCE has passed; the assertion after it says what failed."""
    deadline = asyncio.get_running_loop().time() + PATIENCE
    while not check() and asyncio.get_running_loop().time() < deadline:  # noqa: ASYNC110 (no event to wait on)
        await asyncio.sleep(0.01)


def make_app() -> StreamableHTTPApp:
    server = Server("bounded")

    @server.tool
    async def echo(text: str) -> str:
        return text

    app: StreamableHTTPApp = server.http_app()
    return app


async def post(app: StreamableHTTPApp, message: dict[str, Any], **headers: str) -> list[dict[str, Any]]:
    sent_headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        *((k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()),
    ]
    return await asgi_request(app, "POST", sent_headers, json.dumps(message).encode())


def test_json_answers_leave_no_stream_behind_in_a_session() -> None:
    """Each POST answered with JSON once kept a resumable-stream record for ever (a leak that also
    made every request slower than the last)."""

    async def main() -> None:
        app = make_app()
        init = initialize_request("2025-11-25")
        started = await post(app, init)
        session_id = dict(started[0]["headers"])[b"mcp-session-id"].decode()
        call = {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        }
        for request_id in range(1, 201):
            answer = await post(app, {**call, "id": request_id}, mcp_session_id=session_id)
            assert answer[0]["status"] == 200 and json.loads(answer[1]["body"])["id"] == request_id
            assert dict(answer[0]["headers"])[b"content-length"] == str(len(answer[1]["body"])).encode()
        assert app.sessions[session_id].streams == {}

    asyncio.run(main())


# -- one path: what the session layer now does for HTTP too --------------------------------------


class Exchange:
    """One HTTP exchange driven by hand: the body once, then nothing until :meth:`disconnect`."""

    def __init__(
        self,
        app: StreamableHTTPApp,
        message: Any,
        method: str = "POST",
        path: str = "/mcp",
        query: str = "",
        **headers: str,
    ) -> None:
        self.body = json.dumps(message).encode() if message is not None else b""
        self.sent: list[dict[str, Any]] = []
        self.gone = asyncio.Event()
        self._read = False
        scope = {
            "type": "http",
            "method": method,
            "path": path,
            "query_string": query.encode(),
            "headers": [
                (b"host", b"127.0.0.1:8000"),
                (b"accept", b"application/json, text/event-stream"),
                *([(b"content-type", b"application/json")] if method == "POST" else []),
                *((k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()),
            ],
        }
        self.task = asyncio.ensure_future(app(scope, self.receive, self.send))

    async def receive(self) -> dict[str, Any]:
        if not self._read:
            self._read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, event: dict[str, Any]) -> None:
        self.sent.append(event)

    def disconnect(self) -> None:
        self.gone.set()

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    def messages(self) -> list[Any]:
        """Every JSON-RPC message in the body, whether JSON or an event stream."""
        body = b"".join(e.get("body", b"") for e in self.sent[1:])
        if not body:
            return []
        if dict(self.sent[0]["headers"]).get(b"content-type") == b"application/json":
            return [json.loads(body)]
        return [
            json.loads(line[6:])
            for line in body.split(b"\n")
            if line[6:7] in (b"{", b"[") and line.startswith(b"data: ")
        ]


def call(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


async def open_session(app: StreamableHTTPApp, version: str) -> str:
    init = initialize_request(version)
    exchange = Exchange(app, init)
    await exchange.task
    return dict(exchange.sent[0]["headers"])[b"mcp-session-id"].decode()


class Record(list[str]):
    """What the slow tool went through; ``started`` is set once it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()


def one_path_app(record: Record) -> StreamableHTTPApp:
    server = Server("one-path")

    @server.tool
    async def slow(ctx: Context) -> str:
        record.append("started")
        record.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            record.append("cancelled")
            raise
        return "finished"

    @server.tool
    async def chatty(ctx: Context) -> str:
        await ctx.info("on my way")
        return "done"

    @server.tool
    def grow(name: str) -> str:
        server.add_tool(lambda: name, name=name)
        return f"added {name}"

    async def explode(params: dict[str, Any], ctx: Context) -> Any:
        raise RuntimeError("kaboom")

    server.set_handler("completion/complete", explode)
    app: StreamableHTTPApp = server.http_app()
    return app


def test_a_batch_member_that_logs_and_one_that_raises_are_answered_together() -> None:
    async def main() -> None:
        app = one_path_app(Record())
        session = await open_session(app, "2025-03-26")
        broken = {"jsonrpc": "2.0", "id": 2, "method": "completion/complete", "params": {}}
        exchange = Exchange(app, [call(1, "chatty"), broken], mcp_session_id=session)
        await asyncio.wait_for(exchange.task, PATIENCE)
        *notes, answers = exchange.messages()
        assert [n["method"] for n in notes] == ["notifications/message"]
        assert sorted(a["id"] for a in answers) == [1, 2]
        by_id = {a["id"]: a for a in answers}
        assert by_id[1]["result"]["content"][0]["text"] == "done"
        assert by_id[2]["error"]["code"] == -32603 and "kaboom" in by_id[2]["error"]["message"]

    asyncio.run(main())


def test_cancelling_a_session_request_stops_it_and_answers_202_not_500() -> None:
    async def main() -> None:
        record = Record()
        app = one_path_app(record)
        session = await open_session(app, "2025-11-25")
        running = Exchange(app, call(7, "slow"), mcp_session_id=session)
        await asyncio.wait_for(record.started.wait(), PATIENCE)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        note = Exchange(app, cancel, mcp_session_id=session)
        await asyncio.wait_for(note.task, PATIENCE)
        await asyncio.wait_for(running.task, PATIENCE)
        assert note.status == 202 and running.status == 202 and running.messages() == []
        assert record == ["started", "cancelled"]

    asyncio.run(main())


def test_a_change_caused_by_one_session_reaches_the_others_on_their_own_streams() -> None:
    """The changes one session causes used to be written into its own response, once per other session."""

    async def main() -> None:
        app = one_path_app(Record())
        watcher, causer = await open_session(app, "2025-06-18"), await open_session(app, "2025-06-18")
        stream = Exchange(app, None, method="GET", mcp_session_id=watcher)
        grown = Exchange(app, call(1, "grow", name="sprout"), mcp_session_id=causer)
        await asyncio.wait_for(grown.task, PATIENCE)
        assert [m.get("method") for m in grown.messages()] == [None]  # only the answer
        await until(stream.messages)
        assert [m["method"] for m in stream.messages()] == ["notifications/tools/list_changed"]
        # The causer's session heard of it on its own GET stream, which it opens later: nothing lost.
        late = Exchange(app, None, method="GET", mcp_session_id=causer)
        await until(late.messages)
        assert [m["method"] for m in late.messages()] == ["notifications/tools/list_changed"]
        stream.disconnect()
        late.disconnect()
        await asyncio.wait_for(asyncio.gather(stream.task, late.task), PATIENCE)

    asyncio.run(main())


def test_a_2026_client_that_goes_away_cancels_a_request_awaiting_a_json_answer() -> None:
    async def main() -> None:
        record = Record()
        app = one_path_app(record)
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        message = call(1, "slow")
        message["params"]["_meta"] = meta
        exchange = Exchange(
            app, message, mcp_protocol_version="2026-07-28", mcp_method="tools/call", mcp_name="slow"
        )
        await asyncio.wait_for(record.started.wait(), PATIENCE)
        exchange.disconnect()
        await asyncio.wait_for(exchange.task, PATIENCE)
        assert record == ["started", "cancelled"] and exchange.sent == []

    asyncio.run(main())


def test_http_sse_answers_and_cancellations_ride_the_one_stream() -> None:
    """HTTP+SSE has no stream per request: answers go on the session's only stream, and a
    cancelled request sends nothing there."""

    async def main() -> None:
        record = Record()
        app = one_path_app(record)
        stream = Exchange(app, None, method="GET", path="/sse")
        await until(lambda: len(stream.sent) > 1)  # the endpoint event
        endpoint = stream.sent[1]["body"].split(b"data: ")[1].strip().decode()
        path, query = endpoint.split("?")

        async def post(message: dict[str, Any]) -> None:
            exchange = Exchange(app, message, path=path, query=query)
            await asyncio.wait_for(exchange.task, PATIENCE)
            assert exchange.status == 202

        init = initialize_request("2024-11-05")
        await post(init)
        await post(call(1, "slow"))
        await asyncio.wait_for(record.started.wait(), PATIENCE)
        await post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        await post(call(2, "chatty"))
        await until(lambda: any(m.get("id") == 2 for m in stream.messages()))
        assert [(m.get("id"), m.get("method")) for m in stream.messages()] == [
            (0, None),
            (None, "notifications/message"),
            (2, None),
        ]
        assert record == ["started", "cancelled"]
        stream.disconnect()
        await asyncio.wait_for(stream.task, PATIENCE)

    asyncio.run(main())


class Stuck(Exchange):
    """A client that reads the first *reads* body events and then nothing: its sends block."""

    def __init__(self, app: StreamableHTTPApp, message: Any, reads: int, **headers: str) -> None:
        self.reads = reads
        self.blocked = asyncio.Event()
        super().__init__(app, message, **headers)

    async def send(self, event: dict[str, Any]) -> None:
        if event["type"] == "http.response.body" and len(self.sent) > self.reads:
            self.blocked.set()
            await asyncio.Event().wait()  # flow control that never resumes
        self.sent.append(event)


def test_an_unread_listen_stream_holds_up_no_notification_and_is_ended_on_overflow() -> None:
    """Issue 12 #1 in process: notify_* never waits for a listener; a listen stream whose client
    does not read is ended once stream_queue_limit distinct notifications wait for it."""

    async def main() -> None:
        server = Server("listen")

        @server.resource("note://{name}")
        def note(name: str) -> str:
            return name

        app: StreamableHTTPApp = server.http_app(stream_queue_limit=8)
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        uris = [f"note://{i}" for i in range(50)]

        def listen(request_id: int) -> dict[str, Any]:
            wanted = {"toolsListChanged": True, "resourceSubscriptions": uris}
            return {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                    "params": {"_meta": meta, "notifications": wanted}}  # fmt: skip

        headers = {"mcp_protocol_version": "2026-07-28", "mcp_method": "subscriptions/listen"}
        stuck = Stuck(app, listen(1), reads=1, **headers)
        reader = Exchange(app, listen(2), **headers)
        await until(lambda: len(server.listeners) == 2)
        for _ in range(1000):  # list changes coalesce: the stuck stream never has more than one waiting
            await server.notify_list_changed("tools")
            await asyncio.sleep(0)
        await asyncio.wait_for(stuck.blocked.wait(), PATIENCE)
        assert not stuck.task.done()
        assert "notifications/tools/list_changed" in [m.get("method") for m in reader.messages()]
        for uri in uris:  # 50 distinct updates: more than 8 wait for the stuck client
            await server.notify_resource_updated(uri)
        await asyncio.sleep(0)
        await asyncio.wait_for(stuck.task, PATIENCE)  # ended (after the 1 s grace for its last bytes)
        assert len(server.listeners) == 1
        await until(
            lambda: sum(m.get("method") == "notifications/resources/updated" for m in reader.messages()) == 50
        )
        assert sum(m.get("method") == "notifications/resources/updated" for m in reader.messages()) == 50
        reader.disconnect()
        await asyncio.wait_for(reader.task, PATIENCE)

    asyncio.run(main())


def test_bodies_must_be_json_and_arrive_in_time() -> None:
    """415 for a POST that is not application/json; 408 for a body whose rest never comes."""

    async def main() -> None:
        app = make_app().__class__(make_app().server, body_timeout=0.2)
        sent: list[dict[str, Any]] = []

        async def send(event: dict[str, Any]) -> None:
            sent.append(event)

        def scope(content_type: bytes) -> dict[str, Any]:
            return {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"",
                    "headers": [(b"host", b"127.0.0.1"), (b"content-type", content_type)]}  # fmt: skip

        async def nothing() -> dict[str, Any]:
            return {"type": "http.request", "body": b"{}", "more_body": False}

        await app(scope(b"text/plain"), nothing, send)
        assert sent[0]["status"] == 415
        sent.clear()
        pieces = iter([{"type": "http.request", "body": b"{", "more_body": True}])

        async def slow() -> dict[str, Any]:
            piece = next(pieces, None)
            if piece is None:
                await asyncio.sleep(30)
            assert piece is not None
            return piece

        await asyncio.wait_for(app(scope(b"application/json"), slow, send), PATIENCE)
        assert sent[0]["status"] == 408

    asyncio.run(main())


def test_request_headers_decode_lowercase_strip_and_stay_bounded() -> None:
    """Header fields by lowercase name, values without surrounding whitespace, the last of a
    repeated one; the same answer from the cache of decoded fields, which stays bounded in entries
    (and holds no long field); fields given as lists (another server's way) decode the same."""
    from mcpkit.transports.http.server import _asgi

    raw = [(b"Host", b"127.0.0.1:8000"), (b"X-A", b" one\t"), (b"x-a", b"two"), (b"long", b"v" * 1000)]
    expected = {"host": "127.0.0.1:8000", "x-a": "two", "long": "v" * 1000}
    assert _asgi.request_headers(raw) == expected
    assert _asgi.request_headers([(bytes(k), bytes(v)) for k, v in raw]) == expected  # from the cache
    assert _asgi.request_headers([[k, v] for k, v in raw]) == expected  # type: ignore[misc]
    assert (b"long", b"v" * 1000) not in _asgi._HEADER_CACHE
    for i in range(3 * _asgi._HEADER_CACHE_ENTRIES):
        assert _asgi.request_headers([(b"x-id", b"%d" % i)]) == {"x-id": str(i)}
        assert len(_asgi._HEADER_CACHE) <= _asgi._HEADER_CACHE_ENTRIES


# -- the response head as _uvicorn_cycle.Cycle writes it -------------------------------------------

HEADS: list[tuple[str, int, list[tuple[bytes, bytes]]]] = [
    ("POST", 200, [(b"content-type", b"application/json"), (b"content-length", b"12")]),
    ("POST", 200, [(b"Content-Type", b"text/event-stream"), (b"X-Accel-Buffering", b"no")]),  # chunked
    ("POST", 503, [(b"content-length", b"2"), (b"Connection", b"keep-alive, Close")]),
    ("POST", 200, [(b"transfer-encoding", b"chunked"), (b"content-length", b"5")]),
    ("POST", 200, [(b"content-length", b" 7"), (b"content-length", b"9")]),  # not digits; first wins
    ("POST", 204, []),
    ("HEAD", 200, [(b"x-long", b"v" * 300)]),  # too long to be remembered
    ("POST", 200, [[b"mcp-session-id", b"abc"], (b"content-length", b"0")]),  # type: ignore[list-item]
]


def _cycle(cycle_class: type[Any], method: str, keep_alive: bool = True) -> tuple[Any, list[bytes]]:
    """A response cycle as uvicorn makes one, writing to a list."""
    import logging

    from uvicorn.protocols.http.flow_control import FlowControl

    written: list[bytes] = []

    class Transport(asyncio.Transport):
        def write(self, data: Any) -> None:
            written.append(bytes(data))

        def is_closing(self) -> bool:
            return False

    transport = Transport()
    cycle = cycle_class(
        scope={"method": method, "http_version": "1.1"},
        transport=transport,
        flow=FlowControl(transport),
        logger=logging.getLogger("test"),
        access_logger=logging.getLogger("test"),
        access_log=False,
        default_headers=[(b"date", b"Tue, 24 Nov 2026 05:00:00 GMT")],
        message_event=asyncio.Event(),
        expect_100_continue=True,
        keep_alive=keep_alive,
        on_response=lambda: None,
    )
    return cycle, written


def _cycle_writes(cycle_class: type[Any], method: str, status: int, headers: Any, keep_alive: bool) -> Any:
    cycle, written = _cycle(cycle_class, method, keep_alive)
    try:
        asyncio.run(cycle.send({"type": "http.response.start", "status": status, "headers": headers}))
    except RuntimeError as exc:
        return repr(exc)
    state = (cycle.chunked_encoding, cycle.expected_content_length, cycle.keep_alive)
    return written, state, cycle.response_started, cycle.waiting_for_100_continue


def test_the_response_head_is_written_as_uvicorn_writes_it() -> None:
    """Cycle skips re-checking fields it has checked before: every head, first and second time
    (from what it remembered), is uvicorn's own, byte for byte, and leaves the same framing."""
    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

    from mcpkit.transports.http.server._uvicorn_cycle import Cycle as _Cycle

    bad: list[tuple[bytes, bytes]] = [(b"x-evil", b"a\r\nset-cookie: x")]
    cases = [*HEADS, ("POST", 200, bad), ("POST", 200, [(b"bad name", b"v")])]
    for method, status, headers in cases:
        for keep_alive in (True, False):
            expected = _cycle_writes(RequestResponseCycle, method, status, headers, keep_alive)
            for _ in range(2):
                assert _cycle_writes(_Cycle, method, status, headers, keep_alive) == expected
    assert _cycle_writes(_Cycle, "POST", 200, bad, True) == "RuntimeError('Invalid HTTP header value.')"


def test_the_response_head_falls_back_to_uvicorn_when_unusual() -> None:
    """Paused writing, an access log, a client gone, a body: uvicorn's own send, unchanged."""
    from unittest import mock

    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

    from mcpkit.transports.http.server._uvicorn_cycle import Cycle as _Cycle

    start = {"type": "http.response.start", "status": 200, "headers": []}
    for unusual in ("access_log", "disconnected", "write_paused", "body"):
        cycle, written = _cycle(_Cycle, "POST")
        cycle.access_log = unusual == "access_log"
        cycle.disconnected = unusual == "disconnected"
        cycle.flow.write_paused = unusual == "write_paused"
        message = {"type": "http.response.body", "body": b""} if unusual == "body" else start
        with mock.patch.object(RequestResponseCycle, "send") as uvicorn_send:
            asyncio.run(cycle.send(message))
        uvicorn_send.assert_called_once_with(message)
        assert written == []


def _served_writes(app: Any, *chunks: bytes) -> list[bytes]:
    """What the bounded uvicorn protocol writes when *chunks* arrive on a connection to *app*, each
    once the app has had a turn of the loop."""
    transport = HeldTransport()

    async def main() -> None:
        protocol = held_protocol(app, transport)
        for chunk in chunks:
            protocol.data_received(chunk)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        for _ in range(20):
            await asyncio.sleep(0)
        protocol.connection_lost(None)

    asyncio.run(main())
    return transport.written


def test_a_held_response_head_goes_with_its_body_or_before_anything_else() -> None:
    """A Content-Length response's head waits for its body and leaves with it, in one write, even
    when the app takes a while between the two; a stream's head leaves at once; and a 400 the
    protocol writes itself (here for a pipelined request it cannot parse) comes after a held head."""
    request = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["path"] == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await asyncio.sleep(0)
            await send({"type": "http.response.body", "body": b"event", "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        for _ in range(3):
            await asyncio.sleep(0)
        await send({"type": "http.response.body", "body": b"ok"})

    one = _served_writes(app, request)
    assert len(one) == 1 and one[0].startswith(b"HTTP/1.1 200 OK\r\n") and one[0].endswith(b"\r\n\r\nok")
    stream = _served_writes(app, request.replace(b"/a", b"/stream"))
    assert stream[0].endswith(b"transfer-encoding: chunked\r\n\r\n") and b"event" in stream[1]
    garbled = _served_writes(app, request, b"NOT HTTP\r\n\r\n")  # while the head is held
    assert garbled[0].startswith(b"HTTP/1.1 200 OK\r\n") and garbled[0].endswith(b"\r\n\r\n")
    assert garbled[1].startswith(b"HTTP/1.1 400 ")


def test_another_uvicorn_release_gets_uvicorn_own_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a uvicorn the copies were not written against, responses are written by uvicorn's own
    cycle (head and body apart) and the bounds still hold."""
    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

    from mcpkit.transports.http.server import _uvicorn

    monkeypatch.setattr(_uvicorn, "_FITS_UVICORN", False)
    cycles: list[type[Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        cycles.append(type(send.__self__))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    request = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
    writes = _served_writes(app, request, request)
    assert cycles == [RequestResponseCycle, RequestResponseCycle]
    assert [w for w in writes if w.startswith(b"HTTP/1.1 200 OK\r\n")] and writes.count(b"ok") == 2
    crowded = _served_writes(
        app, b"GET /a HTTP/1.1\r\n" + b"".join(b"x-%d: 1\r\n" % i for i in range(101)) + b"\r\n"
    )
    assert crowded[0].startswith(b"HTTP/1.1 431 ")


def test_accepted_hosts_are_remembered_and_refused_ones_are_not() -> None:
    """A Host accepted once is looked up after, a refused one is asked again every time (and never
    kept), and what is kept stays bounded."""
    from mcpkit.transports.http.server import app as app_module

    async def status(app: StreamableHTTPApp, host: bytes) -> int:
        sent = await asgi_request(app, "GET", [(b"host", host)], b"{}")
        return int(sent[0]["status"])

    async def main() -> None:
        app = make_app().__class__(make_app().server, allowed_hosts=["api.example"])
        for _ in range(2):  # once checked, once remembered: the same answers
            assert await status(app, b"127.0.0.1:8000") == 405
            assert await status(app, b"api.example") == 405
            assert await status(app, b"evil.example") == 421
            assert await status(app, b"127.0.0.1.evil.example") == 421
        assert set(app._hosts_ok) == {"127.0.0.1:8000", "api.example"}
        for port in range(3 * app_module._HOSTS_KEPT):
            assert await status(app, b"localhost:%d" % port) == 405
            assert len(app._hosts_ok) <= app_module._HOSTS_KEPT
        assert await status(app, b"x" * (app_module._HOST_BYTES + 1)) == 421

    asyncio.run(main())


def test_receive_gives_what_uvicorn_gives_whether_the_body_is_there_or_not() -> None:
    """The body already read is handed over at once; one still coming (in pieces, or after a
    ``100 Continue``) is waited for as uvicorn waits; once the response is complete, receive says
    the client is gone."""
    received: list[list[dict[str, Any]]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        messages = [await receive()]
        while messages[-1].get("more_body"):
            messages.append(await receive())
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})
        messages.append(await receive())
        received.append(messages)

    head = b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n"
    whole = _served_writes(app, head + b"\r\nabcdef")
    pieces = _served_writes(app, head + b"\r\nabc", b"def")
    continued = _served_writes(app, head + b"Expect: 100-continue\r\n\r\n", b"abcdef")
    assert all(w[-1].endswith(b"\r\n\r\nok") for w in (whole, pieces, continued))
    assert continued[0] == b"HTTP/1.1 100 Continue\r\n\r\n"
    bodies = [b"".join(m.get("body", b"") for m in messages) for messages in received]
    assert bodies == [b"abcdef"] * 3
    assert [m["type"] for m in received[0]] == ["http.request", "http.disconnect"]
    assert received[1][0] == {"type": "http.request", "body": b"abc", "more_body": True}
    assert all(messages[-1] == {"type": "http.disconnect"} for messages in received)


def test_a_lone_session_request_is_answered_from_its_post_or_on_a_stream_once_it_sends_first() -> None:
    """One request POSTed alone runs in the POST's own task and its answer goes as JSON; one that
    sends something first gets the event stream (or, for a JSON-only client, just its answer), an
    error is answered, a cancellation (notifications/cancelled, or the session ending) gets 202, and
    nothing is left behind."""

    async def main() -> None:
        record = Record()
        app = one_path_app(record)
        tasks: list[asyncio.Task[Any] | None] = []

        @app.server.tool  # type: ignore[attr-defined]
        async def where() -> str:
            tasks.append(asyncio.current_task())
            return "here"

        session = await open_session(app, "2025-11-25")
        plain = Exchange(app, call(1, "where"), mcp_session_id=session)
        await asyncio.wait_for(plain.task, PATIENCE)
        assert plain.status == 200 and plain.messages()[0]["result"]["content"][0]["text"] == "here"
        assert tasks == [plain.task]  # no task of its own

        chatty = Exchange(app, call(2, "chatty"), mcp_session_id=session)
        await asyncio.wait_for(chatty.task, PATIENCE)
        note, answer = chatty.messages()
        assert dict(chatty.sent[0]["headers"])[b"content-type"] == b"text/event-stream"
        assert note["method"] == "notifications/message" and answer["id"] == 2
        assert answer["result"]["content"][0]["text"] == "done"

        quiet = Exchange(app, call(3, "chatty"), mcp_session_id=session, accept="application/json")
        await asyncio.wait_for(quiet.task, PATIENCE)
        assert quiet.status == 200 and [m["id"] for m in quiet.messages()] == [3]

        broken = {"jsonrpc": "2.0", "id": 4, "method": "completion/complete", "params": {}}
        failing = Exchange(app, broken, mcp_session_id=session)
        await asyncio.wait_for(failing.task, PATIENCE)
        assert failing.messages()[0]["error"]["code"] == -32603

        running = Exchange(app, call(5, "slow"), mcp_session_id=session)
        await asyncio.wait_for(record.started.wait(), PATIENCE)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
        await asyncio.wait_for(Exchange(app, cancel, mcp_session_id=session).task, PATIENCE)
        await asyncio.wait_for(running.task, PATIENCE)
        assert running.status == 202 and running.messages() == [] and record == ["started", "cancelled"]

        served = app.sessions[session]
        assert served.streams == {} and served.served.peer._running == {}
        record.started.clear()
        ending = Exchange(app, call(6, "slow"), mcp_session_id=session)
        await asyncio.wait_for(record.started.wait(), PATIENCE)
        await asyncio.wait_for(Exchange(app, None, method="DELETE", mcp_session_id=session).task, PATIENCE)
        await asyncio.wait_for(ending.task, PATIENCE)
        assert ending.status == 202 and record[-1] == "cancelled"

    asyncio.run(main())


def test_a_lone_request_whose_stream_is_dropped_is_cancelled_or_goes_on_as_its_revision_says() -> None:
    """Once a request run in its POST's task has sent something (so its answer is an event stream),
    the client going away cancels it where streams cannot be resumed (2024-11-05) and lets it finish
    where they can (2025-11-25), its answer kept for a reconnection; the POST ends either way."""

    async def main() -> None:
        server = Server("dropped")
        record: list[str] = []
        release = asyncio.Event()

        @server.tool
        async def long(ctx: Context) -> str:
            await ctx.info("started")
            try:
                await release.wait()
            except asyncio.CancelledError:
                record.append("cancelled")
                raise
            record.append("finished")
            return "done"

        app: StreamableHTTPApp = server.http_app()
        for version, outcome in (("2024-11-05", "cancelled"), ("2025-11-25", "finished")):
            session = await open_session(app, version)
            exchange = Exchange(app, call(1, "long"), mcp_session_id=session)

            def started(sent: list[dict[str, Any]] = exchange.sent) -> bool:
                return any(b"started" in e.get("body", b"") for e in sent)

            await until(started)
            exchange.disconnect()
            # What the disconnect sets off takes a few turns of the loop and no timer: turns, not a
            # nap (a nap can end before them on a busy machine, and the tool would finish first).
            for _ in range(20):
                await asyncio.sleep(0)
            release.set()
            await asyncio.wait_for(exchange.task, PATIENCE)
            release.clear()
            assert record[-1] == outcome
            served = app.sessions[session]
            assert served.streams == {} and served.served.peer._running == {}

    asyncio.run(main())


_V = "io.modelcontextprotocol/protocolVersion"
_CAPS = "io.modelcontextprotocol/clientCapabilities"
_LIST = "tools/list"


@pytest.mark.parametrize(
    ("meta", "headers", "status", "code"),
    [
        # The version header contradicts _meta: -32020 before anything else is looked at.
        ({_V: "2026-07-28"}, {"mcp_protocol_version": "2025-11-25", "mcp_method": _LIST}, 400, -32020),
        # The lifecycle refuses what _meta says (a version that is no string or is not served, no
        # capabilities) ...
        ({_V: 20260728, _CAPS: {}}, {"mcp_method": _LIST}, 400, -32022),
        (
            {_V: "1999-01-01", _CAPS: {}},
            {"mcp_protocol_version": "1999-01-01", "mcp_method": _LIST},
            400,
            -32022,
        ),
        ({_V: "2026-07-28"}, {"mcp_protocol_version": "2026-07-28", "mcp_method": _LIST}, 400, -32602),
        # ... before the other headers are held against the body.
        ({_V: "2026-07-28"}, {"mcp_protocol_version": "2026-07-28", "mcp_method": "ping"}, 400, -32602),
        (
            {_V: "2026-07-28", _CAPS: {}},
            {"mcp_protocol_version": "2026-07-28", "mcp_method": "ping"},
            400,
            -32020,
        ),
        (
            {_V: "2026-07-28", _CAPS: {}},
            {"mcp_protocol_version": "2026-07-28", "mcp_method": _LIST},
            200,
            None,
        ),
    ],
)
def test_a_2026_request_is_refused_by_its_headers_and_its_lifecycle_in_that_order(
    meta: dict[str, Any], headers: dict[str, str], status: int, code: int | None
) -> None:
    message = {"jsonrpc": "2.0", "id": 7, "method": _LIST, "params": {"_meta": meta}}
    sent = asyncio.run(post(make_app(), message, **headers))
    assert sent[0]["status"] == status
    answer = json.loads(b"".join(e.get("body", b"") for e in sent[1:]))
    assert answer["id"] == 7
    if code is None:
        assert [tool["name"] for tool in answer["result"]["tools"]] == ["echo"]
    else:
        assert answer["error"]["code"] == code
