"""Streamable HTTP, client side, as a message stream the session layer already understands.

Each message the client sends becomes its own POST (in a task of its own, so requests overlap); what
comes back, a JSON body or the events of an SSE stream, is queued for :meth:`receive` exactly as if
it had arrived on stdio. The session above therefore needs no HTTP knowledge:

* the standard headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) are taken from the
  message itself, with the ``=?base64?...?=`` form for values that are not plain ASCII;
* every POST that carries a request answers that request: an error body counts whatever its id (a
  legacy server refusing the ``server/discover`` probe may give it a null id or one of its own), and
  a body that is not JSON-RPC (a legacy server's 404 page, an empty 400) becomes a JSON-RPC error
  with ``data["httpStatus"]``, so the era probe sees "any other error" and falls back to ``initialize``
  at once instead of waiting for an answer that will never come;
* in the handshake era the ``Mcp-Session-Id`` the server assigns is sent back on every later POST, and
  closing ends the session with DELETE;
* in a session, what is sent after ``notifications/initialized`` waits until the server has answered
  the GET that opens the session's own stream (see :meth:`HTTPClientTransport._standalone_stream`);
* a request that times out or is cancelled has its POST abandoned: the response, JSON or event
  stream, is closed with its connection, so the server sees the disconnect. In 2026-07-28 that is the
  whole cancellation ("closing the SSE response stream is itself the cancellation signal") and
  ``notifications/cancelled`` is not sent; a handshake session gets the notification as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import httpx

from ...._errors import ConnectionClosed, TransportError
from ...._headers import encode_header_value, header_value_of, value_at
from ...._methods import mcp_name_field
from ...stdio import DEFAULT_MAX_MESSAGE_BYTES
from ._asyncio_http import POOL_IS_HTTPX_ONLY_STATE, AsyncioTransport
from ._bounded import ACCEPT_ENCODING, SSEEvent, read_body, sse_events
from ._reopen import SESSION_LOST, STREAM_REOPENED, Backoff, notice, retry_after, worth_retrying

__all__ = ["HTTPClientTransport"]

logger = logging.getLogger("mcpkit.client")


class _StreamState:
    """What a client knows of one response stream: where it got to, and whether it is answered."""

    __slots__ = ("answered", "last_event_id", "retry_ms")

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None
        self.answered = False


class HTTPClientTransport:
    """Talks to the MCP endpoint at *url*, authorizing requests with *auth* if given.

    No answer, event or line the server sends is held past *max_message_bytes* (see
    :mod:`._bounded`): a request whose answer is larger fails with an error naming the limit, and a
    session stream that sends one is dropped (logged); the transport goes on serving either way.
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
        # *auth* (an OAuth flow, say) is httpx's business: every request goes through it. Plain
        # HTTP without it (a local server) goes over asyncio's own streams (see :mod:`._asyncio_http`).
        plain = auth is None and url.startswith("http://") and POOL_IS_HTTPX_ONLY_STATE
        self._http = httpx.AsyncClient(
            headers={"Accept-Encoding": ACCEPT_ENCODING, **(headers or {})},
            timeout=httpx.Timeout(timeout, connect=10.0),
            auth=auth,
            transport=AsyncioTransport() if plain else None,
        )
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._posts: dict[Any, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.session_id: str | None = None
        #: Per tool, the ``x-mcp-header`` parameters to mirror (the client fills it from tools/list).
        self.mirrored: dict[str, dict[str, tuple[str, ...]]] = {}
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

    async def receive(self) -> bytes:
        message = await self._inbox.get()
        if message is None:
            raise EOFError
        return message

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionClosed("the HTTP transport is closed")
        data = json.loads(message)
        if data.get("method") == "notifications/cancelled":
            post = self._posts.get((data.get("params") or {}).get("requestId"))
            if post is not None:
                post.cancel()
            if self.session_id is None:  # the 2026-07-28 way: closing the stream is the cancellation
                return
        task = asyncio.ensure_future(self._post(message, data, self._listening))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if data.get("method") == "notifications/initialized" and self.session_id is not None:
            # The session's own stream, for server messages that belong to no request (requests
            # a handler sends unrelated to the call, list changes...). A 405 means there is none.
            self._listening = asyncio.get_running_loop().create_future()
            listen = asyncio.ensure_future(self._standalone_stream(task, self._listening))
            self._tasks.add(listen)
            listen.add_done_callback(self._tasks.discard)
        if "id" in data and "method" in data:
            request_id = data["id"]
            self._posts[request_id] = task

            def forget(_: asyncio.Task[None]) -> None:
                self._posts.pop(request_id, None)

            task.add_done_callback(forget)

    def _headers(self, data: dict[str, Any]) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        method = data.get("method")
        raw_params = data.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        version = meta.get("io.modelcontextprotocol/protocolVersion") or self.protocol_version
        if method == "initialize":
            version = params.get("protocolVersion")
        if isinstance(version, str):
            headers["MCP-Protocol-Version"] = version
        if isinstance(method, str):
            headers["Mcp-Method"] = method
            field = mcp_name_field(method)
            if field is not None and isinstance(params.get(field), str):
                headers["Mcp-Name"] = encode_header_value(params[field])
            if method == "tools/call":
                for header, path in self.mirrored.get(str(params.get("name")), {}).items():
                    value = header_value_of(value_at(params.get("arguments"), path))
                    if value is not None:
                        headers[f"Mcp-Param-{header}"] = value
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    async def _post(
        self, message: bytes, data: dict[str, Any], listening: asyncio.Future[None] | None
    ) -> None:
        request_id = data.get("id") if "method" in data else None
        if listening is not None:
            await self._until_listening(listening)
        for attempt in (1, 2):
            answered = False
            try:
                headers = self._headers(data)
                async with self._http.stream("POST", self.url, content=message, headers=headers) as reply:
                    answered = True
                    await self._take(reply, data, request_id, "Mcp-Session-Id" in headers)
                return
            except asyncio.CancelledError:
                raise
            except TransportError as exc:  # too large (MessageTooLarge), or undecodable
                self._fail(request_id, f"{exc} (max_message_bytes; from {self.url})", None, exc)
                return
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                # A kept-alive connection the server had just closed fails before any answer: the
                # request never arrived, so it is sent once more on a fresh connection.
                if answered or attempt == 2:
                    self._fail(request_id, f"HTTP request failed: {type(exc).__name__}: {exc}", None, exc)
                    return
            except httpx.HTTPError as exc:
                self._fail(request_id, f"HTTP request failed: {type(exc).__name__}: {exc}", None, exc)
                return

    async def _take(
        self, reply: httpx.Response, data: dict[str, Any], request_id: Any, in_session: bool
    ) -> None:
        """Route *reply*; *in_session*: the request went out in a session (whose 404 says it is
        gone, even if a new session has started since)."""
        if data.get("method") == "initialize":
            self.session_id = reply.headers.get("mcp-session-id")
        kind = reply.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            await self._read_events(reply, request_id)
            return
        body = await read_body(reply, self.max_message_bytes)
        if request_id is None:
            return  # a notification or an answer: nothing comes back for it but 202
        if reply.status_code == 404 and in_session:
            self._fail(request_id, "the server has ended this session (404)", 404)
            return
        answer = _answer_to(request_id, body) if kind.startswith("application/json") else None
        if answer is None:
            # An empty body, HTML, plain text: "not a recognized modern JSON-RPC error", so the era
            # probe falls back at once, and a 4xx at initialize may mean the HTTP+SSE transport.
            wait = retry_after(reply.headers.get("retry-after"))
            self._fail(request_id, f"HTTP {reply.status_code} from {self.url}", reply.status_code, retry=wait)
            return
        self._inbox.put_nowait(answer)
        if data.get("method") == "initialize" and reply.status_code == 200:
            self.protocol_version = json.loads(answer).get("result", {}).get("protocolVersion")

    async def _read_events(self, reply: httpx.Response, request_id: Any = None) -> None:
        stream = _StreamState()
        await self._pump_until_broken(reply, request_id, stream)
        # "If the stream ends before the response, the client reconnects with GET and Last-Event-ID
        # after the server's retry" (2025-03-26 to 2025-11-25; the stateless era has no sessions).
        reconnects = 0
        while (
            request_id is not None
            and not stream.answered
            and stream.last_event_id is not None
            and self.session_id is not None
            and reconnects < self.max_reconnects
        ):
            reconnects += 1
            await asyncio.sleep((stream.retry_ms if stream.retry_ms is not None else 1000) / 1000)
            headers = {
                "Accept": "text/event-stream",
                "Mcp-Session-Id": self.session_id,
                "Last-Event-ID": stream.last_event_id,
            }
            if self.protocol_version is not None:
                headers["MCP-Protocol-Version"] = self.protocol_version
            async with self._http.stream("GET", self.url, headers=headers) as again:
                if again.status_code != 200 or not again.headers.get("content-type", "").startswith(
                    "text/event-stream"
                ):
                    break
                await self._pump_until_broken(again, request_id, stream)
        if request_id is not None and not stream.answered:
            self._fail(request_id, "the event stream ended before the response", None)

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
            stream = _StreamState()
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
                        self._inbox.put_nowait(notice(SESSION_LOST, sessionId=session))
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
        self, session: str, stream: _StreamState, listening: asyncio.Future[None], lost: bool
    ) -> tuple[int | None, float | None]:
        """One GET of the session's stream, read until it ends: the status it met (200 once held,
        ``None`` for no answer, -1 for a stream given up) and the ``Retry-After`` it carried."""
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session}
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if stream.last_event_id is not None:
            headers["Last-Event-ID"] = stream.last_event_id
        try:
            async with self._http.stream(
                "GET", self.url, headers=headers, timeout=httpx.Timeout(None, connect=10.0)
            ) as reply:
                self._listen_answered(listening)
                hint = retry_after(reply.headers.get("retry-after"))
                if reply.status_code != 200:
                    return reply.status_code, hint
                if not reply.headers.get("content-type", "").startswith("text/event-stream"):
                    return -1, None  # "MUST either return Content-Type: text/event-stream ... or 405"
                if lost:
                    logger.info(
                        "the session's event stream from %s is open again; changes may have been missed",
                        self.url,
                    )
                    # Before anything the new stream carries: what follows is heard after the notice.
                    self._inbox.put_nowait(notice(STREAM_REOPENED))
                with contextlib.suppress(httpx.RemoteProtocolError, httpx.ReadError):
                    await self._pump(reply, None, stream)  # a clean end or a broken one: lost alike
                return 200, None
        except TransportError as exc:  # MessageTooLarge, or undecodable
            # Resuming would be sent the same event again: the stream is given up, the session and
            # its requests go on.
            logger.warning(
                "dropping the session's event stream from %s: %s (max_message_bytes)", self.url, exc
            )
            return -1, None
        except httpx.HTTPError:
            self._listen_answered(listening)  # the GET failed: there is no stream to wait for
            return None, None

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

    async def _pump_until_broken(self, reply: httpx.Response, request_id: Any, stream: _StreamState) -> None:
        """:meth:`_pump`, where a connection lost mid-stream (the server process died, a proxy
        dropped it) ends the stream like a clean end does: what follows is resumed, if it can be."""
        try:
            await self._pump(reply, request_id, stream)
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            if request_id is None or stream.last_event_id is None or self.session_id is None:
                raise
            logger.info("the event stream of request %r broke (%s); resuming", request_id, exc)

    async def _pump(self, reply: httpx.Response, request_id: Any, stream: _StreamState) -> None:
        """Pass each event's data to the inbox, noting ids, ``retry`` and whether the answer came."""
        event: SSEEvent
        async for event in sse_events(reply, self.max_message_bytes):
            if event.id is not None:
                stream.last_event_id = event.id
            if event.retry is not None:
                stream.retry_ms = event.retry
            if event.data:
                self._deliver(event.data, request_id, stream)

    def _deliver(self, data: bytes, request_id: Any, stream: _StreamState) -> None:
        if not data.strip():
            return  # a priming event: an id and empty data
        if request_id is None or stream.answered:
            self._inbox.put_nowait(data)
            return
        with contextlib.suppress(ValueError):
            message = json.loads(data)
            if isinstance(message, dict) and "method" not in message:
                if "error" in message and message.get("id") is None:
                    # An error that names no request, on the stream of this one, is this one's.
                    message["id"] = request_id
                    data = json.dumps(message).encode()
                stream.answered = message.get("id") == request_id
        self._inbox.put_nowait(data)

    def _fail(
        self,
        request_id: Any,
        message: str,
        status: int | None,
        cause: BaseException | None = None,
        retry: float | None = None,
    ) -> None:
        if request_id is None:
            return
        data: dict[str, Any] = {"httpStatus": status}
        if cause is not None:  # what failed on our side: a connection, or the auth flow (OAuthError)
            data["cause"] = type(cause).__name__
        if retry is not None:  # the server's Retry-After, in seconds
            data["retryAfter"] = retry
        error = {"code": -32600, "message": message, "data": data}
        self._inbox.put_nowait(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        if self.session_id is not None:  # "clients ... SHOULD send an HTTP DELETE" to end a session
            with contextlib.suppress(httpx.HTTPError):
                await self._http.delete(self.url, headers={"Mcp-Session-Id": self.session_id})
        await self._http.aclose()
        self._inbox.put_nowait(None)


def _answer_to(request_id: Any, body: bytes) -> bytes | None:
    """The JSON body of a POST that carried request *request_id*, as that request's answer; ``None``
    if it is not JSON-RPC.

    An error in answer to a POST belongs to the request the POST carried, whatever id the server put
    on it: servers that cannot read the request answer with a null id (the TypeScript SDK's "Server
    not initialized"), or with an id of their own (the official Python SDK 1.x's ``"server-error"``).
    Taken as they are they would answer nothing, and the request would wait out its timeout.
    """
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, list):
        return body  # a batch's answers carry their own ids
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if "error" in message and "method" not in message and message.get("id") != request_id:
        return json.dumps({**message, "id": request_id}).encode()
    return body
