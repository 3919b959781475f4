"""What the HTTP server side is handed rather than imports: where sessions live, and telemetry.

The app serves one process's requests. Two parts of mcpkit change what that means without being
part of the wire: serving one server from many processes (:mod:`mcpkit.fleet`) and OpenTelemetry
(:mod:`mcpkit.telemetry`). Each is handed to :class:`~.app.StreamableHTTPApp` as one object that
keeps a contract declared here, so the wire code never imports them and has no ``if fleet`` in it:

* :class:`SessionStrategy`: the named points at which the app and its session table ask where a
  handshake-era session lives. :class:`~.local.LocalStrategy` is the answer of a process alone (a
  session is where it was opened, and nowhere else); :class:`mcpkit.fleet.sessions.SessionFleet`
  is the answer of a fleet (any process serves any session from a copy of it);
* :class:`RequestTelemetry`: what the transport tells telemetry about the requests it serves;
* :class:`Unavailable`: the error a strategy raises when it cannot serve a request now (the shared
  state is away), which its :meth:`~SessionStrategy.guard` turns into 503 and ``Retry-After``.

The app is built with them by :meth:`mcpkit.LowLevelServer.http_app`; built by hand it serves alone
and untraced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from .... import _jsonrpc as jsonrpc
from ...._errors import SERVER_BUSY, RemoteProtocolError, RPCError
from ._asgi import Receive, Scope, Send

if TYPE_CHECKING:
    from .sessions import HTTPSession, SessionTable

__all__ = ["Handler", "RequestTelemetry", "SessionStrategy", "Unavailable"]

#: One ASGI request's handling: what :meth:`SessionStrategy.guard` wraps.
Handler = Callable[[Scope, Receive, Send], Awaitable[None]]
#: What a POST without requests carries: notifications, answers, members that were not JSON-RPC.
Member = jsonrpc.Event | RemoteProtocolError


class Unavailable(RPCError):
    """A request this process cannot serve now, for a reason that passes: answered HTTP 503 with
    ``Retry-After`` by the strategy's :meth:`~SessionStrategy.guard` (and -32000 to a handler it
    escapes). What the peer is told is generic; :attr:`request_id` names the request it failed
    where the code that met it knew it."""

    default_code = SERVER_BUSY

    def __init__(self, message: str) -> None:
        super().__init__(SERVER_BUSY, message)
        self.request_id: jsonrpc.RequestId | None = None


class RequestTelemetry(Protocol):
    """What a transport tells telemetry (:class:`mcpkit.telemetry.Telemetry` keeps it)."""

    def serving(self, network_transport: str) -> None:
        """The requests this context goes on to deliver came over *network_transport*
        (``"tcp"``, ``"pipe"``): what their spans say."""
        ...


class SessionStrategy(Protocol):
    """Where one app's handshake-era sessions live, asked at a few named points.

    The process: :meth:`guard` wraps each request, :meth:`start`, :meth:`drain` and :meth:`stop`
    follow the app's lifespan, :meth:`readiness` answers ``/readyz``. The sessions: :meth:`open`
    (``initialize`` was answered), :meth:`find` (a session not in this process's table),
    :meth:`touch`, :meth:`replicate` and :meth:`running` (a request is about to run),
    :meth:`take_in` (what a POST carries besides requests), :meth:`hold` and :meth:`release` (the
    GET stream), :meth:`take_over` (a resumed stream stalled), :meth:`end` and :meth:`ended`. And
    HTTP+SSE's: :meth:`held_elsewhere` and :meth:`forward`.
    """

    # -- the process ---------------------------------------------------------------------------------

    def bind(self, table: SessionTable) -> None:
        """Serve *table*'s sessions (called once, by the app the strategy is handed to)."""
        ...

    def guard(self, handler: Handler) -> Handler:
        """*handler* as each request runs it (a fleet's answers 503 while its state is away)."""
        ...

    async def start(self) -> None:
        """The app starts (its lifespan): join whatever the sessions are shared through."""
        ...

    async def drain(self) -> None:
        """Shutdown begins: take no new traffic, end the long-lived streams."""
        ...

    async def stop(self) -> None:
        """The app stops (its lifespan ends)."""
        ...

    async def readiness(self) -> tuple[int, bytes]:
        """The status and body of ``GET /readyz``."""
        ...

    # -- a session's life ----------------------------------------------------------------------------

    async def open(self, session: HTTPSession, init: jsonrpc.Request | None) -> None:
        """*session* was opened here (its ``initialize`` request *init*; ``None`` for HTTP+SSE)
        and is in the table. Raises :class:`Unavailable` if it cannot be shared now: the app then
        ends it."""
        ...

    async def find(self, session_id: str) -> HTTPSession | None:
        """The session *session_id* when this process's table has none (a copy of one opened
        elsewhere), or ``None``."""
        ...

    def touch(self, session: HTTPSession) -> None:
        """A request of *session* came here."""
        ...

    async def end(self, session: HTTPSession) -> None:
        """DELETE: *session* ends everywhere (the table ends it here after)."""
        ...

    def ended(self, session: HTTPSession) -> None:
        """The table ended *session* (deleted, idle, or its stream closed): forget it."""
        ...

    # -- what a POST brings --------------------------------------------------------------------------

    async def replicate(self, session: HTTPSession, request: jsonrpc.Request) -> None:
        """*request*, POSTed alone, is about to run here: share its effect where that must be
        shared (raises :class:`Unavailable` if it cannot be now; nothing has run)."""
        ...

    def running(self, stream_id: str, request: jsonrpc.Event | list[Member]) -> None:
        """*request*'s answer is becoming the resumable stream *stream_id*, written here."""
        ...

    async def take_in(self, session: HTTPSession, members: list[Member]) -> list[Member]:
        """Of what a POST carries besides requests, what this process delivers to *session*
        (the rest is taken to where it belongs)."""
        ...

    # -- the GET stream ------------------------------------------------------------------------------

    async def hold(self, session: HTTPSession) -> bool:
        """Whether a GET stream of *session* may open here (no other holds one)."""
        ...

    async def release(self, session: HTTPSession) -> None:
        """The GET stream that :meth:`hold` allowed has closed."""
        ...

    async def take_over(self, session: HTTPSession, stream_id: str) -> None:
        """A client resuming *stream_id* (``Last-Event-ID``) heard nothing for a while."""
        ...

    # -- HTTP+SSE ------------------------------------------------------------------------------------

    async def held_elsewhere(self, session_id: str, owner: str | None) -> bool:
        """Whether *session_id* is an HTTP+SSE session that *owner* opened in another process."""
        ...

    async def forward(self, session_id: str, messages: list[bytes]) -> None:
        """Take *messages* to the session *session_id* wherever it is served."""
        ...
