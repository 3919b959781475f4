"""Streamable HTTP, client side, as a message stream the session layer already understands.

Each message the client sends becomes its own POST, each on a kept-alive connection of its own
(:mod:`._pool`), so requests overlap; what comes back, a JSON body or the events of an SSE stream, is
read as it arrives (:class:`~._answer.PostAnswer`) and handed to the session exactly as if it had
arrived on stdio. The session above therefore needs no HTTP knowledge:

* the standard headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) are taken from the
  message itself, with the ``=?base64?...?=`` form for values that are not plain ASCII;
* an answer that is an error, or no JSON-RPC at all, answers the request its POST carried (see
  :mod:`._answer`);
* in the handshake era the ``Mcp-Session-Id`` the server assigns is sent back on every later POST, and
  closing ends the session with DELETE;
* in a session, what is sent after ``notifications/initialized`` waits until the server has answered
  the GET that opens the session's own stream (see :meth:`HTTPClientTransport._standalone_stream`);
* a request that times out or is cancelled has its POST abandoned: the response, JSON or event
  stream, is closed with its connection, so the server sees the disconnect. In 2026-07-28 that is the
  whole cancellation ("closing the SSE response stream is itself the cancellation signal") and
  ``notifications/cancelled`` is not sent; a handshake session gets the notification as well.

The hot path, a request with an idle connection at hand and no auth flow, is written in one write
from the sender's own call (:meth:`HTTPClientTransport.send_nowait`), and its answer goes to the
session from the socket's callback (:meth:`HTTPClientTransport.listen`): no task, no future, no
context manager of the transport's per call. Everything else (a connection to open, an auth flow,
the session's stream, a resumed stream) takes a task and the awaiting path (:mod:`._requests`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import msgspec

from ...._errors import ConnectionClosed, TransportError
from ...stdio import DEFAULT_MAX_MESSAGE_BYTES
from ._answer import PostAnswer, StreamState
from ._bounded import ACCEPT_ENCODING, Answer, SSEEvent, sse_events
from ._pool import request_bytes
from ._post_headers import PostHeaders
from ._reopen import SESSION_LOST, STREAM_REOPENED, Backoff, notice, retry_after, worth_retrying
from ._requests import Requests, merged_headers
from ._wire import Connection

if TYPE_CHECKING:
    import httpx

__all__ = ["HTTPClientTransport"]

logger = logging.getLogger("mcpkit.client")

_decode = msgspec.json.decode
_SSE_ONLY = {"Accept": "text/event-stream"}


class HTTPClientTransport:
    """Talks to the MCP endpoint at *url*, authorizing requests with *auth* if given.

    No answer, event or line the server sends is held past *max_message_bytes* (see
    :mod:`._answer`): a request whose answer is larger fails with an error naming the limit, and a
    session stream that sends one is dropped (logged); the transport goes on serving either way.
    *timeout* bounds each wait for the server's bytes (none by default: the session times requests).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        auth: httpx.Auth | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.url = url
        self.max_message_bytes = max_message_bytes
        given = merged_headers(headers, {"Accept-Encoding": ACCEPT_ENCODING, "User-Agent": "mcpkit"})
        # Every POST sets these two itself, over anything given.
        given = {k: v for k, v in given.items() if k.lower() not in ("accept", "content-type")}
        self._requests = Requests(url, given, auth=auth, timeout=timeout, max_body=max_message_bytes)
        self._pool = self._requests.pool
        self._target = self._requests.origin.target
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._receiving = False  # receive() waits with nothing left to read: answers may skip it
        self._take: Callable[[bytes], bool] | None = None
        self._posts: dict[Any, PostAnswer] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.session_id: str | None = None
        self._heads = PostHeaders()
        #: Per tool, the ``x-mcp-header`` parameters to mirror (the client fills it from tools/list).
        self.mirrored = self._heads.mirrored
        self.protocol_version: str | None = None
        #: How many times one request's event stream is resumed with ``Last-Event-ID`` at most.
        self.max_reconnects = 10
        #: How long (s) messages wait at most for the server to answer the GET of the session's own
        #: stream; a server that never answers it would otherwise hold them forever.
        self.listen_wait = 5.0
        #: The pauses before the session's GET stream is opened again once lost.
        self.reconnect = Backoff()
        #: Set while that GET has no answer: what is sent meanwhile waits for it.
        self._listening: asyncio.Future[None] | None = None
        self._closed = False

    # -- the session's side ------------------------------------------------------------------------

    async def receive(self) -> bytes:
        inbox = self._inbox
        if inbox.empty():
            self._receiving = True
            try:
                message = await inbox.get()
            finally:
                self._receiving = False
        else:
            message = inbox.get_nowait()
        if message is None:
            self._inbox.put_nowait(None)
            raise EOFError
        return message

    def listen(self, take: Callable[[bytes], bool] | None) -> None:
        """Hand each message to *take* as it arrives, while :meth:`receive` waits with nothing left
        to return; *take* returns whether it dealt with the message (else it goes to
        :meth:`receive`). ``None`` stops this."""
        self._take = take

    def put(self, message: bytes) -> None:
        """A message from the server, for the session."""
        take = self._take
        if take is not None and self._receiving and take(message):
            return
        # receive() has this to read first: nothing may be taken past it until then.
        self._receiving = False
        self._inbox.put_nowait(message)

    def send_nowait(self, message: bytes) -> bool:
        """Send *message* as :meth:`send` would, if that needs no waiting (a connection at hand, no
        auth flow, nothing to wait for first); ``False``, having sent nothing, otherwise."""
        return self._send_now(message, None)

    def send_request_nowait(
        self, message: bytes, request_id: Any, method: str, params: dict[str, Any] | None
    ) -> bool:
        """:meth:`send_nowait` of a request, whose id, method and params the caller gives: what the
        headers are made of is read from them, not decoded again from *message*. (A tool whose
        arguments some headers mirror is the exception: those values are read as the JSON has them.)"""
        if method == "tools/call":
            name = params.get("name") if params is not None else None
            if not isinstance(name, str) or name in self.mirrored:
                return self._send_now(message, None)
        return self._send_now(
            message, {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )

    def _send_now(self, message: bytes, data: Any) -> bool:
        if self._closed or self._listening is not None or not self._requests.direct:
            return False
        connection = self._pool.idle()
        if connection is None:
            return False
        if data is None:
            data = _decode(message)
        if not isinstance(data, dict) or data.get("method") in (
            "notifications/cancelled",
            "notifications/initialized",
        ):
            self._pool.release(connection)
            return False
        self._write(connection, message, data)
        return True

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionClosed("the HTTP transport is closed")
        if self.send_nowait(message):
            return
        data = json.loads(message)
        if data.get("method") == "notifications/cancelled":
            post = self._posts.get((data.get("params") or {}).get("requestId"))
            if post is not None:
                post.cancel()
                self.forget(post)
            if self.session_id is None:  # the 2026-07-28 way: closing the stream is the cancellation
                return
        # The session is read now, not when the POST task runs: a renewal starting meanwhile (the
        # session's stream met a 404) would otherwise send this request in no session at all.
        task = self._spawn(self._post(message, data, self._listening, self.session_id))
        if data.get("method") == "notifications/initialized" and self.session_id is not None:
            # The session's own stream, for server messages that belong to no request (requests
            # a handler sends unrelated to the call, list changes...). A 405 means there is none.
            self._listening = asyncio.get_running_loop().create_future()
            self._spawn(self._standalone_stream(task, self._listening))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- POST ----------------------------------------------------------------------------------------

    def _answer(self, data: dict[str, Any], abandon: Callable[[], None], session: str | None) -> PostAnswer:
        request_id = data.get("id") if "method" in data else None
        answer = PostAnswer(self, data, request_id, session, abandon)
        if request_id is not None:
            self._posts[request_id] = answer
        return answer

    def _write(self, connection: Connection, message: bytes, data: dict[str, Any]) -> None:
        """The hot path: the POST of *message* written on *connection*, its answer read as it comes."""
        session = self.session_id
        answer = self._answer(data, connection.close, session)
        answer.message, answer.retryable = message, connection.reused
        head = self._requests.static + self._heads.lines(data, self.protocol_version, session)
        connection.send(request_bytes(b"POST", self._requests.origin, self._target, head, message), answer)

    async def _post(
        self,
        message: bytes,
        data: dict[str, Any],
        listening: asyncio.Future[None] | None,
        session: str | None,
    ) -> None:
        """The awaiting path: a connection opened (or waited for), an auth flow, a proxy."""
        if listening is not None:
            await self._until_listening(listening)
        reply: Answer | None = None
        task = asyncio.current_task()

        def abandon() -> None:  # from elsewhere (a cancellation); from within, reading just stops
            if task is not None and task is not asyncio.current_task():
                task.cancel()

        answer = self._answer(data, abandon, session)
        try:
            headers = self._heads.headers(data, self.protocol_version, session)
            reply = await self._requests.open("POST", headers, message)
            answer.head(reply.status_code, reply.headers)
            async for piece in reply.aiter_raw():
                answer.body(piece)
                if answer.done:
                    break
            answer.end()
        except asyncio.CancelledError:
            answer.done = True
            self.forget(answer)
            raise
        except self._requests.errors as exc:
            answer.lost(exc)
        finally:
            if reply is not None:
                await reply.aclose()

    def failed(self, answer: PostAnswer, exc: BaseException) -> None:
        """*answer*'s connection failed: its POST is sent again if it never arrived, else it fails."""
        if answer.retryable and not answer.started and not self._closed:
            # A kept-alive connection the server had just closed: the request never arrived, so it
            # is sent once more on a fresh connection.
            self._spawn(self._post(answer.message, answer.data, None, answer.session))
            return
        if answer.request_id is not None:
            self.fail(answer.request_id, f"HTTP request failed: {type(exc).__name__}: {exc}", None, exc)

    def forget(self, answer: PostAnswer) -> None:
        if answer.request_id is not None and self._posts.get(answer.request_id) is answer:
            del self._posts[answer.request_id]

    def dropped(self, exc: BaseException) -> None:
        logger.warning("dropping an answer from %s: %s (max_message_bytes)", self.url, exc)

    def deliver(self, data: bytes, request_id: Any, stream: StreamState) -> None:
        """One event's data from a POST's (or resumed) stream, for the session."""
        if not data.strip():
            return  # a priming event: an id and empty data
        if request_id is None or stream.answered:
            self.put(data)
            return
        with contextlib.suppress(ValueError):
            message = json.loads(data)
            if isinstance(message, dict) and "method" not in message:
                if "error" in message and message.get("id") is None:
                    # An error that names no request, on the stream of this one, is this one's.
                    message["id"] = request_id
                    data = json.dumps(message).encode()
                stream.answered = message.get("id") == request_id
        self.put(data)

    def resume(self, request_id: Any, stream: StreamState) -> None:
        self._spawn(self._resume(request_id, stream))

    async def _resume(self, request_id: Any, stream: StreamState) -> None:
        """ "If the stream ends before the response, the client reconnects with GET and Last-Event-ID
        after the server's retry" (2025-03-26 to 2025-11-25; the stateless era has no sessions)."""
        reconnects = 0
        with contextlib.suppress(*self._requests.errors):
            while (
                not stream.answered
                and stream.last_event_id is not None
                and self.session_id is not None
                and reconnects < self.max_reconnects
            ):
                reconnects += 1
                await asyncio.sleep((stream.retry_ms if stream.retry_ms is not None else 1000) / 1000)
                headers = {
                    **_SSE_ONLY,
                    "Mcp-Session-Id": self.session_id,
                    "Last-Event-ID": stream.last_event_id,
                }
                if self.protocol_version is not None:
                    headers["MCP-Protocol-Version"] = self.protocol_version
                again = await self._requests.open("GET", headers, keep=False)
                try:
                    if again.status_code != 200 or not again.headers.get("content-type", "").startswith(
                        "text/event-stream"
                    ):
                        break
                    with contextlib.suppress(*self._requests.broken):
                        await self._pump(again, request_id, stream)
                finally:
                    await again.aclose()
        if not stream.answered:
            self.fail(request_id, "the event stream ended before the response", None)

    # -- the session's own stream (GET) --------------------------------------------------------------

    async def _standalone_stream(
        self, initialized: asyncio.Task[None], listening: asyncio.Future[None]
    ) -> None:
        """The session's GET stream, opened once the server has taken ``notifications/initialized``,
        and opened again whenever it is lost, for as long as the transport is open.

        Until the server has answered that GET (with the stream, a 405, anything) *listening* is
        pending, and every message sent meanwhile waits for it. A server may send a message that
        belongs to no request at any time, and one with no GET stream to put it on may drop it: the
        TypeScript SDK's server (without an event store) does, and it sends a tool's
        ``elicitation/create`` there when the tool calls ``server.request`` rather than the
        request's own ``sendRequest``. Were ``tools/call`` let through first, the server could
        run the tool before it has the GET, lose the request, and the call would never end (the
        conformance suite's elicitation-sep1034-client-defaults, under load). A server answers the
        GET once it holds the stream, so whatever is sent after that answer finds the stream there.

        A stream that ends or breaks is opened again after :attr:`reconnect`'s pause, with
        ``Last-Event-ID`` where the server gave event ids, through 409s (a fleet's other node still
        holding it for a moment), 429s, 5xx and failed connections; once it is back the inbox gets
        :data:`~._reopen.STREAM_REOPENED`, for what was said meanwhile may be lost. A 405 means the
        server has no such stream (nothing more is tried), a 404 that the session is gone
        (:data:`~._reopen.SESSION_LOST`: the client starts a new one, which opens its own stream).
        """
        try:
            await initialized
            stream = StreamState()
            session = self.session_id
            tries = 0  # since the stream was last held
            lost = False
            while not self._closed and session is not None and session == self.session_id:
                status, hint = await self._open_stream(session, stream, listening, lost)
                if status == 200:
                    tries, lost = 0, True
                    logger.warning("the session's event stream from %s was lost; opening it again", self.url)
                elif status == 404:
                    logger.warning("the session's event stream from %s: the session is gone (404)", self.url)
                    if session == self.session_id:
                        self.put(notice(SESSION_LOST, sessionId=session))
                    return
                elif status in (-1, 405) or not worth_retrying(status):
                    if status not in (-1, 405):
                        logger.warning(
                            "the session's event stream from %s: HTTP %s; not retried", self.url, status
                        )
                    return
                if hint is None and stream.retry_ms is not None:
                    hint = stream.retry_ms / 1000
                await self.reconnect.wait(tries, hint)
                tries += 1
        finally:
            self._listen_answered(listening)

    async def _open_stream(
        self, session: str, stream: StreamState, listening: asyncio.Future[None], lost: bool
    ) -> tuple[int | None, float | None]:
        """One GET of the session's stream, read until it ends: the status it met (200 once held,
        ``None`` for no answer, -1 for a stream given up) and the ``Retry-After`` it carried."""
        headers = {**_SSE_ONLY, "Mcp-Session-Id": session}
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if stream.last_event_id is not None:
            headers["Last-Event-ID"] = stream.last_event_id
        try:
            reply = await self._requests.open("GET", headers, keep=False)
        except self._requests.errors:
            self._listen_answered(listening)  # the GET failed: there is no stream to wait for
            return None, None
        try:
            self._listen_answered(listening)
            hint = retry_after(reply.headers.get("retry-after"))
            if reply.status_code != 200:
                return reply.status_code, hint
            if not reply.headers.get("content-type", "").startswith("text/event-stream"):
                return -1, None  # "MUST either return Content-Type: text/event-stream ... or 405"
            if lost:
                logger.info(
                    "the session's event stream from %s is open again; changes may have been missed", self.url
                )
                # Before anything the new stream carries: what follows is heard after the notice.
                self.put(notice(STREAM_REOPENED))
            with contextlib.suppress(*self._requests.broken):
                await self._pump(reply, None, stream)  # a clean end or a broken one: lost alike
            return 200, None
        except TransportError as exc:  # MessageTooLarge, or undecodable
            # Resuming would be sent the same event again: the stream is given up, the session and
            # its requests go on.
            logger.warning(
                "dropping the session's event stream from %s: %s (max_message_bytes)", self.url, exc
            )
            return -1, None
        finally:
            await reply.aclose()

    async def _until_listening(self, listening: asyncio.Future[None]) -> None:
        """Wait for the server's answer to the session stream's GET, :attr:`listen_wait` at most."""
        # asyncio.wait, not wait_for: the future is shared, and must not be cancelled by one waiter.
        await asyncio.wait((listening,), timeout=self.listen_wait)
        if not listening.done():
            logger.warning(
                "the server has not answered the GET of its event stream in %s s; sending anyway",
                self.listen_wait,
            )
        self._listen_answered(listening)  # one wait out is enough: the rest go at once

    def _listen_answered(self, listening: asyncio.Future[None]) -> None:
        if not listening.done():
            listening.set_result(None)
        if self._listening is listening:
            self._listening = None

    async def _pump(self, reply: Answer, request_id: Any, stream: StreamState) -> None:
        """Pass each event's data on, noting ids, ``retry`` and whether the answer came."""
        event: SSEEvent
        async for event in sse_events(reply, self.max_message_bytes):
            if data := stream.note(event):
                self.deliver(data, request_id, stream)

    def fail(
        self,
        request_id: Any,
        message: str,
        status: int | None,
        cause: BaseException | None = None,
        retry: float | None = None,
    ) -> None:
        """Answer *request_id* with a JSON-RPC error saying how its HTTP request failed."""
        if request_id is None:
            return
        data: dict[str, Any] = {"httpStatus": status}
        if cause is not None:  # what failed on our side: a connection, or the auth flow (OAuthError)
            data["cause"] = type(cause).__name__
        if retry is not None:  # the server's Retry-After, in seconds
            data["retryAfter"] = retry
        error = {"code": -32600, "message": message, "data": data}
        self.put(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        for post in list(self._posts.values()):
            post.cancel()
        self._posts.clear()
        if self.session_id is not None:  # "clients ... SHOULD send an HTTP DELETE" to end a session
            with contextlib.suppress(*self._requests.errors):
                reply = await self._requests.open("DELETE", {"Mcp-Session-Id": self.session_id})
                await reply.aclose()
        await self._requests.aclose()
        self._inbox.put_nowait(None)
