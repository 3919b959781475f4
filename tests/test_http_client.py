"""The Streamable HTTP client transport against a bare HTTP/1.1 server on 127.0.0.1 that answers as
each test scripts it: what a refused probe looks like, the headers of the tasks methods, and
abandoning a POST (a closed connection) when its request times out or is cancelled."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from mcpkit import Client, Era, RequestTimeout, TextContent
from mcpkit.client import MAY_HAVE_MISSED, Backoff
from mcpkit.transports.http.client.streamable import HTTPClientTransport

pytestmark = pytest.mark.e2e

MODERN = "2026-07-28"
DISCOVERED = {
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}},
}
INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "1"},
}


@dataclass
class Reply:
    """What the server sends back: a status, a content type and a body; ``hold`` keeps the
    connection open after the body (for an unfinished answer) until the client closes it."""

    status: int = 200
    content_type: str = "application/json"
    body: bytes = b""
    hold: bool = False
    length: int | None = None  # a Content-Length other than the body's (an answer cut short)
    silent: bool = False  # send nothing at all (with ``hold``: the answer has not begun)
    close: bool = False  # close the connection after the answer (no keep-alive)
    headers: str = ""  # more header lines, each ending in CRLF


def answer(message: dict[str, Any], result: Any) -> Reply:
    return Reply(body=json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())


@dataclass
class Seen:
    method: str | None
    headers: dict[str, str]
    message: dict[str, Any]


class LocalServer:
    """A hand-made HTTP/1.1 server on 127.0.0.1: ``async with`` gives its URL; ``_serve`` answers
    each connection."""

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/mcp"

    async def __aexit__(self, *exc_info: object) -> None:
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    """The next request on a connection: its verb, its headers (names in lower case), its body."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in head[1:] if h)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return head[0].split(" ")[0], headers, body


@dataclass
class ScriptedServer(LocalServer):
    """Answers each POST with ``script(message)``; GET and DELETE get 405."""

    script: Callable[[dict[str, Any]], Awaitable[Reply]]
    seen: list[Seen] = field(default_factory=list)
    #: The method of each POST, as it arrives.
    arrived: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    #: Methods whose held answer ended with the client closing the connection.
    abandoned: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)

    #: How many connections the client opened.
    connections: int = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                verb, headers, body = await read_request(reader)
                if verb != "POST":
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                    continue
                message = json.loads(body)
                method = message.get("method")
                self.seen.append(Seen(method, headers, message))
                self.arrived.put_nowait(method)
                reply = await self.script(message)
                if not reply.silent:
                    length = len(reply.body) if reply.length is None else reply.length
                    framing = "" if reply.hold and reply.length is None else f"content-length: {length}\r\n"
                    head_bytes = (
                        f"HTTP/1.1 {reply.status} X\r\ncontent-type: {reply.content_type}\r\n"
                        f"{reply.headers}{framing}\r\n"
                    )
                    writer.write(head_bytes.encode() + reply.body)
                    await writer.drain()
                if reply.close:
                    return
                if reply.hold:
                    await reader.read()  # b"" once the client has closed the connection
                    self.abandoned.put_nowait(method)
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


# -- the era probe ---------------------------------------------------------------------------------


def legacy(probe_reply: Reply) -> Callable[[dict[str, Any]], Awaitable[Reply]]:
    async def script(message: dict[str, Any]) -> Reply:
        method = message.get("method")
        if method == "server/discover":
            return probe_reply
        if method == "initialize":
            return answer(message, INITIALIZED)
        if method == "tools/list":
            return answer(message, {"tools": []})
        return Reply(status=202)

    return script


def rpc_error(request_id: Any, code: int, text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}).encode()


@pytest.mark.parametrize(
    "probe_reply",
    [
        # The TypeScript SDK's Streamable HTTP server: "id": null.
        Reply(status=400, body=rpc_error(None, -32000, "Bad Request: Server not initialized")),
        # The official Python SDK 1.x: an id of its own.
        Reply(status=400, body=rpc_error("server-error", -32600, "Bad Request: Missing session ID")),
        Reply(status=200, body=rpc_error(None, -32601, "Method not found")),
        Reply(status=400),  # empty
        Reply(status=400, content_type="text/html", body=b"<h1>Bad Request</h1>"),
        Reply(status=200, content_type="text/plain", body=b"hello"),
        Reply(status=406, content_type="application/json", body=b"{not json"),
    ],
    ids=[
        "ts-null-id",
        "sdk1-foreign-id",
        "200-null-id",
        "400-empty",
        "400-html",
        "200-text",
        "406-broken-json",
    ],
)
def test_a_refused_probe_means_initialize_at_once(probe_reply: Reply) -> None:
    async def main() -> None:
        server = ScriptedServer(legacy(probe_reply))
        async with server as url, Client(url, probe_timeout=600) as client:
            assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-11-25"
            assert await client.list_tools() == []
        assert [s.method for s in server.seen][:2] == ["server/discover", "initialize"]

    asyncio.run(asyncio.wait_for(main(), 60))  # far below probe_timeout


def test_an_error_on_a_requests_event_stream_that_names_no_request_is_its_answer() -> None:
    async def script(message: dict[str, Any]) -> Reply:
        if message.get("method") == "server/discover":
            return answer(message, DISCOVERED)
        event = b"data: " + rpc_error(None, -32603, "the stream's request failed") + b"\n\n"
        return Reply(content_type="text/event-stream", body=event)

    async def main() -> None:
        async with ScriptedServer(script) as url, Client(url, probe_timeout=60) as client:
            with pytest.raises(Exception, match="the stream's request failed"):
                await client.request("tools/list")

    asyncio.run(asyncio.wait_for(main(), 60))


# -- Mcp-Name on the tasks methods -----------------------------------------------------------------


def test_call_tool_follows_a_task_with_mcp_name_on_every_tasks_request() -> None:
    question = {
        "method": "elicitation/create",
        "params": {
            "message": "Go on?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean", "default": True}}},
        },
    }
    polls = 0

    async def script(message: dict[str, Any]) -> Reply:
        nonlocal polls
        method = message.get("method")
        task = {"taskId": "täsk-1", "createdAt": "2026-07-28T00:00:00Z", "ttlMs": 60_000}
        if method == "server/discover":
            return answer(message, DISCOVERED)
        if method == "tools/call":
            return answer(message, {"resultType": "task", **task, "status": "working", "pollIntervalMs": 10})
        if method == "tasks/get":
            polls += 1
            if polls == 1:
                return answer(
                    message, {**task, "status": "input_required", "inputRequests": {"go": question}}
                )
            done = {"content": [{"type": "text", "text": "done"}]}
            return answer(message, {**task, "status": "completed", "result": done})
        return answer(message, {"resultType": "complete"})  # tasks/update, tasks/cancel

    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async def main() -> list[Seen]:
        server = ScriptedServer(script)
        async with server as url, Client(url, elicitation=accept) as client:
            assert client.protocol_version == MODERN
            result = await client.call_tool("slow", {"n": 1})
            assert result.content == [TextContent(text="done")]
            await client.cancel_task("täsk-1")
        return server.seen

    seen = asyncio.run(asyncio.wait_for(main(), 60))
    tasks = [s for s in seen if s.method is not None and s.method.startswith("tasks/")]
    assert [s.method for s in tasks] == ["tasks/get", "tasks/update", "tasks/get", "tasks/cancel"]
    for request in tasks:
        assert request.headers["mcp-method"] == request.method
        assert request.headers["mcp-protocol-version"] == MODERN
        # Not plain ASCII, so in the =?base64?...?= form the spec gives for such values.
        assert request.headers["mcp-name"] == "=?base64?dMOkc2stMQ==?="
    assert tasks[1].message["params"]["inputResponses"] == {
        "go": {"action": "accept", "content": {"ok": True}}
    }
    call = next(s for s in seen if s.method == "tools/call")
    assert (call.headers["mcp-method"], call.headers["mcp-name"]) == ("tools/call", "slow")


# -- abandoning the POST ---------------------------------------------------------------------------

HELD = {
    # Not even the status line: the answer has not begun.
    "not-begun": Reply(hold=True, silent=True),
    # A JSON answer cut short: Content-Length promises more than has come.
    "json-cut-short": Reply(hold=True, length=500, body=b'{"jsonrpc": "2.0", '),
    # An event stream with a notification and no answer yet.
    "event-stream": Reply(
        content_type="text/event-stream",
        hold=True,
        body=b'data: {"jsonrpc": "2.0", "method": "notifications/message", '
        b'"params": {"level": "debug", "data": "working"}}\n\n',
    ),
}


def holding(reply: Reply) -> Callable[[dict[str, Any]], Awaitable[Reply]]:
    async def script(message: dict[str, Any]) -> Reply:
        if message.get("method") == "server/discover":
            return answer(message, DISCOVERED)
        return reply

    return script


@pytest.mark.parametrize("kind", sorted(HELD))
def test_a_timed_out_request_closes_its_connection(kind: str) -> None:
    async def main() -> None:
        server = ScriptedServer(holding(HELD[kind]))
        async with server as url, Client(url) as client:
            with pytest.raises(RequestTimeout):
                # Time enough for the request to reach the server, which holds it for ever.
                await client.request("tools/call", {"name": "slow"}, timeout=2)
            assert await asyncio.wait_for(server.abandoned.get(), 30) == "tools/call"
        # The 2026-07-28 way to cancel: the closed stream, never a notifications/cancelled POST.
        assert "notifications/cancelled" not in [s.method for s in server.seen]

    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize("kind", sorted(HELD))
def test_a_cancelled_request_closes_its_connection(kind: str) -> None:
    async def main() -> None:
        server = ScriptedServer(holding(HELD[kind]))
        async with server as url, Client(url) as client:
            call = asyncio.ensure_future(client.call_tool("slow"))
            while await server.arrived.get() != "tools/call":
                pass
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert await asyncio.wait_for(server.abandoned.get(), 30) == "tools/call"
        assert "notifications/cancelled" not in [s.method for s in server.seen]

    asyncio.run(asyncio.wait_for(main(), 60))


# -- the cost of a request -------------------------------------------------------------------------


class _Searches:
    """A meta path finder that only notes which modules were searched for (and finds none)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        self.names.append(name)


def test_requests_search_for_no_module() -> None:
    # httpcore imports sniffio on every request; were it not installed, each request would search
    # sys.path for it again (a third of the client's CPU per call).
    async def script(message: dict[str, Any]) -> Reply:
        if message.get("method") == "server/discover":
            return answer(message, DISCOVERED)
        return answer(message, {"content": [{"type": "text", "text": "ok"}]})

    async def main() -> list[str]:
        async with ScriptedServer(script) as url, Client(url) as client:
            await client.call_tool("echo", {})  # the first request may import what it needs once
            searches = _Searches()
            sys.meta_path.insert(0, searches)
            try:
                for _ in range(5):
                    await client.call_tool("echo", {})
            finally:
                sys.meta_path.remove(searches)
            return searches.names

    assert asyncio.run(asyncio.wait_for(main(), 60)) == []


def test_connections_are_kept_alive_and_one_the_server_closed_is_not_reused() -> None:
    closing = False

    async def script(message: dict[str, Any]) -> Reply:
        if message.get("method") == "server/discover":
            return answer(message, DISCOVERED)
        reply = answer(message, {"content": [{"type": "text", "text": "ok"}]})
        reply.close = closing
        return reply

    async def main() -> None:
        nonlocal closing
        server = ScriptedServer(script)
        async with server as url, Client(url) as client:
            for _ in range(5):
                await client.call_tool("echo", {})
            assert server.connections == 1  # one connection for the probe and every call
            closing = True
            for _ in range(3):  # each answer ends its connection: the next request opens another
                result = await client.call_tool("echo", {})
                assert isinstance(result.content[0], TextContent) and result.content[0].text == "ok"
            assert server.connections == 3

    asyncio.run(asyncio.wait_for(main(), 60))


# -- the session's own stream (GET) ----------------------------------------------------------------

ELICIT = {
    "jsonrpc": "2.0",
    "id": "ask-1",
    "method": "elicitation/create",
    "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "default": "Ann"}}},
    },
}
DROPPED = "the question was dropped: no GET stream"


@dataclass
class SessionServer(LocalServer):
    """A handshake-era server with a session, after the TypeScript SDK's Streamable HTTP server
    without an event store: its tool asks the client a question on the session's GET stream (as a
    tool does that calls ``server.request``), and drops the question if that stream is not open.

    *get* is how it answers the GET: ``"stream"`` opens the stream, after waiting for a
    ``tools/call`` to arrive first (at most *hold* seconds), which is the order a loaded machine can
    give; ``"405"`` refuses it; ``"silent"`` never answers; ``"close"`` drops the connection.
    """

    get: str = "stream"
    hold: float = 1.0
    #: The methods of the POSTs, and "GET" when the server answers a GET, in that order.
    events: list[str] = field(default_factory=list)

    async def __aenter__(self) -> str:
        self._call_arrived = asyncio.Event()
        self._stream: asyncio.Queue[bytes] | None = None
        self._answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        return await super().__aenter__()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                verb, _, body = await read_request(reader)
                if verb == "GET":
                    await self._listen(reader, writer)
                    return
                if verb == "DELETE":
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                    continue
                status, reply = await self._post(json.loads(body))
                extra = "mcp-session-id: s-1\r\ncontent-type: application/json\r\n" if reply else ""
                writer.write(f"HTTP/1.1 {status} X\r\n{extra}content-length: {len(reply)}\r\n\r\n".encode())
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _post(self, message: dict[str, Any]) -> tuple[int, bytes]:
        method = message.get("method")
        self.events.append(method or "answer")
        if method == "initialize":
            return 200, answer(message, INITIALIZED).body
        if method == "tools/list":
            return 200, answer(message, {"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]}).body
        if method == "tools/call":
            self._call_arrived.set()
            if self._stream is None:
                text = DROPPED
            else:
                self._stream.put_nowait(json.dumps(ELICIT).encode())
                text = json.dumps((await self._answer)["result"])
            return 200, answer(message, {"content": [{"type": "text", "text": text}]}).body
        if method is None and message.get("id") == "ask-1":
            self._answer.set_result(message)
        return 202, b""  # notifications, answers

    async def _listen(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._call_arrived.wait(), self.hold)
        if self.get == "silent":
            await reader.read()
            return
        if self.get == "close":
            return
        self.events.append("GET")
        if self.get == "405":
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
            await reader.read()
            return
        self._stream = asyncio.Queue()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        while True:
            writer.write(b"data: " + await self._stream.get() + b"\n\n")
            await writer.drain()


def test_requests_after_initialized_wait_for_the_session_stream() -> None:
    # The server takes its time over the GET. Were the tool called before it had the stream, its
    # question would be dropped and the call answered without it (against the TypeScript SDK's
    # server, which answers nothing, the call would hang: the conformance suite's
    # elicitation-sep1034-client-defaults under load).
    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async def main() -> None:
        server = SessionServer()
        async with server as url, Client(url, protocol_version="2025-11-25", elicitation=accept) as client:
            await client.list_tools()
            result = await client.call_tool("ask", {})
        assert isinstance(result.content[0], TextContent)
        assert result.content[0].text != DROPPED
        assert json.loads(result.content[0].text) == {"action": "accept", "content": {"name": "Ann"}}
        assert server.events[:4] == ["initialize", "notifications/initialized", "GET", "tools/list"]

    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize("get", ["405", "close", "silent"])
def test_requests_go_on_when_the_session_stream_is_refused_or_never_answered(
    get: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Without a stream the question is dropped, but the calls go out: at once when the GET is refused
    # or fails, after listen_wait when the server never answers it.
    async def main() -> None:
        server = SessionServer(get=get, hold=0)
        async with server as url:
            transport = HTTPClientTransport(url)
            transport.listen_wait = 0.2
            async with Client(transport, protocol_version="2025-11-25") as client:
                assert await client.list_tools()
                result = await client.call_tool("ask", {})
                assert result.content == [TextContent(text=DROPPED)]
        expected = ["initialize", "notifications/initialized", "tools/list", "tools/call"]
        assert [e for e in server.events if e != "GET"] == expected
        if get == "405":
            assert server.events.index("GET") < server.events.index("tools/list")

    with caplog.at_level(logging.WARNING, "mcpkit.client"):
        asyncio.run(asyncio.wait_for(main(), 60))
    waited_out = [r for r in caplog.records if "has not answered the GET" in r.getMessage()]
    assert len(waited_out) == (1 if get == "silent" else 0)  # once: the later messages go at once


# -- the session's GET stream, opened again when lost ------------------------------------------------

TOOLS_CHANGED = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'


@dataclass
class Get:
    """How the server answers one GET: *status* (and *headers*), or with 200 a stream of *events*
    that then ends (the connection closed) unless *hold*."""

    status: int = 200
    headers: str = ""
    events: list[bytes] = field(default_factory=list)
    hold: bool = False


@dataclass
class ReopenServer(LocalServer):
    """A handshake-era server whose GET answers follow *gets* in turn (the last one repeated)."""

    gets: list[Get]
    #: The headers of each GET, and the session id each initialize was given.
    get_headers: list[dict[str, str]] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    capabilities: dict[str, Any] = field(default_factory=lambda: {"tools": {"listChanged": True}})

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                verb, headers, body = await read_request(reader)
                if verb == "GET":
                    await self._get(headers, reader, writer)
                    return
                if verb == "DELETE":
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                    continue
                message = json.loads(body)
                if message.get("method") == "initialize":
                    self.sessions.append(f"s-{len(self.sessions) + 1}")
                    reply = answer(message, {**INITIALIZED, "capabilities": self.capabilities}).body
                    head = f"mcp-session-id: {self.sessions[-1]}\r\ncontent-type: application/json\r\n"
                elif "id" in message:
                    reply, head = answer(message, {"tools": []}).body, "content-type: application/json\r\n"
                else:
                    reply, head = b"", ""
                status = 200 if reply else 202
                writer.write(
                    f"HTTP/1.1 {status} X\r\n{head}content-length: {len(reply)}\r\n\r\n".encode() + reply
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _get(
        self, headers: dict[str, str], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.get_headers.append(headers)
        step = self.gets[min(len(self.get_headers), len(self.gets)) - 1]
        if step.status != 200:
            writer.write(f"HTTP/1.1 {step.status} X\r\n{step.headers}content-length: 0\r\n\r\n".encode())
            await writer.drain()
            return
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n")
        for event in step.events:
            writer.write(event)
        await writer.drain()
        if step.hold:
            await reader.read()


class Pauses:
    """A :class:`Backoff` sleep that records each pause and returns at once; with *block_at*, the
    pause of that number never ends (until cancelled, which it records)."""

    def __init__(self, block_at: int | None = None) -> None:
        self.asked: list[float] = []
        self.block_at = block_at
        self.blocked = asyncio.Event()
        self.cancelled = False

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        if len(self.asked) == self.block_at:
            self.blocked.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        await asyncio.sleep(0)


def test_a_lost_session_stream_is_opened_again_through_409_and_503(caplog: pytest.LogCaptureFixture) -> None:
    # The first stream gives event ids and a retry of 1.5 s, then its connection is lost; the next
    # GETs meet 409 with Retry-After: 7 (another node still holds the stream) and a 503; the fourth
    # opens it again, resumed after the last id, and carries a change.
    gets = [
        Get(events=[b"id: e1\nretry: 1500\ndata: \n\n", b"id: e2\ndata: " + TOOLS_CHANGED + b"\n\n"]),
        Get(409, "retry-after: 7\r\n"),
        Get(503),
        Get(events=[b"id: e3\ndata: " + TOOLS_CHANGED + b"\n\n"], hold=True),
    ]

    async def main() -> None:
        server = ReopenServer(gets)
        heard: list[tuple[str, dict[str, Any]]] = []
        two = asyncio.Event()

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            heard.append((method, params))
            if len(heard) == 3:
                two.set()

        pauses = Pauses()
        async with server as url:
            client = Client(url, protocol_version="2025-11-25", on_notification=on_notification)
            client.reconnect = Backoff(initial=0.01, cap=0.02, sleep=pauses)
            async with client:
                await asyncio.wait_for(two.wait(), 10)
        assert [h.get("last-event-id") for h in server.get_headers] == [None, "e2", "e2", "e2"]
        assert [m for m, _ in heard] == ["notifications/tools/list_changed"] * 3
        # The server's change, the client's notice that changes may have been missed, the server's.
        assert [bool(p.get("_meta", {}).get(MAY_HAVE_MISSED)) for _, p in heard] == [False, True, False]
        # Each pause: at least the retry field (1.5 s) or Retry-After (7 s), far above the backoff.
        assert len(pauses.asked) == 3
        assert pauses.asked[0] >= 1.5 and pauses.asked[1] >= 7 and pauses.asked[2] >= 1.5
        assert server.sessions == ["s-1"]

    with caplog.at_level(logging.INFO, "mcpkit.client"):
        asyncio.run(asyncio.wait_for(main(), 20))
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "mcpkit.client"]
    assert [level for level, text in lines if "event stream" in text] == [logging.WARNING, logging.INFO]


def test_reopening_stops_when_the_client_closes() -> None:
    # The stream is lost and every GET after it meets 409: the client keeps trying, with pauses
    # that grow up to the cap, until it is closed; closing cancels the pause it is in.
    async def main() -> None:
        server = ReopenServer([Get(events=[b"data: " + TOOLS_CHANGED + b"\n\n"]), Get(409)])
        pauses = Pauses(block_at=6)
        async with server as url:
            client = Client(url, protocol_version="2025-11-25")
            client.reconnect = Backoff(initial=1, cap=4, sleep=pauses, random=lambda: 1.0)
            async with client:
                await asyncio.wait_for(pauses.blocked.wait(), 10)
                tries = len(server.get_headers)
            assert pauses.cancelled
            assert len(server.get_headers) == tries == 6  # nothing tried once closed
        assert pauses.asked == [1, 2, 4, 4, 4, 4]  # exponential, capped (no jitter drawn here)

    asyncio.run(asyncio.wait_for(main(), 20))


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        ("tools/call", {"name": "mirror", "arguments": {"city": "Oslo"}}),  # a header mirrors city
        ("tools/call", {"name": ["odd"]}),
        ("resources/read", {"uri": "notes://1"}),
        (
            "prompts/get",
            {"name": "greet", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        ),
        ("ping", None),
    ],
)
def test_a_request_given_by_its_parts_goes_out_as_when_decoded(method: str, params: Any) -> None:
    # The session gives the HTTP transport a request's id, method and params beside its bytes, so
    # that the headers are made of them without decoding the bytes again: what goes out must be
    # what the decoded message makes.
    async def script(message: dict[str, Any]) -> Reply:
        return answer(message, {})

    def request(request_id: int) -> bytes:
        body = {"jsonrpc": "2.0", "id": request_id, "method": method}
        return json.dumps(body if params is None else {**body, "params": params}).encode()

    async def main() -> None:
        server = ScriptedServer(script)
        async with server as url:
            transport = HTTPClientTransport(url)
            transport.protocol_version = "2026-07-28"
            transport.mirrored["mirror"] = {"City": ("city",)}
            try:
                await transport.send(request(1))  # opens the connection the next two go out on
                await transport.receive()
                assert transport.send_nowait(request(2))
                await transport.receive()
                assert transport.send_request_nowait(request(3), 3, method, params)
                await transport.receive()
            finally:
                await transport.aclose()
        decoded, given = server.seen[1], server.seen[2]
        assert decoded.headers == given.headers and decoded.message == {**given.message, "id": 2}
        if params is not None and params.get("name") == "mirror":
            assert given.headers["mcp-param-city"] == "Oslo"

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_request_waiting_for_a_connection_keeps_the_session_it_was_sent_in() -> None:
    # Every connection is busy, so the request waits for one in a task of its own; meanwhile a new
    # session begins (the client forgets the old id before its initialize, as when the session's
    # stream met 404). The request still goes out in the session it was sent in: read when the task
    # ran, it went out in none, and a session server refused it with 400 (seen in CI).
    async def script(message: dict[str, Any]) -> Reply:
        method = message.get("method")
        if method == "initialize":
            return Reply(body=answer(message, INITIALIZED).body, headers="mcp-session-id: s-1\r\n")
        if method == "slow":
            return Reply(silent=True, hold=True)
        return answer(message, {"tools": []})

    def request(request_id: int, method: str) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}}).encode()

    async def main() -> None:
        server = ScriptedServer(script)
        async with server as url:
            transport = HTTPClientTransport(url)
            transport.protocol_version = "2025-11-25"
            try:
                await transport.send(request(1, "initialize"))
                assert json.loads(await transport.receive())["id"] == 1
                assert transport.session_id == "s-1"
                await transport.send(request(2, "slow"))  # holds the one connection
                assert await server.arrived.get() == "initialize"
                assert await server.arrived.get() == "slow"
                await transport.send(request(3, "tools/list"))
                transport.session_id = None  # a renewal begins before the request's task runs
                assert json.loads(await transport.receive())["id"] == 3
            finally:
                await transport.aclose()
        listed = [s for s in server.seen if s.method == "tools/list"]
        assert [s.headers.get("mcp-session-id") for s in listed] == ["s-1"]

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_session_stream_answered_404_starts_a_new_session() -> None:
    # The server forgot the session: the stream's GET meets 404, and the client starts a new session
    # at once (as a request meeting 404 does) instead of waiting for its next request; the new
    # session's stream opens, and the application is told that changes may have been missed.
    async def main() -> None:
        gets = [Get(events=[]), Get(404), Get(events=[b"data: " + TOOLS_CHANGED + b"\n\n"], hold=True)]
        server = ReopenServer(gets)
        heard: list[tuple[str, dict[str, Any]]] = []
        both = asyncio.Event()

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            heard.append((method, params))
            if len(heard) == 2:
                both.set()

        async with server as url:
            client = Client(url, protocol_version="2025-11-25", on_notification=on_notification)
            client.reconnect = Backoff(sleep=Pauses())
            async with client:
                await asyncio.wait_for(both.wait(), 10)
                assert await client.list_tools() == []
        assert server.sessions == ["s-1", "s-2"]
        assert [h["mcp-session-id"] for h in server.get_headers] == ["s-1", "s-1", "s-2"]
        assert {bool(p.get("_meta", {}).get(MAY_HAVE_MISSED)) for _, p in heard} == {True, False}

    asyncio.run(asyncio.wait_for(main(), 20))
