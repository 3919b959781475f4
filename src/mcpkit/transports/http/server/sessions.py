"""Streamable HTTP in the handshake era: a session per ``initialize``, served by the one session layer.

Each session is a :class:`~mcpkit.session.Peer` like a stdio connection's, fed message by message:
a POST's body is decoded by the peer and delivered to it, so answer matching, cancellation, batches
and error answers are the session layer's, not this module's. What is HTTP's lives here: which
stream each outgoing message takes. :class:`HTTPSession` is the peer's
:class:`~mcpkit._transport.RoutedTransport`:

* a message that belongs to a request (its answer, or a notification or request sent while handling
  it) goes on the response of the POST that carried the request, which is plain JSON if the answer
  is all there is, else an event stream;
* anything else (list changes, resource updates, task status) goes on the session's GET stream.
  Until the client opens it, the last :data:`~.streams.BACKLOG` such messages wait for it (a client that
  subscribes and at once causes a change must not lose the notification to the race with its own
  GET); a request with no stream to carry it fails instead of waiting for ever.

Nothing the server sends waits for a client to read: a message for the GET stream is put in the
session's queue and the stream's own task writes it. A client that stops reading while changes keep
coming lets that queue grow to *queue_limit* messages; then its stream is ended (and logged), and
the server carries on: a slow reader never holds up a tool call nor another session's stream.
A change notification already waiting in the queue is not queued again (a list that changed twice
before the client heard of it changed once, for the client), so a burst of changes costs a reader
one message, not thousands.

A session alone in its process keeps what waits for its GET stream in its backlog. In a fleet
(:mod:`mcpkit.fleet.sessions`) a session is served by every process a request of it lands on, each
from a copy of it, and what a copy sends for the GET stream while that stream is not open here
travels to the process holding it (the copy's :attr:`HTTPSession.router` takes it).

The POST path itself (admitting a POST, answering it) is :mod:`.routing`'s; a POST's response
stream is :mod:`.streams`'.

From 2025-03-26 a POST's event stream is resumable: its events get ids and are kept in the event
store, a dropped stream does not cancel its requests ("disconnection SHOULD NOT be interpreted as
the client cancelling its request"), and GET with ``Last-Event-ID`` replays what was missed (see
:mod:`.resume`). Before that, dropping the stream cancels the requests it carried.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from .... import _jsonrpc as jsonrpc
from ...._errors import ConnectionClosed
from ....kernel import Endpoint, ServerSession
from ._asgi import SSE_HEADERS, Receive, Send, event, send_body, wait_disconnect
from .event_store import EventStore
from .resume import LiveStream
from .streams import BACKLOG, CLOSE, DEFAULT_STREAM_QUEUE, ResponseStream, close_stream, coalescible

__all__ = ["HTTPSession", "SessionRouter", "SessionTable", "standalone_stream"]

logger = logging.getLogger("mcpkit.http")


class SessionRouter(Protocol):
    """Where a session's messages for its GET stream go while no stream of it is open here."""

    async def route_out(self, session: HTTPSession, message: bytes) -> None:
        """Take *message* to the session's GET stream wherever it is held, or keep it for the
        next one. Raises ``ConnectionClosed`` for a request that no stream can carry."""
        ...


class _KeptHere:
    """A session alone in its process: what waits for the GET stream waits in its backlog."""

    __slots__ = ()

    async def route_out(self, session: HTTPSession, message: bytes) -> None:
        if isinstance(jsonrpc.decode(message), jsonrpc.Request):
            # A request that no stream can carry would wait for an answer for ever.
            raise ConnectionClosed("no open stream to the client (open one with GET)")
        session.keep(message)


_KEPT_HERE: SessionRouter = _KeptHere()


class HTTPSession:
    """A handshake-era session (Streamable HTTP, or HTTP+SSE when *legacy*): the routed transport
    its peer sends through."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        legacy: bool = False,
        queue_limit: int = DEFAULT_STREAM_QUEUE,
        client: str = "",
        session_id: str | None = None,
    ) -> None:
        #: "cryptographically secure": it is a bearer of the session. (A fleet replica takes the
        #: id of the session it serves.)
        self.id = session_id if session_id is not None else secrets.token_urlsafe(24)
        self.legacy = legacy  # a 2024-11-05 HTTP+SSE session: everything goes on its one stream
        self.client = client  # the address it was opened from (sessions per client are capped)
        #: Who opened it, on a protected endpoint (see ``auth.owner_of``): only they may use it.
        self.owner: str | None = None
        self.touched = time.monotonic()
        self.ended = asyncio.Event()
        #: The open response streams, by the id of each request they carry.
        self.streams: dict[jsonrpc.RequestId, ResponseStream] = {}
        #: What waits for the session's GET stream (HTTP+SSE: its only stream), bounded: at most
        #: BACKLOG while it is not open, at most queue_limit while it is.
        self.backlog: collections.deque[bytes] = collections.deque()
        self.queue_limit = queue_limit
        #: Whether the client has that stream open now, and the task writing it.
        self.attached = False
        self.stream_task: asyncio.Task[object] | None = None
        self.overflowed = False
        self._waiting_changes: set[bytes] = set()  # change notifications in the backlog
        self.backlog_changed = asyncio.Event()
        #: Resumable response streams, by stream id (see .resume).
        self.resumable: dict[str, LiveStream] = {}
        self._next_stream = 0
        #: Where GET-stream messages go while no stream is open here (a fleet's copy of a session
        #: sends them to the process holding it), and whether this is the session's home (where
        #: it was initialized).
        self.router = _KEPT_HERE
        self.home = True
        self._stream_prefix = f"{self.id}-"
        self.served: ServerSession = endpoint.connect(self)
        self.served.connection.session_id = self.id

    @property
    def version(self) -> str | None:
        """The negotiated revision, once ``initialize`` has been answered."""
        scope = self.served.connection.session
        return scope.version if scope is not None else None

    def has(self, feature: str) -> bool:
        scope = self.served.connection.session
        return scope is not None and scope.has(feature)

    def new_stream_id(self) -> str:
        self._next_stream += 1
        return f"{self._stream_prefix}{self._next_stream}"

    def join_fleet(self, router: SessionRouter, home: bool) -> None:
        """Serve this session as one copy of it among a fleet's (see :mod:`mcpkit.fleet.sessions`)."""
        self.router, self.home = router, home
        # Stream ids unique across the fleet's replicas of the session, still starting with its id.
        self._stream_prefix = f"{self.id}-{secrets.token_hex(4)}-"

    # -- the peer's transport ----------------------------------------------------------------------

    async def receive(self) -> bytes:
        raise EOFError  # never read in a loop: POSTs deliver their messages

    async def send(self, message: bytes) -> None:
        await self.send_related(message, None, False)

    async def send_related(self, message: bytes, related: jsonrpc.RequestId | None, final: bool) -> None:
        stream = self.streams.get(related) if related is not None else None
        if stream is not None:
            if not final and stream.full():
                await stream.room()  # the client is not reading this POST's stream: this sender waits
            stream.put(message, final)
        elif not message:
            return  # a cancelled request whose stream is gone: nothing is owed
        elif final and not self.legacy:
            # Its POST is gone (and with it, before 2025-03-26, the request); the GET stream
            # "MUST NOT" carry a response. (HTTP+SSE has one stream, which carries everything.)
            logger.debug("dropping the answer to %r: its response stream is closed", related)
        elif self.ended.is_set():
            raise ConnectionClosed("the session has ended")
        elif self.attached:
            self.keep(message)
        else:
            await self.router.route_out(self, message)

    def keep(self, message: bytes) -> None:
        """Queue *message* for the GET stream: at most :data:`~.streams.BACKLOG` while none is
        open, at most *queue_limit* while one is (then the stream is ended)."""
        if coalescible(message):
            if message in self._waiting_changes:
                return  # the client has not heard of the last such change yet
            self._waiting_changes.add(message)
        self.backlog.append(message)
        if not self.attached:
            if len(self.backlog) > BACKLOG:
                self._waiting_changes.discard(self.backlog.popleft())
        elif len(self.backlog) > self.queue_limit:
            self._overflow()
        self.backlog_changed.set()

    def take(self) -> bytes:
        """The next message for the GET stream (there must be one)."""
        message = self.backlog.popleft()
        self._waiting_changes.discard(message)
        return message

    def clear_backlog(self) -> None:
        self.backlog.clear()
        self._waiting_changes.clear()

    def _overflow(self) -> None:
        # The client does not read its stream: end it rather than queue without bound.
        logger.warning(
            "session %s: closing its event stream, the client has not read %d messages",
            self.id[:8],
            len(self.backlog),
        )
        self.clear_backlog()
        self.overflowed = True
        if self.stream_task is not None:
            self.stream_task.cancel()

    async def close_stream(self, related: jsonrpc.RequestId) -> None:
        stream = self.streams.get(related)
        if stream is not None:
            stream.put(CLOSE, False)

    async def aclose(self) -> None:
        self.end()

    def end(self) -> None:
        """The session is over: stop its requests and its streams."""
        if not self.ended.is_set():
            self.ended.set()
            self.served.peer.cancel_all()

    # -- taking a POST -----------------------------------------------------------------------------

    def open_stream(self, ids: list[jsonrpc.RequestId]) -> ResponseStream:
        """The response stream of a POST whose answer will carry *ids*."""
        stream = ResponseStream(self.queue_limit)
        for request_id in ids:
            self.streams[request_id] = stream
        return stream

    def close_response(self, stream: ResponseStream, ids: list[jsonrpc.RequestId]) -> None:
        stream.release()
        for request_id in ids:
            if self.streams.get(request_id) is stream:
                del self.streams[request_id]


class SessionTable:
    """The live handshake-era sessions of one app, ended when deleted or idle too long.

    *clock* is injectable so tests can age sessions without waiting."""

    def __init__(
        self,
        endpoint: Endpoint,
        event_store: EventStore,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_sessions: int = 10_000,
        max_sessions_per_client: int = 1_000,
        queue_limit: int = DEFAULT_STREAM_QUEUE,
    ) -> None:
        self.endpoint = endpoint
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        #: Open sessions by client address; an address with none is not kept.
        self.per_client: dict[str, int] = {}
        self.queue_limit = queue_limit
        self.event_store = event_store
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.sessions: dict[str, HTTPSession] = {}
        self._expired_at = 0.0  # when expire_idle last looked
        self._chores: set[asyncio.Task[None]] = set()
        #: Called with each session as it ends (the app's strategy: a fleet forgets its copy).
        self.on_end: Callable[[HTTPSession], None] = _nothing
        #: Set when the process shuts down: every GET stream ends (its client reconnects, to
        #: another process of a fleet), the sessions themselves go on.
        self.closing = asyncio.Event()

    def new(self, *, legacy: bool = False, client: str = "") -> HTTPSession | None:
        """A new session for *client* (an address; not yet in the table), or ``None`` if the table
        is full or that client has its share of it already."""
        if not self._room_for(client):
            self._expired_at = 0.0  # idle ones make room first
            self.expire_idle()
            if not self._room_for(client):
                return None
        return HTTPSession(self.endpoint, legacy=legacy, queue_limit=self.queue_limit, client=client)

    def _room_for(self, client: str) -> bool:
        if len(self.sessions) >= self.max_sessions:
            logger.warning("refusing a new session: %d are open (max_sessions)", len(self.sessions))
            return False
        if self.per_client.get(client, 0) >= self.max_sessions_per_client:
            # One client (or everyone behind one address) may not take every slot of the server.
            logger.warning("refusing a new session: %s has %d open (max_sessions_per_client)",
                           client or "a client", self.per_client[client])  # fmt: skip
            return False
        return True

    def add(self, session: HTTPSession) -> HTTPSession:
        session.touched = self.clock()
        self.sessions[session.id] = session
        self.per_client[session.client] = self.per_client.get(session.client, 0) + 1
        return session

    def end(self, session: HTTPSession) -> None:
        """End *session*: its requests stop, its streams close, the server forgets it."""
        if self.sessions.pop(session.id, None) is not None:
            left = self.per_client.pop(session.client, 1) - 1
            if left:
                self.per_client[session.client] = left
        for stream_id in session.resumable:
            self.chore(self.event_store.forget(stream_id))
        session.resumable.clear()
        session.end()
        self.endpoint.disconnect(session.served)
        self.on_end(session)

    def expire_idle(self) -> None:
        # A walk over every session, so at most once a second rather than on every request.
        now = self.clock()
        if now - self._expired_at < 1.0:
            return
        self._expired_at = now
        limit = now - self.idle_seconds
        for session in [s for s in self.sessions.values() if s.touched < limit]:
            self.end(session)

    def chore(self, work: Awaitable[None]) -> None:
        """Run *work* in the background (event store upkeep), keeping a reference until it ends."""
        task = asyncio.ensure_future(work)
        self._chores.add(task)
        task.add_done_callback(self._chore_done)

    def _chore_done(self, task: asyncio.Task[None]) -> None:
        self._chores.discard(task)
        # Its failure is logged here, in one line: left unretrieved it would be a traceback at
        # exit (a shared event store that cannot be reached while a stream ends, say).
        if not task.cancelled() and task.exception() is not None:
            logger.warning("session upkeep failed: %s", task.exception())


async def standalone_stream(
    session: HTTPSession, receive: Receive, send: Send, first: bytes, closing: asyncio.Event | None = None
) -> None:
    """The session's GET stream (or an HTTP+SSE session's only stream): messages that belong to no
    request, until the client goes away, the session ends or *closing* is set (the process shuts
    down). *first* opens it. If the client stops reading and its queue overflows, the stream is
    ended (see :meth:`HTTPSession._overflow`)."""
    task = asyncio.current_task()
    assert task is not None
    session.attached, session.stream_task, session.overflowed = True, task, False
    disconnected = asyncio.ensure_future(wait_disconnect(receive))
    ended = asyncio.ensure_future(
        session.ended.wait() if closing is None else _first_of(session.ended.wait(), closing.wait())
    )
    try:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await send_body(send, first)
        while True:
            while session.backlog:
                await event(send, session.take())
            session.backlog_changed.clear()
            changed = asyncio.ensure_future(session.backlog_changed.wait())
            done, _ = await asyncio.wait({changed, disconnected, ended}, return_when=asyncio.FIRST_COMPLETED)
            if changed not in done:
                changed.cancel()
                return
    except asyncio.CancelledError:
        if not session.overflowed:
            raise
        task.uncancel()  # our own doing: the stream overflowed
    finally:
        session.attached, session.stream_task = False, None
        disconnected.cancel()
        ended.cancel()
        if session.overflowed:
            session.clear_backlog()
        await close_stream(send, session.overflowed)


async def _first_of(*waits: Awaitable[object]) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _nothing(session: HTTPSession) -> None:
    return None
