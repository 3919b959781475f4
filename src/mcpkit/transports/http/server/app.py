"""The ASGI app: checks what HTTP adds, then sends each message down its era's path.

Before a body is looked at: the path (404), Host (421) and Origin (403) against the allowlists, the
method, the Content-Type of a POST (415 unless ``application/json``), and the body size (413) and
pace (408). Then:

* a 2026-07-28 request (its ``_meta`` names a revision) is answered statelessly (:mod:`.stateless`);
* ``initialize`` opens a handshake-era session, and every later POST names it with
  ``Mcp-Session-Id`` (400 without, 404 once ended); GET opens its stream or resumes one
  (``Last-Event-ID``), DELETE ends it (:mod:`.sessions`, :mod:`.resume`);
* the 2024-11-05 HTTP+SSE transport lives at its own two paths (:mod:`.legacy_sse`);
* ``GET /healthz`` and ``GET /readyz``, whatever the Host: liveness and readiness (:mod:`.health`).

With ``state=`` (a :class:`~mcpkit.fleet.SharedState`, e.g. Redis) the app is one node of
a fleet: the server joins it at startup (:mod:`mcpkit.fleet.node`), handshake-era
sessions are served by whichever node a request lands on (:mod:`.roaming`), and resumable streams'
events are kept there, so ``Last-Event-ID`` replays anywhere.

With ``auth=`` the server is an OAuth 2.1 resource server (:mod:`.auth`): every MCP request of
either era passes the gate after the checks above (401, 403 or 503 otherwise), the Protected
Resource Metadata is served at its well-known paths, its identity reaches the handler as
``ctx.auth`` (set in :data:`~mcpkit.auth.current_auth` for the task that delivers the request), and
a handshake-era session belongs to the subject that opened it: another subject's token on it gets
404, as if the session did not exist.

Everything a client can make the server hold is bounded, by the settings below: the body, how long
its rest may take, the number of handshake-era sessions (then ``initialize`` gets 503 and
``Retry-After``), the requests in flight per session (then a JSON-RPC error answers at once, each
member of a batch past the cap its own, see :mod:`.admission`; answers the client sends to the
server's own requests never count, so a handler waiting on the client cannot deadlock), and the messages queued for a stream the client does not read (then that stream ends).
The request head is bounded where it is parsed (:mod:`._uvicorn`).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterable
from typing import Final
from urllib.parse import urlsplit

from .... import _jsonrpc as jsonrpc
from ...._errors import HEADER_MISMATCH, INVALID_REQUEST, SERVER_BUSY, RemoteProtocolError
from ...._ratelimit import KeyedBuckets
from ....auth import AuthInfo, ResourceServerAuth, current_auth, current_headers
from ....fleet.node import HEALTH_PATHS, Node
from ....fleet.outage import answer_outages, unavailable
from ....fleet.sessions import REPLAYED, SessionFleet
from ....fleet.state import SharedState, StateUnavailable
from ....kernel import Endpoint
from ....session import error_response
from ....telemetry import NETWORK_TRANSPORT
from ._asgi import (
    BodyRefused,
    Receive,
    Scope,
    Send,
    error,
    is_json,
    plain,
    read_body,
    request_headers,
    send_json,
)
from .admission import admit_batch, answerable_ids, refuse_busy, refuse_in_use
from .auth import AuthGate, ProtectedResourceMetadata, owner_of
from .cors import CorsPolicy
from .event_store import EventStore, MemoryEventStore
from .health import answer_probe
from .legacy_sse import open_sse, post_message
from .lifespan import Serving
from .resume import ResumableStream, new_resumable, replay
from .sessions import (
    DEFAULT_STREAM_QUEUE,
    HTTPSession,
    ResponseStream,
    SessionTable,
    respond,
    standalone_stream,
)
from .stateless import answer_stateless, is_stateless

__all__ = ["DEFAULT_MAX_BODY", "StreamableHTTPApp"]

DEFAULT_MAX_BODY: Final = 4 * 1024 * 1024
#: The JSON-RPC code of "the server is busy" answers (too many sessions or requests in flight);
#: the implementation-defined server-error range.
_LOCAL_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
#: How many accepted Host values are remembered, and how long one may be to be remembered.
_HOSTS_KEPT: Final = 64
_HOST_BYTES: Final = 256

logger = logging.getLogger("mcpkit.http")


class StreamableHTTPApp:
    """An ASGI application serving *server* at *path*.

    Args:
        server: the MCP server (anything that keeps the :class:`~mcpkit.kernel.Endpoint` contract).
        path: the MCP endpoint.
        allowed_hosts: Host header values accepted besides localhost (``"example.com"`` or with a port).
        allowed_origins: Origin values accepted besides local ones (``"https://app.example"``).
        max_body_bytes: larger POST bodies get 413.
        session_idle_seconds: a handshake-era session unused this long is ended, so memory stays bounded.
        sse_path: where the 2024-11-05 HTTP+SSE transport's GET stream opens.
        messages_path: where its messages are POSTed.
        event_store: keeps resumable streams' events (default: in memory, bounded per stream).
        retry_ms: the ``retry`` a priming event tells clients to wait before reconnecting.
        body_timeout: seconds the rest of a request body may take once it started (then 408).
        max_sessions: handshake-era sessions (HTTP+SSE included) open at once; ``initialize``
            beyond it gets 503 with ``Retry-After`` (after idle sessions are expired).
        cors_origins: origins whose pages may call the endpoint from a browser (CORS: the
            preflight answered, ``Mcp-Session-Id`` exposed; ``"*"`` for any origin). Off by
            default; each is also an allowed ``Origin``. See :mod:`.cors`.
        rate_limit: requests per client address (``"100/s"``, ``"1000/m"``, ``"50/10s"``: a token
            bucket per address, opt-in); beyond it, 429 with ``Retry-After`` and -32000. Counts
            every request (POST, GET, DELETE) of either era.
        max_sessions_per_client: of those, how many one client address may hold (the ASGI
            ``client`` of the request: behind a proxy, that is the proxy unless the server is told
            to trust its forwarding headers); beyond it, 503 as above.
        max_requests_per_session: requests of one session being handled at once; one more is
            answered with a JSON-RPC error (-32000) at once (in a batch: each member past the cap,
            with its own id, while those within it are served).
        stream_queue_limit: messages queued for one GET, listen or HTTP+SSE stream whose client
            does not read it; beyond it that stream is ended (nothing else waits for it).
        auth: protect the endpoint (:class:`~mcpkit.auth.ResourceServerAuth`): every MCP request
            needs a valid access token; see ``docs/authorization.md``.
        state: the state shared with the other processes of a fleet (default: none, all in this
            process); its event store keeps resumable streams unless *event_store* is given.
    """

    def __init__(
        self,
        server: Endpoint,
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
        body_timeout: float = 30.0,
        max_sessions: int = 10_000,
        max_sessions_per_client: int = 1_000,
        max_requests_per_session: int = 256,
        stream_queue_limit: int = DEFAULT_STREAM_QUEUE,
        rate_limit: str | None = None,
        cors_origins: Iterable[str] = (),
        auth: ResourceServerAuth | None = None,
        state: SharedState | None = None,
    ) -> None:
        self.server = server
        self.node = Node(state)
        self.serving = Serving(server, self.node)
        if event_store is None and state is not None:
            event_store = state.events
        self.auth = AuthGate(auth) if auth is not None else None
        self.metadata = ProtectedResourceMetadata(auth) if auth is not None else None
        cors = list(cors_origins)
        self.cors = CorsPolicy(cors) if cors else None
        self.rate_limit = KeyedBuckets(rate_limit) if rate_limit is not None else None
        self.event_store: EventStore = event_store if event_store is not None else MemoryEventStore()
        self.table = SessionTable(
            server,
            self.event_store,
            session_idle_seconds,
            max_sessions=max_sessions,
            max_sessions_per_client=max_sessions_per_client,
            queue_limit=stream_queue_limit,
        )
        self.fleet = SessionFleet(state, self.table, server, self.node) if state is not None else None
        self.body_timeout = body_timeout
        self.max_requests_per_session = max_requests_per_session
        self.stream_queue_limit = stream_queue_limit
        self.retry_ms = retry_ms
        self.path = path
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.allowed_hosts = set(allowed_hosts)
        if auth is not None:  # the canonical URI names a host this server is reached at, by definition
            self.allowed_hosts.add(urlsplit(auth.audience).netloc)
        self.allowed_origins = set(allowed_origins)
        self.max_body_bytes = max_body_bytes
        #: Host values already accepted (see _host_ok).
        self._hosts_ok: dict[str, bool] = {}

    @property
    def sessions(self) -> dict[str, HTTPSession]:
        """The live handshake-era sessions, by id."""
        return self.table.sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.serving.lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if not self.serving.started:  # mounted where no ASGI lifespan runs: start at the first request
            await self.serving.start_late(send)
            if not self.serving.started:
                return
        NETWORK_TRANSPORT.set("tcp")  # this request's task (and the handlers it starts): its spans
        if self.node.state is None:
            await self._http(scope, receive, send)
        else:  # a node of a fleet: while its shared state is away, 503 rather than 500 (.outage)
            await answer_outages(self._http, scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.node.joined:
            path = _path_of(scope)
            if path in HEALTH_PATHS:
                await answer_probe(self.node, path, scope["method"], send)
            elif not await self.node.wait_joined():
                await unavailable(send)
            else:
                await self._http(scope, receive, send)
            return
        headers = request_headers(scope["headers"])
        if len(headers) != len(scope["headers"]) and await _refuse_repeated(scope["headers"], send):
            return
        current_headers.set(headers)  # this request's task only (each ASGI request has its own)
        path = _path_of(scope)
        if path == self.path:  # nearly every request: the two other tests need not be made
            legacy = metadata = False
        else:
            legacy = path in (self.sse_path, self.messages_path)
            metadata = self.metadata is not None and path in self.metadata.paths
            if not legacy and not metadata:
                if path in HEALTH_PATHS:
                    await answer_probe(self.node, path, scope["method"], send)
                    return
                await plain(send, 404, b"not found")
                return
        host = headers.get("host", "")
        if not (self._hosts_ok.get(host) or self._host_ok(host)):
            await error(send, 421, None, INVALID_REQUEST, "Misdirected request: this Host is not served here")
            return
        if metadata:  # public, for any origin: no Origin check, no token
            assert self.metadata is not None
            await self.metadata.serve(scope["method"], send)
            return
        origin = headers.get("origin")
        if origin is not None:
            if not self._origin_ok(origin):
                await error(send, 403, None, INVALID_REQUEST, "Forbidden: Origin not allowed")
                return
            if self.cors is not None and self.cors.allows(origin):
                if scope["method"] == "OPTIONS":
                    await self._preflight(origin, headers, send)
                    return
                send = self.cors.wrap(send, origin)
        if self.rate_limit is not None:
            wait = self.rate_limit.take(_client_of(scope))
            if wait:
                await error(send, 429, None, SERVER_BUSY,
                            f"Too many requests: over {self.rate_limit.rate.spec} for this client",
                            [(b"retry-after", str(math.ceil(wait)).encode())])  # fmt: skip
                return
        if self.auth is None or scope["method"] == "OPTIONS":  # OPTIONS is never an MCP request (405)
            await self._serve(scope, path, legacy, headers, None, receive, send)
            return
        admitted = await self.auth.admit(scope, headers, send)
        if admitted is None:
            return
        info, send = admitted
        reset = current_auth.set(info)  # what the handler's task inherits: ctx.auth
        try:
            await self._serve(scope, path, legacy, headers, info, receive, send)
        finally:
            current_auth.reset(reset)

    async def _serve(
        self,
        scope: Scope,
        path: str,
        legacy: bool,
        headers: dict[str, str],
        auth: AuthInfo | None,
        receive: Receive,
        send: Send,
    ) -> None:
        """An admitted request at *path* (inside the app; *legacy*: one of HTTP+SSE's two paths), its
        caller *auth* when the endpoint is protected, by era and method."""
        self.table.expire_idle()
        method = scope["method"]
        if legacy:
            owner = owner_of(auth)
            if path == self.sse_path:
                if method == "GET":
                    await open_sse(
                        self.table,
                        self.fleet,
                        scope.get("root_path", "") + self.messages_path,
                        _client_of(scope),
                        receive,
                        send,
                        owner,
                    )
                else:
                    await plain(send, 405, b"GET opens the event stream")
            elif method == "POST":
                if not is_json(headers.get("content-type")):
                    await plain(send, 415, b"Content-Type must be application/json")
                    return
                await post_message(
                    self.table,
                    self.fleet,
                    self.max_body_bytes,
                    self.body_timeout,
                    scope,
                    receive,
                    send,
                    owner,
                )
            else:
                await plain(send, 405, b"POST messages here")
            return
        if method != "POST":
            if method in ("GET", "DELETE") and "mcp-session-id" in headers:
                await self._get_or_delete(method, headers, receive, send, owner_of(auth))
                return
            await error(send, 405, None, INVALID_REQUEST, "Method not allowed: POST one JSON-RPC message",
                        [(b"allow", b"POST")])  # fmt: skip
            return
        if not is_json(headers.get("content-type")):
            await error(send, 415, None, INVALID_REQUEST, "Unsupported Media Type: POST application/json")
            return
        try:
            body = await read_body(receive, self.max_body_bytes, self.body_timeout)
        except BodyRefused as exc:
            await error(send, exc.status, None, INVALID_REQUEST, str(exc))
            return
        await self._post(body, headers, _client_of(scope), receive, send, auth)

    async def drain(self) -> None:
        """The process is about to stop: end the streams that would otherwise hold it up (every
        session's GET stream, every ``subscriptions/listen``), so their clients reconnect (to
        another process of a fleet); requests still running get the server's shutdown timeout.
        ``/readyz`` answers 503 from now on, so a balancer sends nothing new."""
        self.table.closing.set()
        await self.node.drain()

    def _host_ok(self, host: str) -> bool:
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        ok = name in _LOCAL_HOSTS or host in self.allowed_hosts or name in self.allowed_hosts
        if ok and len(host) <= _HOST_BYTES:
            # A client sends the same Host on every request: accepted once, it is looked up after.
            # Only accepted ones, so what is kept is bounded by the allowlists (and ports: cleared
            # when full).
            if len(self._hosts_ok) >= _HOSTS_KEPT:
                self._hosts_ok.clear()
            self._hosts_ok[host] = True
        return ok

    async def _preflight(self, origin: str, headers: dict[str, str], send: Send) -> None:
        assert self.cors is not None
        allowed = self.cors.preflight_headers(origin, headers.get("access-control-request-headers", ""))
        if allowed is None:
            await plain(send, 403, b"CORS: a requested header is not allowed")
            return
        await send({"type": "http.response.start", "status": 204, "headers": allowed})
        await send({"type": "http.response.body", "body": b""})

    def _origin_ok(self, origin: str) -> bool:
        if origin in self.allowed_origins or (self.cors is not None and self.cors.allows(origin)):
            return True
        rest = origin.split("://", 1)[-1]
        return self._host_ok(rest) and rest.split(":")[0] in _LOCAL_HOSTS

    async def _post(
        self,
        body: bytes,
        headers: dict[str, str],
        client: str,
        receive: Receive,
        send: Send,
        auth: AuthInfo | None = None,
    ) -> None:
        try:
            message = jsonrpc.decode(body)
        except RemoteProtocolError as exc:
            await error(send, 400, exc.request_id, exc.code, str(exc))
            return
        if (
            auth is not None
            and self.auth is not None
            and await self.auth.refuse_scopes(self.server, message, auth, send)
        ):
            return
        session_id = headers.get("mcp-session-id")
        if isinstance(message, jsonrpc.Request) and is_stateless(message, session_id is not None):
            # "A request carrying modern per-request _meta is served statelessly according to this
            # revision", whatever Mcp-Session-Id it carries.
            await answer_stateless(self.server, message, headers, receive, send, self.stream_queue_limit)
            return
        owner = owner_of(auth)
        if session_id is None:
            if isinstance(message, jsonrpc.Request) and message.method == "initialize":
                await self._initialize(message, client, send, owner)
            elif isinstance(message, jsonrpc.Notification):
                await plain(send, 202, b"")  # outside a session nothing listens for it; accepting is harmless
            else:
                request_id = message.id if isinstance(message, jsonrpc.Request) else None
                await error(
                    send, 400, request_id, INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is required"
                )
            return
        session = await self._session_for(session_id, headers, send, owner)
        if session is not None:
            await self._in_session(session, message, headers, receive, send)

    async def _initialize(self, request: jsonrpc.Request, client: str, send: Send, owner: str | None) -> None:
        session = self.table.new(client=client)
        if session is None:
            await error(send, 503, request.id, SERVER_BUSY, "Server busy: too many sessions, retry later",
                        [(b"retry-after", b"5")])  # fmt: skip
            return
        session.owner = owner
        stream = session.open_stream([request.id])
        await session.served.peer.deliver(request)
        await stream.wait()
        session.close_response(stream, [request.id])
        if session.version is None:  # refused: no session is kept
            self.table.end(session)
            await send_json(send, 200, stream.answer)
            return
        self.table.add(session)
        if self.fleet is not None:
            try:
                await self.fleet.opened(session, request.params if isinstance(request.params, dict) else {})
            except StateUnavailable as exc:  # no record, no session: the other nodes could not serve it
                self.table.end(session)
                exc.request_id = request.id
                raise
        await send_json(send, 200, stream.answer, [(b"mcp-session-id", session.id.encode())])

    async def _session_for(
        self, session_id: str, headers: dict[str, str], send: Send, owner: str | None
    ) -> HTTPSession | None:
        """The session a message names; answers 404 (unknown, ended, or another caller's) or 400 itself."""
        if self.fleet is not None:
            session = await self.fleet.find(session_id)  # this process's replica of the fleet's session
        else:
            session = self.table.sessions.get(session_id)
        if session is None or session.legacy or session.owner != owner:
            await error(send, 404, None, INVALID_REQUEST, "Session not found: initialize a new one")
            return None
        negotiated = session.version
        sent = headers.get("mcp-protocol-version")
        if sent is not None and negotiated is not None and sent != negotiated:
            await error(send, 400, None, INVALID_REQUEST,
                        f"Bad Request: MCP-Protocol-Version {sent!r} is not the session's {negotiated!r}")  # fmt: skip
            return None
        session.touched = self.table.clock()
        if self.fleet is not None:
            self.fleet.touch(session)
        return session

    async def _in_session(
        self,
        session: HTTPSession,
        decoded: jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError],
        headers: dict[str, str],
        receive: Receive,
        send: Send,
    ) -> None:
        served = session.served
        message: jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]
        extra: list[tuple[bytes, bytes]] = []
        if type(decoded) is jsonrpc.Request:  # nearly every POST: one request, tested at once
            message = decoded
            ids = [decoded.id]
            if decoded.id in session.streams:
                await refuse_in_use(send, decoded.id)
                return
            if len(session.streams) >= self.max_requests_per_session:
                await refuse_busy(session, send, decoded.id, self.max_requests_per_session)
                return
            stream = session.open_stream(ids)
        else:
            try:
                message = served.connection.accept(decoded)  # batches only where the revision has them
            except RemoteProtocolError as exc:
                await send_json(send, 400, error_response(exc.request_id, exc))
                return
            events: list[jsonrpc.Event | RemoteProtocolError] = (
                message if isinstance(message, list) else [message]
            )
            if not answerable_ids(events):
                await self._accept(session, message, events, send)
                return
            # A batch: its members within the cap go in, the others are answered each (.admission).
            admitted = admit_batch(session, events, self.max_requests_per_session)
            if not admitted.ids:
                await admitted.answer_now(session, send)
                return
            message, ids, extra = admitted.events, admitted.ids, admitted.headers
            stream = admitted.open_stream(session)

        def resumable() -> ResumableStream | None:
            # Asked only of an answer that becomes an event stream (a JSON answer has no events):
            # from 2025-03-26 its events are kept for a reconnection.
            if not session.has("resumable_streams"):
                return None
            retry_ms = self.retry_ms if session.has("sse_polling") else None
            stream_id = session.new_stream_id()
            if self.fleet is not None and isinstance(message, jsonrpc.Request):
                self.fleet.running(stream_id, jsonrpc.encode(message))  # for a takeover
            return new_resumable(session.resumable, stream_id, self.event_store, retry_ms, self.table.chore)

        accepts_sse = "text/event-stream" in headers.get("accept", "")
        if type(message) is jsonrpc.Request and self.fleet is None:
            await _answer_here(session, message, stream, ids, receive, send, accepts_sse, resumable)
            return
        if self.fleet is not None and isinstance(message, jsonrpc.Request) and message.method in REPLAYED:
            try:  # first: while the shared state is away it is refused whole, not done here alone
                await self.fleet.replay_elsewhere(session, message)
            except StateUnavailable as exc:
                session.close_response(stream, ids)
                exc.request_id = message.id
                raise
        await served.peer.deliver(message)
        await respond(session, stream, ids, receive, send, accepts_sse, resumable, extra)

    async def _accept(
        self,
        session: HTTPSession,
        message: jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError],
        events: list[jsonrpc.Event | RemoteProtocolError],
        send: Send,
    ) -> None:
        """A POST with no request in it (notifications, answers to the server's requests)."""
        peer = session.served.peer
        # Notifications and answers to our requests: "the server MUST return ... 202 Accepted".
        # A batch member that was not even JSON-RPC, with no id, is answered here: it has no
        # request to ride on.
        bad = [e for e in events if isinstance(e, RemoteProtocolError)]
        good: list[jsonrpc.Event | RemoteProtocolError] = [e for e in events if e not in bad]
        if self.fleet is not None:  # answers and cancellations: to the replica they concern
            travel = [e for e in good if _for_any_replica(e)]
            good = [e for e in good if e not in travel]
            await self.fleet.forward(
                session.id, [jsonrpc.encode(e) for e in travel if not isinstance(e, RemoteProtocolError)]
            )
        if good:
            await peer.deliver(message if not bad else good)
        if bad:
            await send_json(send, 400, b"[" + b",".join(error_response(None, e) for e in bad) + b"]")
        else:
            await plain(send, 202, b"")

    async def _get_or_delete(
        self, method: str, headers: dict[str, str], receive: Receive, send: Send, owner: str | None
    ) -> None:
        session = await self._session_for(headers["mcp-session-id"], headers, send, owner)
        if session is None:
            return
        if method == "DELETE":
            if self.fleet is not None:
                await self.fleet.delete(session)
            self.table.end(session)
            await plain(send, 200, b"")
        elif "last-event-id" in headers:
            stalled = None
            if self.fleet is not None:
                fleet = self.fleet

                async def stalled(stream_id: str) -> None:
                    await fleet.take_over(session, stream_id)

            await replay(
                session.resumable,
                self.event_store,
                headers["last-event-id"],
                receive,
                send,
                session.id,
                stalled,
            )
        elif session.attached or (self.fleet is not None and not await self.fleet.hold(session)):
            await error(send, 409, None, INVALID_REQUEST, "Conflict: this session already has a GET stream")
        elif self.fleet is not None:  # claimed here (a claim whose holder died is taken at once)
            try:
                await standalone_stream(session, receive, send, b": stream open\n\n", self.table.closing)
            finally:
                await self.fleet.release(session)
        else:
            await standalone_stream(session, receive, send, b": stream open\n\n", self.table.closing)


async def _answer_here(
    session: HTTPSession,
    request: jsonrpc.Request,
    stream: ResponseStream,
    ids: list[jsonrpc.RequestId],
    receive: Receive,
    send: Send,
    accepts_sse: bool,
    resumable: Callable[[], ResumableStream | None],
) -> None:
    """One request POSTed alone to a session (outside a fleet), handled in the POST's own task
    (:meth:`~mcpkit.session.Peer.answer_here`) rather than a task of its own that the POST waits
    for: most are answered with nothing before the answer, which then goes as JSON, at the cost of
    one task and the stream's wake-ups fewer. The first message the handler sends before its answer
    (a notification, a request to the client, the end of the stream) starts what :func:`respond`
    does in a task beside it, as the POST would otherwise have done: the answer then goes there,
    and disconnection, resumption and the JSON-only case are handled exactly as on that path."""
    responder: asyncio.Task[None] | None = None

    def start() -> None:
        nonlocal responder
        responder = asyncio.ensure_future(
            respond(session, stream, ids, receive, send, accepts_sse, resumable)
        )

    stream.on_first = start
    try:
        answer = await session.served.peer.answer_here(request)
    except BaseException:
        stream.on_first = None
        if responder is None:
            session.close_response(stream, ids)
        else:
            stream.put(b"", True)  # as if cancelled: the responder ends the response
        raise
    stream.on_first = None
    if responder is None:
        try:
            # "receivers ... SHOULD NOT send a response for the cancelled request": 202, as respond
            # answers it.
            await send_json(send, 200 if answer else 202, answer)
        finally:
            session.close_response(stream, ids)
        return
    stream.put(answer, True)
    await responder


def _path_of(scope: Scope) -> str:
    """The request's path inside this app: mounted under a prefix (Starlette's ``Mount``, uvicorn's
    ``--root-path``), the ASGI path still carries the prefix, which ``root_path`` names."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def _client_of(scope: Scope) -> str:
    """The address a request came from (empty when the server does not say)."""
    client = scope.get("client")
    return str(client[0]) if client else ""


def _for_any_replica(event: jsonrpc.Event | RemoteProtocolError) -> bool:
    """An answer to a server request, or a cancellation: in a fleet, the replica that sent that
    request (or runs the one cancelled) may be in another process."""
    if isinstance(event, (jsonrpc.Response, jsonrpc.ErrorResponse)):
        return True
    return isinstance(event, jsonrpc.Notification) and event.method == "notifications/cancelled"


#: Headers that say what a message is or where it belongs: one value each, or an intermediary that
#: reads the first and a server that reads the last would disagree.
_SINGLE_STANDARD: Final = frozenset({"mcp-method", "mcp-name", "mcp-protocol-version"})
_SINGLE_ROUTING: Final = frozenset({"mcp-session-id", "last-event-id", "host", "content-type"})


async def _refuse_repeated(raw: list[tuple[bytes, bytes]], send: Send) -> bool:
    """Answer 400 for a request repeating a header that must appear once; ``True`` if it did."""
    seen: set[str] = set()
    for key, _ in raw:
        name = key.decode("latin-1").lower()
        if name in seen:
            if name in _SINGLE_STANDARD or name.startswith("mcp-param-"):
                await error(
                    send, 400, None, HEADER_MISMATCH, f"Header mismatch: {name} appears more than once"
                )
                return True
            if name in _SINGLE_ROUTING:
                await error(send, 400, None, INVALID_REQUEST, f"Bad Request: {name} appears more than once")
                return True
        seen.add(name)
    return False
