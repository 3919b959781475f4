"""Streamable HTTP, server side: an ASGI app at one endpoint (2026-07-28 era).

Every POST carries one JSON-RPC message. A request is answered with a JSON object, or, as soon as the
handler sends a notification that belongs to it (progress, a log message, a listen stream's
notifications), with a Server-Sent Events stream of those notifications followed by the response.
Closing that stream cancels the request ("closing the SSE response stream is itself the cancellation
signal").

Before the body is handled, the transport checks what HTTP adds: Host (421) and Origin (403) against
the allowlists, the body size (413), and the standard headers against the body
("Servers that process the request body MUST reject requests where the values specified in the
headers do not match the corresponding values in the request body"): ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name`` (400 with -32020).

Handshake-era clients get sessions: ``initialize`` returns an ``Mcp-Session-Id`` (random, 192 bits)
that every later POST must carry (400 without, 404 once ended); the client answers our requests by
POSTing responses; GET opens the session's stream for messages that belong to no request; DELETE ends
the session, and so does a long idle time. From 2025-03-26 a POST's event stream is resumable: its
events carry ids and are kept in an :class:`~mcpkit.transports.event_store.EventStore`, a dropped
stream does not cancel the request, and GET with ``Last-Event-ID`` replays what was missed and goes
on with the rest. From 2025-11-25 the stream opens with a priming event (an id, empty data and
``retry``), so the server may also close it on purpose (``ctx.close_response_stream()``: SSE
polling). The 2024-11-05 HTTP+SSE transport is served at ``/sse`` and ``/messages``.

This module is imported only when HTTP is used, so ``import mcpkit`` stays free of any HTTP stack.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any, Final, cast

from msgspec import UNSET

from .. import _jsonrpc as jsonrpc
from .._connection import META_PROTOCOL_VERSION, ServerConnection
from .._errors import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    ConnectionClosed,
    HeaderMismatch,
    MethodNotFound,
    RemoteProtocolError,
    RPCError,
)
from .._headers import decode_header_value, matches, value_at
from .._methods import mcp_name_field
from .event_store import EventStore, MemoryEventStore, stream_of

if TYPE_CHECKING:
    from ..lowlevel import LowLevelServer
    from ..session import Peer

__all__ = ["StreamableHTTPApp"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

DEFAULT_MAX_BODY: Final = 4 * 1024 * 1024
_LOCAL_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
_STATUS: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
    INTERNAL_ERROR: 500,
}
_JSON: Final = [(b"content-type", b"application/json")]
_SSE: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # "servers SHOULD include the X-Accel-Buffering: no header"
]


_CLOSE: Final = b""  # in an outbox: end the HTTP response now (no real message is empty)
_FINISHED_STREAMS_KEPT: Final = 32  # per session, for late reconnections


class _LiveStream:
    """What a reconnecting GET waits on while a POST's work goes on without a listener."""

    def __init__(self) -> None:
        self.done = False
        self._changed = asyncio.Event()

    def waiter(self) -> asyncio.Event:
        return self._changed

    def touch(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


class _Resume:
    """How one POST's event stream is made resumable."""

    def __init__(self, store: EventStore, stream_id: str, live: _LiveStream, retry_ms: int | None) -> None:
        self.store = store
        self.stream_id = stream_id
        self.live = live
        self.retry_ms = retry_ms  # None: no priming event (before 2025-11-25)


class _NoServerRequests:
    async def request(self, method: str, params: dict[str, Any] | None = None, **_: Any) -> Any:
        # "The server MUST NOT send independent JSON-RPC requests on this stream."
        raise MethodNotFound(
            "this transport sends no server-to-client requests in protocol revision 2026-07-28"
        )


class _Exchange(_NoServerRequests):
    """Stands in for the session's peer during one POST: what the handler sends goes to the response.

    A deque and one wake-up future rather than an ``asyncio.Queue``: most POSTs send nothing before
    their result, and this is the per-request hot path.
    """

    __slots__ = ("_wake", "closed", "pending")

    def __init__(self) -> None:
        self.pending: collections.deque[bytes] = collections.deque()
        self.closed = False
        self._wake: asyncio.Future[None] | None = None

    def put(self, data: bytes) -> None:
        self.pending.append(data)
        self.wake()

    def wake(self, _: object = None) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def wait(self) -> None:
        """Until something is pending, or :meth:`wake` is called (the work is done)."""
        if not self.pending:
            self._wake = asyncio.get_running_loop().create_future()
            try:
                await self._wake
            finally:
                self._wake = None

    async def get(self) -> bytes:
        while not self.pending:
            await self.wait()
        return self.pending.popleft()

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        if self.closed:
            raise ConnectionClosed("the client closed the response stream")
        note = jsonrpc.Notification(method=method, params=params if params is not None else UNSET)
        self.put(jsonrpc.encode(note))


class _StatelessResponse(_NoServerRequests):
    """Stands in for the peer while one 2026-07-28 POST is answered from the request's own task.

    The answer is JSON unless the handler sends something first, which turns it into an event
    stream; from then on a disconnect cancels the request ("closing the SSE response stream is
    itself the cancellation signal"). No extra task runs unless the response streams: most requests
    send nothing before their result, and this is the per-request hot path.
    """

    __slots__ = ("_closed", "_lock", "_watch", "accepts_sse", "gone", "receive", "send", "streaming", "task")

    def __init__(self, send: Send, receive: Receive, accepts_sse: bool, task: asyncio.Task[Any]) -> None:
        self.send = send
        self.receive = receive
        self.accepts_sse = accepts_sse
        self.task = task  # the request's task: cancelled when the client drops the stream
        self.streaming = False
        self.gone = False  # the client closed the stream
        self._closed: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._watch: asyncio.Future[None] | None = None

    @property
    def closed(self) -> asyncio.Event:
        """Set when the client goes away (what ``subscriptions/listen`` waits on)."""
        if self._closed is None:
            self._closed = asyncio.Event()
            if self.gone:
                self._closed.set()
        return self._closed

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        if self.gone:
            raise ConnectionClosed("the client closed the response stream")
        if not self.accepts_sse:
            return  # a JSON-only client: nowhere to put notifications
        note = jsonrpc.encode(
            jsonrpc.Notification(method=method, params=params if params is not None else UNSET)
        )
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # concurrent senders (ctx.gather) write whole events, one at a time
            if not self.streaming:
                self.streaming = True
                await self.send({"type": "http.response.start", "status": 200, "headers": _SSE})
                self._watch = asyncio.ensure_future(self._watch_disconnect())
            await _event(self.send, note)

    async def _watch_disconnect(self) -> None:
        await _wait_disconnect(self.receive)
        self.gone = True
        if self._closed is not None:
            self._closed.set()
        self.task.cancel()

    async def finish(self, status: int, body: bytes) -> None:
        """Send the answer: a JSON response, or the stream's last event."""
        if self._watch is not None:
            self._watch.cancel()
        if not self.streaming:
            await _send_json(self.send, status, body)
            return
        assert self._lock is not None
        async with self._lock:
            await _event(self.send, body)
            await self.send({"type": "http.response.body", "body": b"", "more_body": False})


#: The POST whose response stream a handler's messages belong to (handshake-era sessions).
_current: contextvars.ContextVar[_Exchange | None] = contextvars.ContextVar(
    "mcpkit_http_exchange", default=None
)


class _SessionPeer:
    """The server's way back to the client of one handshake-era session.

    A message sent while a POST is being answered goes on that POST's stream; anything else goes
    on the session's standalone GET stream, if the client opened one.
    """

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.standalone: asyncio.Queue[bytes] | None = None
        self.waiting: dict[jsonrpc.RequestId, asyncio.Future[Any]] = {}
        self._next_id = 0

    def _deliver(self, data: bytes) -> None:
        exchange = _current.get()
        if exchange is not None and not exchange.closed:
            exchange.put(data)
        elif self.standalone is not None:
            self.standalone.put_nowait(data)
        else:
            raise ConnectionClosed("no open stream to the client (open one with GET)")

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        note = jsonrpc.Notification(method=method, params=params if params is not None else UNSET)
        self._deliver(jsonrpc.encode(note))

    async def close_response_stream(self) -> None:
        """End the current POST's event stream; the client resumes it with ``Last-Event-ID``."""
        exchange = _current.get()
        if exchange is not None and not exchange.closed:
            exchange.put(_CLOSE)

    async def request(self, method: str, params: dict[str, Any] | None = None, **_: Any) -> Any:
        self._next_id += 1
        request_id = f"srv-{self._next_id}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        try:
            message = jsonrpc.Request(
                id=request_id, method=method, params=params if params is not None else UNSET
            )
            self._deliver(jsonrpc.encode(message))
            return await future
        finally:
            self.waiting.pop(request_id, None)

    def settle(self, answer: jsonrpc.Response | jsonrpc.ErrorResponse) -> None:
        future = self.waiting.get(answer.id) if answer.id is not None else None
        if future is None or future.done():
            return
        if isinstance(answer, jsonrpc.Response):
            future.set_result(answer.result)
        else:
            future.set_exception(RPCError.from_wire(answer.error))


class _Session:
    def __init__(self) -> None:
        self.id = secrets.token_urlsafe(24)  # "cryptographically secure": it is a bearer of the session
        self.conn = ServerConnection()
        self.peer = _SessionPeer()
        self.running: dict[jsonrpc.RequestId, asyncio.Future[Any]] = {}
        self.touched = time.monotonic()
        self.legacy = False  # a 2024-11-05 HTTP+SSE session
        self.streams: dict[str, _LiveStream] = {}  # resumable POST streams, oldest first
        self._next_stream = 0

    def new_stream(self) -> tuple[str, _LiveStream]:
        self._next_stream += 1
        stream_id = f"{self.id}-{self._next_stream}"
        self.streams[stream_id] = live = _LiveStream()
        return stream_id, live

    def finished_streams(self) -> list[str]:
        """Streams beyond the last few finished ones, to forget."""
        finished = [stream_id for stream_id, live in self.streams.items() if live.done]
        return finished[: max(0, len(finished) - _FINISHED_STREAMS_KEPT)]


class StreamableHTTPApp:
    """An ASGI application serving *server* at *path*.

    Args:
        server: the MCP server.
        path: the MCP endpoint.
        allowed_hosts: Host header values accepted besides localhost (``"example.com"`` or with a port).
        allowed_origins: Origin values accepted besides local ones (``"https://app.example"``).
        max_body_bytes: larger POST bodies get 413.
        session_idle_seconds: a handshake-era session unused this long is ended, so memory stays bounded.
        event_store: keeps resumable streams' events (default: in memory, bounded per stream).
        retry_ms: the ``retry`` a priming event tells clients to wait before reconnecting.
    """

    def __init__(
        self,
        server: LowLevelServer,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_body_bytes: int = DEFAULT_MAX_BODY,
        session_idle_seconds: float = 1800.0,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        event_store: EventStore | None = None,
        retry_ms: int = 1000,
    ) -> None:
        self.server = server
        self.event_store: EventStore = event_store if event_store is not None else MemoryEventStore()
        self.retry_ms = retry_ms
        self._chores: set[asyncio.Task[None]] = set()
        #: The 2024-11-05 HTTP+SSE transport: GET *sse_path* opens the stream, whose first event names
        #: the endpoint (*messages_path*?session_id=...) to POST messages to.
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.sessions: dict[str, _Session] = {}
        self.session_idle_seconds = session_idle_seconds
        self._expired_at = 0.0  # when _expire_idle last looked
        self.path = path
        self.allowed_hosts = set(allowed_hosts)
        self.allowed_origins = set(allowed_origins)
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        # Field values exclude surrounding whitespace (RFC 9110 §5.5).
        headers = {k.decode("latin-1").lower(): v.decode("latin-1").strip(" \t") for k, v in scope["headers"]}
        legacy = scope["path"] in (self.sse_path, self.messages_path)
        if scope["path"] != self.path and not legacy:
            await _plain(send, 404, b"not found")
            return
        if not self._host_ok(headers.get("host", "")):
            await _error(
                send, 421, None, INVALID_REQUEST, "Misdirected request: this Host is not served here"
            )
            return
        origin = headers.get("origin")
        if origin is not None and not self._origin_ok(origin):
            await _error(send, 403, None, INVALID_REQUEST, "Forbidden: Origin not allowed")
            return
        self._expire_idle()
        if legacy:
            await self._legacy(scope, headers, receive, send)
            return
        if scope["method"] in ("GET", "DELETE") and "mcp-session-id" in headers:
            session = await self._session_for(headers, send)
            if session is not None and scope["method"] == "GET" and "last-event-id" in headers:
                await self._resume(session, headers["last-event-id"], receive, send)
            elif session is not None and scope["method"] == "GET":
                await self._standalone_stream(session, receive, send)
            elif session is not None:
                self._end(session)
                await _plain(send, 200, b"")
            return
        if scope["method"] != "POST":
            await _error(send, 405, None, INVALID_REQUEST, "Method not allowed: POST one JSON-RPC message",
                         [(b"allow", b"POST")])  # fmt: skip
            return
        body = await _read_body(receive, self.max_body_bytes)
        if body is None:
            await _error(
                send, 413, None, INVALID_REQUEST, f"Request body larger than {self.max_body_bytes} bytes"
            )
            return
        await self._post(body, headers, receive, send)

    def _host_ok(self, host: str) -> bool:
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name in _LOCAL_HOSTS or host in self.allowed_hosts or name in self.allowed_hosts

    def _origin_ok(self, origin: str) -> bool:
        if origin in self.allowed_origins:
            return True
        rest = origin.split("://", 1)[-1]
        return self._host_ok(rest) and rest.split(":")[0] in ("127.0.0.1", "localhost", "[::1]")

    async def _post(self, body: bytes, headers: dict[str, str], receive: Receive, send: Send) -> None:
        try:
            decoded = jsonrpc.decode(body)
        except RemoteProtocolError as exc:
            await _error(send, 400, exc.request_id, exc.code, str(exc))
            return
        if isinstance(decoded, list):
            await self._batch(decoded, headers, send)
            return
        if isinstance(decoded, jsonrpc.Request) and _is_stateless(decoded):
            await self._stateless(decoded, headers, receive, send)
            return
        if isinstance(decoded, jsonrpc.Request) and decoded.method == "initialize":
            await self._initialize(decoded, headers, send)
            return
        if isinstance(decoded, jsonrpc.Notification) and "mcp-session-id" not in headers:
            await _plain(send, 202, b"")  # outside a session nothing listens for it; accepting is harmless
            return
        session = await self._session_for(headers, send, decoded)
        if session is None:
            return
        if isinstance(decoded, jsonrpc.Notification):
            if decoded.method == "notifications/cancelled":
                params = decoded.params if isinstance(decoded.params, dict) else {}
                task = session.running.get(params.get("requestId"))  # type: ignore[arg-type]
                if task is not None:
                    task.cancel()
            await self.server.session_notification(session.conn, decoded)
            await _plain(send, 202, b"")
            return
        if not isinstance(decoded, jsonrpc.Request):
            session.peer.settle(decoded)  # the client's answer to one of our requests
            await _plain(send, 202, b"")
            return
        await self._in_session(session, decoded, headers, receive, send)

    async def _stateless(
        self, request: jsonrpc.Request, headers: dict[str, str], receive: Receive, send: Send
    ) -> None:
        try:
            params = request.params if isinstance(request.params, dict) else {}
            meta = params.get("_meta")
            sent = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
            if isinstance(sent, str):  # a header that contradicts the body is -32020 before anything
                _check_version_header(headers, sent)
            conn = ServerConnection()
            scope = conn.admit(request)
            _check_headers(request, headers, scope.version, self.server.mirrored_parameters)
        except RPCError as exc:
            await _error(send, _STATUS.get(exc.code, 400), request.id, exc.code, exc.message, data=exc.data)
            return
        task = asyncio.current_task()
        assert task is not None
        response = _StatelessResponse(send, receive, _accepts_sse(headers), task)
        try:
            try:
                result = await self.server._dispatch(cast("Peer", response), conn, request, scope)
            except Exception as exc:  # 2026-07-28 gives errors HTTP statuses of their own
                code = exc.code if isinstance(exc, RPCError) else INTERNAL_ERROR
                await response.finish(_STATUS.get(code, 200), _error_bytes(request.id, exc))
            else:
                await response.finish(200, jsonrpc.encode(jsonrpc.Response(id=request.id, result=result)))
        except asyncio.CancelledError:
            if not response.gone:
                raise
            task.uncancel()  # our own doing: the client dropped the stream, nothing is left to answer

    async def _initialize(self, request: jsonrpc.Request, headers: dict[str, str], send: Send) -> None:
        session = _Session()
        try:
            scope = session.conn.admit(request)
            result = self.server.open_session(session.conn, scope, cast("Peer", session.peer))
        except RPCError as exc:
            await _error(send, 200, request.id, exc.code, exc.message, data=exc.data)
            return
        self.sessions[session.id] = session
        body = jsonrpc.encode(jsonrpc.Response(id=request.id, result=result))
        session_header = [(b"mcp-session-id", session.id.encode())]
        await _send_json(send, 200, body, session_header)

    async def _session_for(
        self, headers: dict[str, str], send: Send, message: jsonrpc.Event | None = None
    ) -> _Session | None:
        """The session a request names; answers 400 (none named) or 404 (unknown or ended) itself."""
        request_id = message.id if isinstance(message, jsonrpc.Request) else None
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await _error(
                send, 400, request_id, INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is required"
            )
            return None
        session = self.sessions.get(session_id)
        if session is None:
            await _error(send, 404, request_id, INVALID_REQUEST, "Session not found: initialize a new one")
            return None
        negotiated = session.conn.session.version if session.conn.session is not None else None
        sent = headers.get("mcp-protocol-version")
        if sent is not None and negotiated is not None and sent != negotiated:
            await _error(send, 400, request_id, INVALID_REQUEST,
                         f"Bad Request: MCP-Protocol-Version {sent!r} is not the session's {negotiated!r}")  # fmt: skip
            return None
        session.touched = time.monotonic()
        return session

    async def _in_session(
        self,
        session: _Session,
        request: jsonrpc.Request,
        headers: dict[str, str],
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            scope = session.conn.admit(request)
        except RPCError as exc:
            await _error(send, 200, request.id, exc.code, exc.message, data=exc.data)
            return
        exchange = _Exchange()
        token = _current.set(exchange)  # the handler's task inherits it: its messages ride this POST
        try:
            work = asyncio.ensure_future(
                self.server._dispatch(cast("Peer", session.peer), session.conn, request, scope)
            )
        finally:
            _current.reset(token)
        session.running[request.id] = work
        work.add_done_callback(lambda _: session.running.pop(request.id, None))
        resumable = None
        if scope.has("resumable_streams"):
            priming = self.retry_ms if scope.has("sse_polling") else None

            def resumable() -> _Resume:
                # Only an answer that becomes an event stream gets one: a JSON answer has no events.
                stream_id, live = session.new_stream()
                for old in session.finished_streams():
                    del session.streams[old]
                    self._chore(self.event_store.forget(old))
                return _Resume(self.event_store, stream_id, live, priming)

        await _respond(request.id, work, exchange, receive, send, _accepts_sse(headers), resumable)

    async def _resume(self, session: _Session, last_event_id: str, receive: Receive, send: Send) -> None:
        """GET with ``Last-Event-ID``: replay the rest of that stream, then follow it to its end."""
        live = session.streams.get(stream_of(last_event_id))
        events = await self.event_store.after(last_event_id) if live is not None else None
        if live is None or events is None:
            await _error(send, 400, None, INVALID_REQUEST,
                         "Bad Request: Last-Event-ID names no stream of this session that can be resumed")  # fmt: skip
            return
        await send({"type": "http.response.start", "status": 200, "headers": _SSE})
        disconnected = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            while True:
                finished, changed = live.done, live.waiter()
                for event_id, data in events or []:
                    if data:  # not a priming event
                        await _event(send, data, event_id)
                    last_event_id = event_id
                if finished:
                    return
                waiting = asyncio.ensure_future(changed.wait())
                done, _ = await asyncio.wait({waiting, disconnected}, return_when=asyncio.FIRST_COMPLETED)
                if disconnected in done:
                    waiting.cancel()
                    return
                events = await self.event_store.after(last_event_id)
        finally:
            disconnected.cancel()
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _chore(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    async def _batch(
        self, members: list[jsonrpc.Event | RemoteProtocolError], headers: dict[str, str], send: Send
    ) -> None:
        # JSON-RPC batches exist only in 2025-03-26, and only inside a session of that revision.
        session = self.sessions.get(headers.get("mcp-session-id", ""))
        if session is None or session.conn.session is None or not session.conn.session.has("batch"):
            await _error(send, 400, None, INVALID_REQUEST, "JSON-RPC batches are not accepted here")
            return
        session.touched = time.monotonic()
        answers: list[bytes] = []
        for member in members:
            if isinstance(member, RemoteProtocolError):
                answers.append(
                    jsonrpc.encode(
                        jsonrpc.ErrorResponse(
                            id=member.request_id, error={"code": member.code, "message": str(member)}
                        )
                    )
                )
            elif isinstance(member, jsonrpc.Notification):
                await self.server.session_notification(session.conn, member)
            elif isinstance(member, jsonrpc.Request):
                try:
                    scope = session.conn.admit(member)
                    result = await self.server._dispatch(
                        cast("Peer", session.peer), session.conn, member, scope
                    )
                    answers.append(jsonrpc.encode(jsonrpc.Response(id=member.id, result=result)))
                except RPCError as exc:
                    answers.append(jsonrpc.encode(jsonrpc.ErrorResponse(id=member.id, error=exc.to_wire())))
            else:
                session.peer.settle(member)
        if not answers:
            await _plain(send, 202, b"")
            return
        await _send_json(send, 200, b"[" + b",".join(answers) + b"]")

    async def _standalone_stream(self, session: _Session, receive: Receive, send: Send) -> None:
        """GET: the session's stream for messages that belong to no request."""
        if session.peer.standalone is not None:
            await _error(send, 409, None, INVALID_REQUEST, "Conflict: this session already has a GET stream")
            return
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        session.peer.standalone = queue
        await send({"type": "http.response.start", "status": 200, "headers": _SSE})
        await send({"type": "http.response.body", "body": b": stream open\n\n", "more_body": True})
        disconnected = asyncio.ensure_future(_wait_disconnect(receive))
        ended = asyncio.ensure_future(session.peer.closed.wait())
        try:
            while True:
                item = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({item, disconnected, ended}, return_when=asyncio.FIRST_COMPLETED)
                if item not in done:
                    item.cancel()
                    return
                await _event(send, item.result())
        finally:
            session.peer.standalone = None
            disconnected.cancel()
            ended.cancel()
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _legacy(self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send) -> None:
        """The HTTP+SSE transport of 2024-11-05: one GET stream carries everything the server says."""
        if scope["path"] == self.sse_path:
            if scope["method"] != "GET":
                await _plain(send, 405, b"GET opens the event stream")
                return
            session = _Session()
            session.legacy = True
            self.sessions[session.id] = session
            queue: asyncio.Queue[bytes] = asyncio.Queue()
            session.peer.standalone = queue
            endpoint = f"{self.messages_path}?session_id={session.id}".encode()
            await send({"type": "http.response.start", "status": 200, "headers": _SSE})
            await send(
                {
                    "type": "http.response.body",
                    "body": b"event: endpoint\ndata: " + endpoint + b"\n\n",
                    "more_body": True,
                }
            )
            disconnected = asyncio.ensure_future(_wait_disconnect(receive))
            ended = asyncio.ensure_future(session.peer.closed.wait())
            try:
                while True:
                    item = asyncio.ensure_future(queue.get())
                    done, _ = await asyncio.wait(
                        {item, disconnected, ended}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if item not in done:
                        item.cancel()
                        return
                    await _event(send, item.result())
            finally:
                disconnected.cancel()
                ended.cancel()
                self._end(session)
                with contextlib.suppress(Exception):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
        if scope["method"] != "POST":
            await _plain(send, 405, b"POST messages here")
            return
        query = dict(
            part.split("=", 1) for part in scope.get("query_string", b"").decode().split("&") if "=" in part
        )
        posted = self.sessions.get(query.get("session_id", ""))
        if posted is None or not posted.legacy:
            await _plain(send, 404, b"unknown session")
            return
        body = await _read_body(receive, self.max_body_bytes)
        if body is None:
            await _plain(send, 413, b"too large")
            return
        try:
            message = jsonrpc.decode(body)
        except RemoteProtocolError as exc:
            await _plain(send, 400, str(exc).encode())
            return
        if isinstance(message, list):
            await _plain(send, 400, b"batches are not accepted here")
            return
        posted.touched = time.monotonic()
        await _plain(send, 202, b"Accepted")
        stream = posted.peer.standalone
        if stream is None:
            return
        if isinstance(message, jsonrpc.Notification):
            await self.server.session_notification(posted.conn, message)
        elif isinstance(message, jsonrpc.Request):
            task = asyncio.ensure_future(self._legacy_answer(posted, message, stream))
            posted.running[message.id] = task
            task.add_done_callback(lambda _: posted.running.pop(message.id, None))
        else:
            posted.peer.settle(message)

    async def _legacy_answer(
        self, session: _Session, request: jsonrpc.Request, stream: asyncio.Queue[bytes]
    ) -> None:
        try:
            scope = session.conn.admit(request)
            if request.method == "initialize":
                result = self.server.open_session(session.conn, scope, cast("Peer", session.peer))
            else:
                result = await self.server._dispatch(cast("Peer", session.peer), session.conn, request, scope)
            answer = jsonrpc.encode(jsonrpc.Response(id=request.id, result=result))
        except RPCError as exc:
            answer = jsonrpc.encode(jsonrpc.ErrorResponse(id=request.id, error=exc.to_wire()))
        except asyncio.CancelledError:
            return
        stream.put_nowait(answer)

    def _end(self, session: _Session) -> None:
        self.sessions.pop(session.id, None)
        for stream_id in session.streams:
            self._chore(self.event_store.forget(stream_id))
        session.streams.clear()
        session.peer.closed.set()
        for task in list(session.running.values()):
            task.cancel()
        self.server.close_session(session.conn, cast("Peer", session.peer))

    def _expire_idle(self) -> None:
        # A walk over every session, so at most once a second rather than on every request.
        now = time.monotonic()
        if now - self._expired_at < 1.0:
            return
        self._expired_at = now
        limit = now - self.session_idle_seconds
        for session in [s for s in self.sessions.values() if s.touched < limit]:
            self._end(session)


def _is_stateless(request: jsonrpc.Request) -> bool:
    params = request.params if isinstance(request.params, dict) else {}
    meta = params.get("_meta")
    return (
        isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta
    ) or request.method == "server/discover"


def _accepts_sse(headers: dict[str, str]) -> bool:
    return "text/event-stream" in headers.get("accept", "")


def _check_headers(
    request: jsonrpc.Request,
    headers: dict[str, str],
    version: str,
    mirrored: Callable[[str], dict[str, tuple[str, ...]]],
) -> None:
    """The standard headers must be there and agree with the body (-32020 otherwise)."""
    _check_version_header(headers, version)
    method = headers.get("mcp-method")
    if method != request.method:
        raise HeaderMismatch(f"Header mismatch: Mcp-Method {method!r} does not match body {request.method!r}")
    field = mcp_name_field(request.method)
    if field is not None:
        params = request.params if isinstance(request.params, dict) else {}
        name = headers.get("mcp-name")
        if name is None:
            raise HeaderMismatch(f"Header mismatch: Mcp-Name is required for {request.method}")
        if _decoded(name) != params.get(field):
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Name header value {name!r} does not match body value {params.get(field)!r}"
            )
    if request.method == "tools/call":
        _check_parameter_headers(request, headers, mirrored)


def _check_version_header(headers: dict[str, str], version: str) -> None:
    sent_version = headers.get("mcp-protocol-version")
    if sent_version != version:
        raise HeaderMismatch(
            f"Header mismatch: MCP-Protocol-Version {sent_version!r} does not match body {version!r}"
        )


def _decoded(value: str) -> str:
    try:
        return decode_header_value(value)
    except ValueError as exc:
        raise HeaderMismatch(f"Header mismatch: {exc}") from None


def _check_parameter_headers(
    request: jsonrpc.Request, headers: dict[str, str], mirrored: Callable[[str], dict[str, tuple[str, ...]]]
) -> None:
    """``Mcp-Param-*`` headers must be present for every mirrored argument, and agree with it."""
    params = request.params if isinstance(request.params, dict) else {}
    name = params.get("name")
    if not isinstance(name, str):
        return
    arguments = params.get("arguments")
    for header, path in mirrored(name).items():
        value = value_at(arguments, path)
        if value is None:
            continue  # "Server MUST NOT expect the header"
        sent = headers.get(f"mcp-param-{header.lower()}")
        if sent is None:
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Param-{header} is required when {'.'.join(path)} is given"
            )
        if not matches(_decoded(sent), value):
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Param-{header} value {sent!r} does not match body value {value!r}"
            )


async def _respond(
    request_id: jsonrpc.RequestId,
    work: asyncio.Future[Any],
    exchange: _Exchange,
    receive: Receive,
    send: Send,
    accepts_sse: bool,
    resumable: Callable[[], _Resume] | None = None,
) -> None:
    """Answer one request of a handshake-era session: JSON if the result comes first, else an event
    stream of what the handler sends and then the result. Without *resumable* (before 2025-03-26),
    dropping the stream cancels the request; with it the work goes on, its events kept for a
    reconnection. (2026-07-28 requests are answered by :class:`_StatelessResponse`.)"""
    # The usual case first, with no extra task: wait for the result or the handler's first message.
    work.add_done_callback(exchange.wake)
    while not work.done():
        await exchange.wait()
        if not accepts_sse:
            exchange.pending.clear()  # nowhere to put notifications: drop them
        elif exchange.pending:
            break
    if work.done() and (not exchange.pending or not accepts_sse):
        exchange.closed = True
        # In a handshake-era session an error is a JSON-RPC answer like any other (200).
        await _send_json(send, 200, _answer_bytes(request_id, work))
        return
    # Something came before the result: the answer becomes an event stream.
    resume = resumable() if resumable is not None else None
    await send({"type": "http.response.start", "status": 200, "headers": _SSE})
    attached = True

    async def emit(data: bytes) -> None:
        event_id = None
        if resume is not None:
            event_id = await resume.store.append(resume.stream_id, data)
            resume.live.touch()
        if attached:
            await _event(send, data, event_id)

    async def detach() -> None:
        nonlocal attached
        attached = False
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    if resume is not None and resume.retry_ms is not None:
        # "the server SHOULD immediately send an SSE event consisting of an event ID and an empty
        # data field in order to prime the client to reconnect"
        event_id = await resume.store.append(resume.stream_id, b"")
        await _send_body(send, f"id: {event_id}\nretry: {resume.retry_ms}\ndata: \n\n".encode())
    first = asyncio.ensure_future(exchange.get())
    disconnected = asyncio.ensure_future(_wait_disconnect(receive))
    try:
        while True:
            pending = {work, first, disconnected} if attached else {work, first}
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if disconnected in done and attached:
                if resume is None:
                    # "closing the SSE response stream is itself the cancellation signal"
                    work.cancel()
                    return
                attached = False  # the client may come back with Last-Event-ID
                continue
            if first in done:
                data = first.result()
                first = asyncio.ensure_future(exchange.get())
                if data is not _CLOSE:
                    await emit(data)
                elif resume is not None and resume.retry_ms is not None and attached:
                    await detach()  # SSE polling: the rest waits for the reconnection
                continue
            while exchange.pending:  # notifications sent just before the result
                data = exchange.pending.popleft()
                if data is not _CLOSE:
                    await emit(data)
            await emit(_answer_bytes(request_id, work))
            if attached:
                await detach()
            return
    finally:
        exchange.closed = True
        first.cancel()
        disconnected.cancel()
        if resume is not None:
            resume.live.done = True
            resume.live.touch()


def _answer_bytes(request_id: jsonrpc.RequestId, work: asyncio.Future[Any]) -> bytes:
    exc = work.exception()
    if exc is not None:
        return _error_bytes(request_id, exc)
    return jsonrpc.encode(jsonrpc.Response(id=request_id, result=work.result()))


def _error_bytes(request_id: jsonrpc.RequestId, exc: BaseException) -> bytes:
    if isinstance(exc, RPCError):
        return jsonrpc.encode(jsonrpc.ErrorResponse(id=request_id, error=exc.to_wire()))
    error = {"code": INTERNAL_ERROR, "message": f"Internal error: {type(exc).__name__}: {exc}"}
    return jsonrpc.encode(jsonrpc.ErrorResponse(id=request_id, error=error))


async def _event(send: Send, data: bytes, event_id: str | None = None) -> None:
    head = b"event: message\n" if event_id is None else f"id: {event_id}\nevent: message\n".encode()
    await _send_body(send, head + b"data: " + data + b"\n\n")


async def _send_body(send: Send, body: bytes) -> None:
    await send({"type": "http.response.body", "body": body, "more_body": True})


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _plain(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _send_json(
    send: Send, status: int, body: bytes, extra_headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    # With a Content-Length the server needs no chunked framing (nor its closing chunk).
    headers = [*_JSON, (b"content-length", b"%d" % len(body)), *extra_headers]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _error(
    send: Send,
    status: int,
    request_id: jsonrpc.RequestId | None,
    code: int,
    message: str,
    extra_headers: list[tuple[bytes, bytes]] | None = None,
    data: Any = None,
) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = jsonrpc.encode(jsonrpc.ErrorResponse(id=request_id, error=error))
    await _send_json(send, status, body, extra_headers or ())


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
