"""The ASGI app: checks what HTTP adds, then sends each message down its era's path.

Before a body is looked at: the path (404), Host (421) and Origin (403) against the allowlists, the
method, the Content-Type of a POST (415 unless ``application/json``), and the body size (413) and
pace (408). Then:

* a 2026-07-28 request (its ``_meta`` names a revision) is answered statelessly (:mod:`.stateless`);
* ``initialize`` opens a handshake-era session, and every later POST names it with
  ``Mcp-Session-Id`` (400 without, 404 once ended); GET opens its stream or resumes one
  (``Last-Event-ID``), DELETE ends it (:mod:`.routing`, :mod:`.sessions`, :mod:`.resume`);
* the 2024-11-05 HTTP+SSE transport lives at its own two paths (:mod:`.legacy_sse`);
* ``GET /healthz`` and ``GET /readyz``, whatever the Host: liveness and readiness (:mod:`.health`).

Where handshake-era sessions live is the *strategy*'s answer (:mod:`.seams`): by default this
process alone (:mod:`.local`); :meth:`mcpkit.LowLevelServer.http_app` with ``redis=`` hands the app
a fleet's (:mod:`mcpkit.fleet.sessions`), with which any process serves any session and resumable
streams' events are shared, so ``Last-Event-ID`` replays anywhere. The requests themselves take one
path either way (:mod:`.routing`).

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
server's own requests never count, so a handler waiting on the client cannot deadlock), and the
messages queued for a stream the client does not read (then that stream ends).
The request head is bounded where it is parsed (:mod:`._uvicorn`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

from ...._errors import HEADER_MISMATCH, INVALID_REQUEST, SERVER_BUSY
from ...._ratelimit import KeyedBuckets
from ....auth import ResourceServerAuth, current_auth, current_headers
from ....kernel import Endpoint
from ._asgi import Receive, Scope, Send, client_of, error, path_of, plain, request_headers
from .auth import AuthGate, ProtectedResourceMetadata, owner_of
from .cors import CorsPolicy
from .event_store import EventStore, MemoryEventStore
from .health import HEALTH_PATHS, answer_probe
from .lifespan import Serving
from .local import LocalStrategy
from .routing import Routes
from .seams import RequestTelemetry, SessionStrategy
from .sessions import HTTPSession, SessionTable
from .streams import DEFAULT_STREAM_QUEUE

__all__ = ["DEFAULT_MAX_BODY", "StreamableHTTPApp"]

DEFAULT_MAX_BODY: Final = 4 * 1024 * 1024
_LOCAL_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
#: How many accepted Host values are remembered, and how long one may be to be remembered.
_HOSTS_KEPT: Final = 64
_HOST_BYTES: Final = 256


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
        strategy: where handshake-era sessions live (:class:`~.seams.SessionStrategy`; default:
            this process alone). A fleet's also brings its shared *event_store*.
        telemetry: what is told which transport served each request (the server's
            :class:`~mcpkit.telemetry.Telemetry`, for its spans' ``network.transport``).
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
        strategy: SessionStrategy | None = None,
        telemetry: RequestTelemetry | None = None,
    ) -> None:
        self.server = server
        self.strategy: SessionStrategy = strategy if strategy is not None else LocalStrategy()
        self.serving = Serving(server, self.strategy)
        self._traced = telemetry.serving if telemetry is not None else None
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
        self.table.on_end = self.strategy.ended
        self.strategy.bind(self.table)
        self.routes = Routes(
            server,
            self.table,
            self.strategy,
            self.event_store,
            self.auth,
            sse_path=sse_path,
            messages_path=messages_path,
            max_body_bytes=max_body_bytes,
            body_timeout=body_timeout,
            max_requests_per_session=max_requests_per_session,
            stream_queue_limit=stream_queue_limit,
            retry_ms=retry_ms,
        )
        #: Each request as the strategy runs it (a fleet's answers 503 while its state is away).
        self._handle = self.strategy.guard(self._http)
        self.path = path
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.allowed_hosts = set(allowed_hosts)
        if auth is not None:  # the canonical URI names a host this server is reached at, by definition
            self.allowed_hosts.add(urlsplit(auth.audience).netloc)
        self.allowed_origins = set(allowed_origins)
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
        if self._traced is not None:
            self._traced("tcp")  # this request's task (and the handlers it starts): its spans
        await self._handle(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = request_headers(scope["headers"])
        if len(headers) != len(scope["headers"]) and await _refuse_repeated(scope["headers"], send):
            return
        current_headers.set(headers)  # this request's task only (each ASGI request has its own)
        path = path_of(scope)
        if path == self.path:  # nearly every request: the two other tests need not be made
            legacy = metadata = False
        else:
            legacy = path in (self.sse_path, self.messages_path)
            metadata = self.metadata is not None and path in self.metadata.paths
            if not legacy and not metadata:
                if path in HEALTH_PATHS:
                    await answer_probe(self.strategy.readiness, path, scope["method"], send)
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
            wait = self.rate_limit.take(client_of(scope))
            if wait:
                await error(send, 429, None, SERVER_BUSY,
                            f"Too many requests: over {self.rate_limit.rate.spec} for this client",
                            [(b"retry-after", str(math.ceil(wait)).encode())])  # fmt: skip
                return
        if self.auth is None or scope["method"] == "OPTIONS":  # OPTIONS is never an MCP request (405)
            await self.routes.serve(scope, path, legacy, headers, None, None, receive, send)
            return
        admitted = await self.auth.admit(scope, headers, send)
        if admitted is None:
            return
        info, send = admitted
        reset = current_auth.set(info)  # what the handler's task inherits: ctx.auth
        try:
            await self.routes.serve(scope, path, legacy, headers, info, owner_of(info), receive, send)
        finally:
            current_auth.reset(reset)

    async def drain(self) -> None:
        """The process is about to stop: end the streams that would otherwise hold it up (every
        session's GET stream, every ``subscriptions/listen``), so their clients reconnect (to
        another process of a fleet); requests still running get the server's shutdown timeout.
        ``/readyz`` answers 503 from now on, so a balancer sends nothing new."""
        self.table.closing.set()
        await self.strategy.drain()

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
