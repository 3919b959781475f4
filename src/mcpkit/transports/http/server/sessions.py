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
  Until the client opens it, the last :data:`BACKLOG` such messages wait for it (a client that
  subscribes and at once causes a change must not lose the notification to the race with its own
  GET); a request with no stream to carry it fails instead of waiting for ever.

Nothing the server sends waits for a client to read: a message for the GET stream is put in the
session's queue and the stream's own task writes it. A client that stops reading while changes keep
coming lets that queue grow to *queue_limit* messages; then its stream is ended (and logged), and
the server carries on: a slow reader never holds up a tool call nor another session's stream.
A change notification already waiting in the queue is not queued again (a list that changed twice
before the client heard of it changed once, for the client), so a burst of changes costs a reader
one message, not thousands.

In a fleet (:mod:`.roaming`) a session is served by every process a request of it lands on: each
holds a replica of it (a peer of its own, restored from the shared record), and what a replica sends
that belongs on the GET stream travels to the process holding that stream (its :attr:`HTTPSession.fleet`
routes it).

From 2025-03-26 a POST's event stream is resumable: its events get ids and are kept in the event
store, a dropped stream does not cancel its requests ("disconnection SHOULD NOT be interpreted as
the client cancelling its request"), and GET with ``Last-Event-ID`` replays what was missed (see
:mod:`.resume`). Before that, dropping the stream cancels the requests it carried.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Final, Protocol

from .... import _jsonrpc as jsonrpc
from ...._errors import ConnectionClosed
from ....kernel import Endpoint, ServerSession
from ._asgi import SSE_HEADERS, Receive, Send, end_body, event, send_body, send_json, wait_disconnect
from .event_store import EventStore
from .resume import LiveStream, ResumableStream

__all__ = [
    "DEFAULT_STREAM_QUEUE",
    "HTTPSession",
    "ResponseStream",
    "SessionTable",
    "close_stream",
    "respond",
    "standalone_stream",
]

logger = logging.getLogger("mcpkit.http")

#: In a response stream's queue: end the HTTP response now, the requests go on (SSE polling).
CLOSE: Final = b"\x00close"
#: Messages for the GET stream kept while it is not open, oldest dropped first.
BACKLOG: Final = 256
#: Messages queued for an open GET stream (or listen stream) that is not being read; beyond it the
#: stream is ended.
DEFAULT_STREAM_QUEUE: Final = 1024


class SessionRouter(Protocol):
    """Where a fleet replica's messages for the GET stream go when that stream is not held here."""

    async def route_out(self, session: HTTPSession, message: bytes, is_request: bool) -> None:
        """Take *message* to the session's GET stream wherever it is held (or keep it for it).
        Raises ``ConnectionClosed`` for a request that no stream can carry."""
        ...


def coalescible(message: bytes) -> bool:
    """Whether *message* says only that something changed (a list, a resource): two of them
    waiting to be sent are worth one. A look at the prefix, where the encoder puts the method."""
    head = message[:72]
    return b'/list_changed"' in head or b'"notifications/resources/updated"' in head


#: How long a stream ended for not being read gets to take its end before the connection is closed.
CLOSE_GRACE: Final = 1.0


class ResponseStream:
    """One POST's way back: what its requests' handlers send, in order, until every one is answered.

    A deque and one wake-up future rather than an ``asyncio.Queue``: most POSTs get nothing but
    their answer, and this is the per-request hot path. At most *limit* messages wait before the
    answer; a handler sending more waits (:meth:`room`) until the client reads, as over stdio:
    only that request is held, and nothing is dropped.
    """

    __slots__ = ("_room", "_wake", "answer", "answered", "limit", "on_first", "pending")

    def __init__(self, limit: int = DEFAULT_STREAM_QUEUE) -> None:
        self.pending: collections.deque[bytes] = collections.deque()  # what comes before the answer
        #: The answer once it is there (one message answers a POST, a batch's included); empty if
        #: the requests were cancelled and nothing is owed.
        self.answer = b""
        self.answered = False
        self.limit = limit
        self._wake: asyncio.Future[None] | None = None
        self._room: asyncio.Future[None] | None = None
        #: Called (once) when the first message before the answer comes: what starts the POST's
        #: responder when its request runs in the POST's own task (see ``app._in_session``).
        self.on_first: Callable[[], None] | None = None

    def put(self, message: bytes, final: bool) -> None:
        if final:
            if self.answered:
                return  # one answer per POST; a late "nothing is owed" must not erase it
            self.answer, self.answered = message, True
        elif message:
            self.pending.append(message)
            if self.on_first is not None:
                start, self.on_first = self.on_first, None
                start()
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    def full(self) -> bool:
        return len(self.pending) >= self.limit

    async def room(self) -> None:
        """Until fewer than *limit* messages wait (or the stream is released)."""
        while self.full():
            if self._room is None or self._room.done():
                self._room = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._room)  # several senders may wait on the one future

    def drained(self) -> None:
        """Some pending messages were taken (or the stream is gone): wake any sender waiting."""
        if self._room is not None and not self._room.done():
            self._room.set_result(None)

    def release(self) -> None:
        """The response is over: drop what nobody will read, and let waiting senders go on."""
        self.pending.clear()
        self.drained()

    async def wait(self) -> None:
        """Until something is pending or the answer is there."""
        while not self.pending and not self.answered:
            self._wake = asyncio.get_running_loop().create_future()
            try:
                await self._wake
            finally:
                self._wake = None

    async def next(self) -> bytes | None:
        """The next message, the answer last; ``None`` once it has been taken."""
        await self.wait()
        if self.pending:
            message = self.pending.popleft()
            self.drained()
            return message
        answer, self.answer = self.answer, b""
        return answer or None


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
        #: In a fleet: where GET-stream messages go when the stream is held elsewhere, and whether
        #: this is the session's home (where it was initialized).
        self.fleet: SessionRouter | None = None
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
        """Serve this session as one replica of a fleet (see :mod:`.roaming`)."""
        self.fleet, self.home = router, home
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
        elif self.fleet is not None and not self.attached:
            await self.fleet.route_out(self, message, isinstance(jsonrpc.decode(message), jsonrpc.Request))
        elif not self.attached and isinstance(jsonrpc.decode(message), jsonrpc.Request):
            # A request that no stream can carry would wait for an answer for ever.
            raise ConnectionClosed("no open stream to the client (open one with GET)")
        else:
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
        #: Called with each session as it ends (a fleet forgets its replica).
        self.on_end: Callable[[HTTPSession], None] | None = None
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
        if self.on_end is not None:
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
        task.add_done_callback(self._chores.discard)


async def respond(
    session: HTTPSession,
    stream: ResponseStream,
    ids: list[jsonrpc.RequestId],
    receive: Receive,
    send: Send,
    accepts_sse: bool,
    resumable: Callable[[], ResumableStream | None] | None,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Answer one POST carrying the requests *ids*: JSON when the answer is all there is, else an
    event stream of what the handlers send and then the answer. With a *resumable* stream
    (2025-03-26 and later; asked for only once the answer becomes an event stream) the events are
    kept for a reconnection and the work goes on when the stream drops; without one, dropping the
    stream cancels the requests it carried."""
    try:
        # The usual case first, with no extra task: wait for the answer or for something before it.
        while not stream.answered and not (accepts_sse and stream.pending):
            stream.release()  # a JSON-only client: nowhere to put notifications
            await stream.wait()
        if stream.answered and (not stream.pending or not accepts_sse):
            if stream.answer:
                await send_json(send, 200, stream.answer, headers or ())
            else:  # cancelled: "receivers ... SHOULD NOT send a response for the cancelled request"
                await send_json(send, 202, b"", headers or ())
            return
        # Something came before the answer: the answer becomes an event stream.
        await _stream_events(
            session, stream, ids, receive, send, resumable() if resumable else None, headers or []
        )
    finally:
        session.close_response(stream, ids)


async def _stream_events(
    session: HTTPSession,
    stream: ResponseStream,
    ids: list[jsonrpc.RequestId],
    receive: Receive,
    send: Send,
    resumable: ResumableStream | None,
    headers: list[tuple[bytes, bytes]],
) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *headers]})
    attached = True
    if resumable is not None:
        await resumable.prime(send)
    disconnected = asyncio.ensure_future(wait_disconnect(receive))
    try:
        while True:
            item = asyncio.ensure_future(stream.next())
            waiting = {item, disconnected} if attached else {item}
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if item not in done:  # the client went away
                item.cancel()
                attached = False
                if resumable is None:
                    # "closing the SSE response stream is itself the cancellation signal"
                    for request_id in ids:
                        session.served.peer.cancel_incoming(request_id)
                    return
                continue  # the work goes on; its events wait for a reconnection
            data = item.result()
            if data is None:
                return
            if data is CLOSE:
                if resumable is not None and resumable.can_poll and attached:
                    attached = False  # SSE polling: the rest waits for the reconnection
                    await end_body(send)
                continue
            event_id = await resumable.append(data) if resumable is not None else None
            if attached:
                await event(send, data, event_id)
    finally:
        disconnected.cancel()
        if resumable is not None:
            resumable.finish()
        if attached:
            await end_body(send)


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


async def close_stream(send: Send, stuck: bool) -> None:
    """End an event stream; one whose client is *stuck* (not reading) gets :data:`CLOSE_GRACE`
    seconds to take the end, after which the connection is dropped (uvicorn logs that the response
    was left incomplete and closes it)."""
    if not stuck:
        await end_body(send)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(end_body(send), CLOSE_GRACE)
