"""An admitted MCP request, by era and method, to its answer: the POST path in one place.

The app (:mod:`.app`) has checked what HTTP adds (path, Host, Origin, CORS, rate, token). Here:

* a POST's body is read (413, 408), decoded (400), its scopes checked, and then it goes one way:
  a 2026-07-28 request to the stateless exchange (:mod:`.stateless`); ``initialize`` to a new
  session; anything else to the session its ``Mcp-Session-Id`` names (400 without, 404 unknown);
* in the session, a request alone runs in the POST's own task (:func:`answer_here`), a batch or a
  POST without requests is delivered to the session's peer, and the answer is written
  (:func:`respond`): JSON when it is all there is, else an event stream;
* GET opens the session's stream or resumes one (``Last-Event-ID``), DELETE ends the session;
* HTTP+SSE's two paths go to :mod:`.legacy_sse`.

Where a session lives is the :class:`~.seams.SessionStrategy`'s answer, asked at its named points
(open, find, touch, replicate, running, take in, hold, release, take over, end): the path is the
same whether the process is alone or one of a fleet.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable

from .... import _jsonrpc as jsonrpc
from ...._connection import META_PROTOCOL_VERSION
from ...._errors import INVALID_REQUEST, SERVER_BUSY, RemoteProtocolError
from ....auth import AuthInfo
from ....kernel import Endpoint
from ....session import error_response
from ._asgi import (
    SSE_HEADERS,
    BodyRefused,
    Receive,
    Scope,
    Send,
    client_of,
    end_body,
    error,
    event,
    is_json,
    plain,
    read_body,
    send_json,
    wait_disconnect,
)
from .admission import admit_batch, answerable_ids, refuse_busy, refuse_in_use
from .auth import AuthGate
from .event_store import EventStore
from .legacy_sse import open_sse, post_message
from .resume import ResumableStream, new_resumable, replay
from .seams import Member, SessionStrategy
from .sessions import HTTPSession, SessionTable, standalone_stream
from .stateless import answer_stateless
from .streams import CLOSE, ResponseStream

__all__ = ["Routes", "answer_here", "respond"]


class Routes:
    """Where an admitted request goes, and how its answer is written (one per app)."""

    def __init__(
        self,
        endpoint: Endpoint,
        table: SessionTable,
        strategy: SessionStrategy,
        event_store: EventStore,
        auth: AuthGate | None,
        *,
        sse_path: str,
        messages_path: str,
        max_body_bytes: int,
        body_timeout: float,
        max_requests_per_session: int,
        stream_queue_limit: int,
        retry_ms: int,
    ) -> None:
        self.endpoint = endpoint
        self.table = table
        self.strategy = strategy
        self.event_store = event_store
        self.auth = auth
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.max_requests_per_session = max_requests_per_session
        self.stream_queue_limit = stream_queue_limit
        self.retry_ms = retry_ms

    def serve(
        self,
        scope: Scope,
        path: str,
        legacy: bool,
        headers: dict[str, str],
        auth: AuthInfo | None,
        owner: str | None,
        receive: Receive,
        send: Send,
    ) -> Awaitable[None]:
        """An admitted request at *path* (inside the app; *legacy*: one of HTTP+SSE's two paths), its
        caller *auth* and the *owner* its sessions belong to when the endpoint is protected: the
        way its method takes, for the app to await (a choice, not a coroutine of its own)."""
        method = scope["method"]
        if legacy:
            return self._legacy(scope, path, method, headers, owner, receive, send)
        if method == "POST":
            return self._post(scope, headers, auth, owner, receive, send)
        if method in ("GET", "DELETE") and "mcp-session-id" in headers:
            return self._get_or_delete(method, headers, receive, send, owner)
        return error(send, 405, None, INVALID_REQUEST, "Method not allowed: POST one JSON-RPC message",
                     [(b"allow", b"POST")])  # fmt: skip

    async def _post(
        self,
        scope: Scope,
        headers: dict[str, str],
        auth: AuthInfo | None,
        owner: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        """A POST: its body read whole, decoded, sent down its era's path (each entered once here)."""
        if not is_json(headers.get("content-type")):
            await error(send, 415, None, INVALID_REQUEST, "Unsupported Media Type: POST application/json")
            return
        try:
            message = jsonrpc.decode(await read_body(receive, self.max_body_bytes, self.body_timeout))
        except BodyRefused as exc:
            await error(send, exc.status, None, INVALID_REQUEST, str(exc))
            return
        except RemoteProtocolError as exc:
            await error(send, 400, exc.request_id, exc.code, str(exc))
            return
        if (
            auth is not None
            and self.auth is not None
            and await self.auth.refuse_scopes(self.endpoint, message, auth, send)
        ):
            return
        session_id = headers.get("mcp-session-id")
        if type(message) is jsonrpc.Request and _served_statelessly(message, session_id is not None):
            await answer_stateless(
                self.endpoint, message, headers, scope, receive, send, self.stream_queue_limit
            )
            return
        if session_id is None:
            if isinstance(message, jsonrpc.Request) and message.method == "initialize":
                await self._initialize(message, client_of(scope), send, owner)
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
        self.table.expire_idle()
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
        try:
            await self.strategy.open(session, request)
        except BaseException:  # not opened for the strategy: not opened at all
            self.table.end(session)
            raise
        await send_json(send, 200, stream.answer, [(b"mcp-session-id", session.id.encode())])

    async def _session_for(
        self, session_id: str, headers: dict[str, str], send: Send, owner: str | None
    ) -> HTTPSession | None:
        """The session a message names; answers 404 (unknown, ended, or another caller's) or 400 itself."""
        self.table.expire_idle()
        session = self.table.sessions.get(session_id)
        if session is None:
            session = await self.strategy.find(session_id)
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
        self.strategy.touch(session)
        return session

    async def _in_session(
        self,
        session: HTTPSession,
        decoded: jsonrpc.Event | list[Member],
        headers: dict[str, str],
        receive: Receive,
        send: Send,
    ) -> None:
        accepts_sse = "text/event-stream" in headers.get("accept", "")
        if type(decoded) is jsonrpc.Request:  # nearly every POST: one request, tested at once
            ids = [decoded.id]
            if decoded.id in session.streams:
                await refuse_in_use(send, decoded.id)
                return
            if len(session.streams) >= self.max_requests_per_session:
                await refuse_busy(session, send, decoded.id, self.max_requests_per_session)
                return
            stream = session.open_stream(ids)
            try:
                await self.strategy.replicate(session, decoded)
            except BaseException:  # nothing ran: the request is not in flight
                session.close_response(stream, ids)
                raise
            # A partial (made in C, no Python call): most answers are JSON and never ask for it.
            resumable = functools.partial(self._new_resumable, session, decoded)
            await answer_here(session, decoded, stream, ids, receive, send, accepts_sse, resumable)
            return
        try:
            message = session.served.connection.accept(decoded)  # batches only where the revision has them
        except RemoteProtocolError as exc:
            await send_json(send, 400, error_response(exc.request_id, exc))
            return
        events: list[Member] = message if isinstance(message, list) else [message]
        if not answerable_ids(events):
            await self._accept(session, message, events, send)
            return
        # A batch: its members within the cap go in, the others are answered each (.admission).
        admitted = admit_batch(session, events, self.max_requests_per_session)
        if not admitted.ids:
            await admitted.answer_now(session, send)
            return
        stream = admitted.open_stream(session)
        await session.served.peer.deliver(admitted.events)
        resumable = functools.partial(self._new_resumable, session, admitted.events)
        await respond(session, stream, admitted.ids, receive, send, accepts_sse, resumable, admitted.headers)

    def _new_resumable(
        self, session: HTTPSession, message: jsonrpc.Event | list[Member]
    ) -> ResumableStream | None:
        """Asked only of an answer that becomes an event stream (a JSON answer has no events):
        from 2025-03-26 its events are kept for a reconnection."""
        if not session.has("resumable_streams"):
            return None
        retry_ms = self.retry_ms if session.has("sse_polling") else None
        stream_id = session.new_stream_id()
        self.strategy.running(stream_id, message)
        return new_resumable(session.resumable, stream_id, self.event_store, retry_ms, self.table.chore)

    async def _accept(
        self, session: HTTPSession, message: jsonrpc.Event | list[Member], events: list[Member], send: Send
    ) -> None:
        """A POST with no request in it (notifications, answers to the server's requests)."""
        # Notifications and answers to our requests: "the server MUST return ... 202 Accepted".
        # A batch member that was not even JSON-RPC, with no id, is answered here: it has no
        # request to ride on.
        bad = [e for e in events if isinstance(e, RemoteProtocolError)]
        good = await self.strategy.take_in(session, [e for e in events if e not in bad])
        if good:
            await session.served.peer.deliver(message if not bad else good)
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
            await self.strategy.end(session)
            self.table.end(session)
            await plain(send, 200, b"")
        elif "last-event-id" in headers:
            stalled = functools.partial(self.strategy.take_over, session)
            last = headers["last-event-id"]
            await replay(session.resumable, self.event_store, last, receive, send, session.id, stalled)
        elif session.attached or not await self.strategy.hold(session):
            await error(send, 409, None, INVALID_REQUEST, "Conflict: this session already has a GET stream")
        else:
            try:
                await standalone_stream(session, receive, send, b": stream open\n\n", self.table.closing)
            finally:
                await self.strategy.release(session)

    async def _legacy(
        self,
        scope: Scope,
        path: str,
        method: str,
        headers: dict[str, str],
        owner: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        self.table.expire_idle()
        if path == self.sse_path:
            if method != "GET":
                await plain(send, 405, b"GET opens the event stream")
                return
            messages = scope.get("root_path", "") + self.messages_path
            await open_sse(self.table, self.strategy, messages, client_of(scope), receive, send, owner)
        elif method != "POST":
            await plain(send, 405, b"POST messages here")
        elif not is_json(headers.get("content-type")):
            await plain(send, 415, b"Content-Type must be application/json")
        else:
            limits = (self.max_body_bytes, self.body_timeout)
            await post_message(self.table, self.strategy, *limits, scope, receive, send, owner)


def _served_statelessly(request: jsonrpc.Request, in_session: bool) -> bool:
    """Whether *request* goes the 2026-07-28 way: its ``_meta`` names a revision ("A request
    carrying modern per-request _meta is served statelessly according to this revision", whatever
    ``Mcp-Session-Id`` it carries), or it is ``server/discover`` outside a session."""
    params = request.params
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and META_PROTOCOL_VERSION in meta:
        return True
    return request.method == "server/discover" and not in_session


async def answer_here(
    session: HTTPSession,
    request: jsonrpc.Request,
    stream: ResponseStream,
    ids: list[jsonrpc.RequestId],
    receive: Receive,
    send: Send,
    accepts_sse: bool,
    resumable: Callable[[], ResumableStream | None],
) -> None:
    """One request POSTed alone to a session, handled in the POST's own task
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
