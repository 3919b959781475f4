"""Streamable HTTP in 2026-07-28: one POST, one request, no session.

The request is admitted (its ``_meta`` names the revision), its standard headers are checked against
the body ("Servers that process the request body MUST reject requests where the values specified in
the headers do not match the corresponding values in the request body": ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``; 400 with -32020; the rules are
:mod:`mcpkit._headers`'s), and it is handed to the server's one dispatch,
:meth:`Endpoint.handle <mcpkit.kernel.Endpoint.handle>`, from the POST's own task.

The answer is JSON unless the handler sends something first, which turns it into an event stream.
Either way, "The server **MUST** treat a client disconnect as cancellation of that request": the
handler is cancelled when the client goes away. That is watched for only once the handler has to
wait for something (its first step is taken by hand to learn that, see
:func:`~mcpkit.session.first_step`), so a request answered at once costs nothing for it. A request
that waits asks the server to call back when the connection is lost (the scope's
:data:`~._asgi.ON_DISCONNECT` extension, which mcpkit's own uvicorn protocol offers): nothing runs
until then. Served by another ASGI server, a task of the request's own waits on ``receive()`` for
the ``http.disconnect`` instead, and is cancelled with the answer.

A ``subscriptions/listen`` stream is written differently: its notifications come from other
requests (a tool that changes the tool list), which must never wait for this client to read. They
go into a bounded queue that a writer task of the stream's own drains; when a client stops reading
and the queue overflows, the listen request is ended as if the client had gone away (and logged).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any, Final

from msgspec import UNSET

from .... import _jsonrpc as jsonrpc
from ...._connection import META_PROTOCOL_VERSION, ServerConnection
from ...._errors import INTERNAL_ERROR, ConnectionClosed, MethodNotFound, RPCError
from ...._headers import check_request_headers, check_version_header
from ....kernel import Endpoint
from ....session import error_response, first_step, result_response
from ._asgi import (
    SSE_HEADERS,
    STATUS_OF_CODE,
    Receive,
    Scope,
    Send,
    end_body,
    error,
    event,
    on_disconnect,
    send_json,
    wait_disconnect,
)
from .seams import Unavailable
from .streams import DEFAULT_STREAM_QUEUE, close_stream, coalescible

__all__ = ["answer_stateless"]

logger = logging.getLogger("mcpkit.http")

_LISTEN: Final = "subscriptions/listen"


async def answer_stateless(
    endpoint: Endpoint,
    request: jsonrpc.Request,
    headers: dict[str, str],
    scope: Scope,
    receive: Receive,
    send: Send,
    queue_limit: int = DEFAULT_STREAM_QUEUE,
) -> None:
    """Answer one 2026-07-28 request, from the POST's own task (a listen stream's notifications
    queue up to *queue_limit* for a client that does not read them; *scope*: the POST's, for the
    server's :data:`~._asgi.ON_DISCONNECT`)."""
    try:
        params = request.params if isinstance(request.params, dict) else {}
        meta = params.get("_meta")
        sent = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        # A header that contradicts the body is -32020 before anything.
        if isinstance(sent, str) and headers.get("mcp-protocol-version") != sent:
            check_version_header(headers, sent)
        # Admitted, the scope's version is the one _meta names, checked against its header above
        # (a request without one is refused here), so only the other headers are left to check.
        conn = ServerConnection()
        admitted = conn.admit(request)
        check_request_headers(request.method, params, headers, endpoint.mirrored_parameters)
    except RPCError as exc:
        await error(send, STATUS_OF_CODE.get(exc.code, 400), request.id, exc.code, exc.message, data=exc.data)
        return
    response = _StatelessResponse(send, receive, "text/event-stream" in headers.get("accept", ""))
    if request.method == _LISTEN:
        response.task = asyncio.current_task()  # a long wait, which an overflow ends
        response.queue, response._waiting_changes = collections.deque(), set()
        response.queue_limit = queue_limit
    try:
        try:
            # The client's going away is watched for once the handler has to wait for something:
            # one that answers in its first step (a coroutine's, taken here) costs no watcher.
            finished, outcome = first_step(endpoint.start(request, admitted, response, conn))
            if finished:
                result = outcome
            else:
                if not (isinstance(outcome, asyncio.Future) and outcome.done()):
                    response.watch(scope)
                result = await outcome
        except Exception as exc:  # 2026-07-28 gives errors HTTP statuses of their own
            if isinstance(exc, Unavailable) and not response.streaming and response.writer is None:
                exc.request_id = request.id
                raise  # 503 and Retry-After, as every request the strategy cannot serve now (its guard)
            code = exc.code if isinstance(exc, RPCError) else INTERNAL_ERROR
            await response.finish(STATUS_OF_CODE.get(code, 200), error_response(request.id, exc))
        else:
            answer = result_response(request.id, result)
            if response.plain:  # the usual: one JSON answer, sent without finish()'s coroutine
                await send_json(send, 200, answer)
            else:
                await response.finish(200, answer)
    except asyncio.CancelledError:
        if not response.gone or response.task is None:
            raise
        response.task.uncancel()  # our own doing: the client went away, nothing is left to answer
    finally:
        response.task = None  # answered: a disconnect from now on cancels nothing
        response.stop_watching()
        if response.writer is not None:
            response.writer.cancel()
    if response.overflowed:
        await close_stream(send, True)


class _StatelessResponse:
    """The :class:`~mcpkit.kernel.Outbound` of one 2026-07-28 POST: what the handler sends before
    its result goes on the response, which becomes an event stream at the first message."""

    __slots__ = (
        "_closed",
        "_lock",
        "_waiting_changes",
        "_wake",
        "_watch",
        "accepts_sse",
        "gone",
        "overflowed",
        "queue",
        "queue_limit",
        "receive",
        "send",
        "streaming",
        "task",
        "writer",
    )

    def __init__(self, send: Send, receive: Receive, accepts_sse: bool) -> None:
        self.send = send
        self.receive = receive
        self.accepts_sse = accepts_sse
        #: The request's task, cancelled when the client goes away; known once it waits (watch()).
        self.task: asyncio.Task[Any] | None = None
        self.streaming = False
        self.gone = False  # the client went away
        self._closed: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._watch: asyncio.Task[None] | None = None
        #: A listen stream's queue (None for any other request), its bound and its writer.
        self.queue: collections.deque[bytes | None] | None = None
        self.queue_limit = DEFAULT_STREAM_QUEUE
        self.writer: asyncio.Task[None] | None = None
        self.overflowed = False
        self._wake: asyncio.Event | None = None
        self._waiting_changes: set[bytes] | None = None  # made for a listen stream only

    @property
    def closed(self) -> asyncio.Event:
        """Set when the client goes away (what ``subscriptions/listen`` waits on)."""
        if self._closed is None:
            self._closed = asyncio.Event()
            if self.gone:
                self._closed.set()
        return self._closed

    def watch(self, scope: Scope) -> None:
        """Start watching for the client's going away: called from the request's task, once its
        handler has to wait. The server calls back if it can (*scope*'s ON_DISCONNECT), else a
        task waits for ``http.disconnect``."""
        if self.task is None:
            self.task = asyncio.current_task()
        register = on_disconnect(scope)
        if register is not None:
            register(self._gone)
        elif self._watch is None:
            self._watch = asyncio.get_running_loop().create_task(self._watch_disconnect())

    def stop_watching(self) -> None:
        if self._watch is not None:
            self._watch.cancel()

    async def _watch_disconnect(self) -> None:
        await wait_disconnect(self.receive)
        self._gone()

    def _gone(self) -> None:
        """The client went away: the request is cancelled (if it is still being answered)."""
        self.gone = True
        if self._closed is not None:
            self._closed.set()
        if self.task is not None:
            self.task.cancel()

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related: jsonrpc.RequestId | None = None
    ) -> None:
        if self.gone:
            raise ConnectionClosed("the client closed the response stream")
        if not self.accepts_sse:
            return  # a JSON-only client: nowhere to put notifications
        note = jsonrpc.encode(
            jsonrpc.Notification(method=method, params=params if params is not None else UNSET)
        )
        if self.queue is not None:
            self._enqueue(note)
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # concurrent senders (ctx.gather) write whole events, one at a time
            if not self.streaming:
                self.streaming = True
                await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            await event(self.send, note)

    def _enqueue(self, item: bytes | None, last: bool = False) -> None:
        # A listen stream: never wait for the client; its writer task does. (*last*: the answer
        # and the end, which the bound does not refuse.)
        assert self.queue is not None and self._waiting_changes is not None
        if item is not None and coalescible(item):
            if item in self._waiting_changes:
                return  # the client has not heard of the last such change yet
            self._waiting_changes.add(item)
        if len(self.queue) >= self.queue_limit and not last:
            self._overflow()
            raise ConnectionClosed("the client is not reading its listen stream")
        self.queue.append(item)
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()
        if self.writer is None:
            self.writer = asyncio.get_running_loop().create_task(self._write_queue())

    async def _write_queue(self) -> None:
        assert self.queue is not None and self._wake is not None
        if self._lock is None:
            self._lock = asyncio.Lock()
        while True:
            while self.queue:
                item = self.queue.popleft()
                if item is not None and self._waiting_changes is not None:
                    self._waiting_changes.discard(item)
                async with self._lock:
                    if item is None:  # the answer was the last event
                        await end_body(self.send)
                        return
                    if not self.streaming:
                        self.streaming = True
                        await self.send(
                            {"type": "http.response.start", "status": 200, "headers": SSE_HEADERS}
                        )
                    await event(self.send, item)
            self._wake.clear()
            await self._wake.wait()

    def _overflow(self) -> None:
        logger.warning(
            "closing a subscriptions/listen stream: its client has not read %d notifications",
            self.queue_limit,
        )
        self.overflowed = self.gone = True
        if self.queue is not None:
            self.queue.clear()
            self._waiting_changes = set()
        if self._closed is not None:
            self._closed.set()
        if self.writer is not None:
            self.writer.cancel()
        if self.task is not None:
            self.task.cancel()

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        related: jsonrpc.RequestId | None = None,
    ) -> Any:
        # "The server MUST NOT send independent JSON-RPC requests on this stream."
        raise MethodNotFound(
            "this transport sends no server-to-client requests in protocol revision 2026-07-28"
        )

    async def close_response_stream(self, related: jsonrpc.RequestId) -> None:
        return None  # nothing to resume in 2026-07-28: the stream is the request

    @property
    def plain(self) -> bool:
        """Whether :meth:`finish` would only send the answer as one JSON response: nothing
        streamed, no listen stream's writer, no watcher to stop."""
        return self.writer is None and not self.streaming and self._watch is None

    async def finish(self, status: int, body: bytes) -> None:
        """Send the answer: a JSON response, or the stream's last event."""
        self.stop_watching()
        if self.writer is not None:  # a listen stream: the answer follows what is queued
            self._enqueue(body, last=True)
            self._enqueue(None, last=True)
            await self.writer
            return
        if not self.streaming:
            await send_json(self.send, status, body)
            return
        assert self._lock is not None
        async with self._lock:
            await event(self.send, body)
            await end_body(self.send)
