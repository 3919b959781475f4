"""The async JSON-RPC endpoint both roles stand on.

A :class:`Peer` owns one transport. Its read loop decodes each message once and routes it:

* a response settles the future of the request it answers;
* a request runs its handler in a task of its own (so a slow tool never holds up the others), and
  the handler's return value or ``RPCError`` goes back as the answer; a handler that is a future
  already (a ``def`` tool's worker-thread job) needs no task, and is answered from its done-callback;
* ``notifications/cancelled`` cancels that task (or future), and then no answer is sent, as the
  spec requires;
* any other notification goes to the notification callback, in arrival order.

Transports with a read loop (stdio, memory, the client's HTTP) are driven by :meth:`Peer.run`. A
transport that receives messages some other way (the HTTP server: one POST body at a time) hands
them in with :meth:`Peer.decode` and :meth:`Peer.deliver`, so every transport shares this one path:
answer matching, cancellation, batches and the encoding of errors exist once.

Every message the peer sends says what it belongs to: the incoming request it answers, or that it
was sent while handling (``related``). A transport with several streams back
(:class:`~mcpkit._transport.RoutedTransport`) routes on that; one with a single stream ignores it.

Bad input is answered and forgotten: a line that is not JSON gets -32700, a message that is not
JSON-RPC gets -32600, and the loop keeps serving.

When the transport ends, every request still waiting for an answer fails with ``ConnectionClosed``
instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Final, TypeVar

from msgspec import UNSET

from . import _jsonrpc as jsonrpc
from ._errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    SERVER_BUSY,
    ConnectionClosed,
    MethodNotFound,
    RemoteProtocolError,
    RequestTimeout,
    RPCError,
)
from ._transport import OVERSIZE, RoutedTransport, Transport

__all__ = ["Peer", "RequestHandler", "error_response", "first_step", "go_on", "ready", "result_response"]

T = TypeVar("T")

logger = logging.getLogger("mcpkit")

#: Decodes one framed message.
Decoder = Callable[[bytes], "jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]"]
#: Runs one incoming request; returns its result or raises RPCError.
RequestHandler = Callable[[jsonrpc.Request], Awaitable[Any]]
NotificationHandler = Callable[[jsonrpc.Notification], Awaitable[None]]


#: Told to a routed transport as the last message of a request that ends unanswered (cancelled):
#: the stream waiting for it is owed an end, not an answer.
_NO_ANSWER: Final = b""


def _default_decode(data: bytes) -> jsonrpc.Event:
    decoded = jsonrpc.decode(data)
    if isinstance(decoded, list):
        raise RemoteProtocolError("JSON-RPC batches are not supported here")
    return decoded


def error_response(request_id: jsonrpc.RequestId | None, error: BaseException) -> bytes:
    """The encoded JSON-RPC error answer for *error*: its own code for an ``RPCError`` or a
    protocol error; -32603 for anything else (a handler's bug, logged with its traceback here)."""
    if isinstance(error, RPCError):
        body = error.to_wire()
    elif isinstance(error, RemoteProtocolError):
        body = {"code": error.code, "message": str(error)}
    else:
        if isinstance(error, ConnectionClosed):  # the client went away: no bug of ours, no traceback
            logger.info("request %r ended: %s", request_id, error)
        else:
            logger.error("handler for request %r failed", request_id, exc_info=error)
        body = {"code": INTERNAL_ERROR, "message": f"Internal error: {type(error).__name__}: {error}"}
    return jsonrpc.encode(jsonrpc.ErrorResponse(id=request_id, error=body))


def result_response(request_id: jsonrpc.RequestId, result: Any) -> bytes:
    """The encoded answer carrying *result* (-32603 if it cannot be encoded as JSON)."""
    try:
        return jsonrpc.encode(jsonrpc.Response(id=request_id, result=result))
    except (TypeError, ValueError, RecursionError) as exc:  # a handler returned something not JSON
        logger.exception("the result of request %r cannot be encoded", request_id)
        return error_response(
            request_id, RPCError(INTERNAL_ERROR, f"Internal error: unencodable result: {exc}")
        )


class Peer:
    """One end of a JSON-RPC conversation over a :class:`Transport`.

    Args:
        transport: the message stream.
        on_request: turns an incoming request into a coroutine computing its result. Called in
            arrival order (so lifecycle checks see messages in order); may raise ``RPCError``.
        on_notification: handles an incoming notification (other than cancellation).
        decode: framing-level decoder; the server passes its connection's, which knows batches.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        on_request: Callable[[jsonrpc.Request], Awaitable[Any]] | None = None,
        on_notification: NotificationHandler | None = None,
        decode: Decoder = _default_decode,
        max_in_flight: int | None = None,
    ) -> None:
        self.transport = transport
        #: Requests handled at once; more are answered -32000 at once (answers to our own requests
        #: never count, so a handler waiting on the peer cannot deadlock).
        self.max_in_flight = max_in_flight
        self._on_request = on_request
        self._on_notification = on_notification
        self._decode = decode
        self._next_id = 0
        self._waiting: dict[jsonrpc.RequestId, asyncio.Future[Any]] = {}
        # Requests being handled: each a task, or the future of a handler that is one already.
        self._running: dict[jsonrpc.RequestId, asyncio.Future[Any]] = {}
        # The handler coroutines of request tasks that have not taken their first step yet (each
        # _answer takes its own out as it starts): what to close if such a task is cancelled.
        self._unstarted_work: dict[jsonrpc.RequestId, Awaitable[Any]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed: BaseException | None = None
        # The loop, once known: asyncio.get_running_loop() costs a getpid() system call, and the hot
        # path asked for it on every request.
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closed = asyncio.Event()
        # Checked once: a routed transport is told what each message belongs to.
        self._routed = transport if isinstance(transport, RoutedTransport) else None
        # A transport that can take a message without waiting, when it can (stdio): answers go
        # through it with no coroutine (see StdioServerTransport.send_nowait).
        self._send_nowait: Callable[[bytes], bool] | None = getattr(transport, "send_nowait", None)
        # A transport a worker thread may write an answer to itself (stdio; see thread_answerer).
        self._send_from_thread: Callable[[bytes], bool] | None = (
            None if self._routed is not None else getattr(transport, "send_from_thread", None)
        )

    # -- sending -----------------------------------------------------------------------------------

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        related: jsonrpc.RequestId | None = None,
    ) -> Any:
        """Send a request and wait for its result (*related*: the incoming request it is sent
        while handling, if any).

        Raises:
            RPCError: the peer answered with an error.
            RequestTimeout: no answer within *timeout* seconds (a cancellation is sent).
            ConnectionClosed: the transport ended first.
        """
        request_id = self.next_id()
        future = await self.send_request(request_id, method, params, related)
        return await self.wait(request_id, future, timeout)

    async def send_request(
        self,
        request_id: jsonrpc.RequestId,
        method: str,
        params: dict[str, Any] | None,
        related: jsonrpc.RequestId | None = None,
    ) -> asyncio.Future[Any]:
        """Send a request with an id of the caller's choosing; returns the future of its answer."""
        message = self._request_message(request_id, method, params)
        future: asyncio.Future[Any] = self._event_loop().create_future()
        self._waiting[request_id] = future
        try:
            await self._emit(message, related, False)
        except BaseException:
            self._waiting.pop(request_id, None)
            raise
        return future

    def send_request_nowait(
        self, request_id: jsonrpc.RequestId, method: str, params: dict[str, Any] | None
    ) -> asyncio.Future[Any] | None:
        """:meth:`send_request`, where the transport takes the message with no waiting (stdio, under
        its high-water mark); ``None``, having sent nothing, where that must be awaited instead.

        Raises:
            ConnectionClosed: the transport ended.
        """
        send_nowait = self._send_nowait
        if send_nowait is None or self._routed is not None:
            return None
        if not send_nowait(self._request_message(request_id, method, params)):
            return None
        # Its answer cannot have come yet: nothing is read until this turn of the loop ends.
        future: asyncio.Future[Any] = self._event_loop().create_future()
        self._waiting[request_id] = future
        return future

    def _request_message(
        self, request_id: jsonrpc.RequestId, method: str, params: dict[str, Any] | None
    ) -> bytes:
        """The encoded request both ways of sending one send.

        Raises:
            ConnectionClosed: the transport ended.
        """
        if self._closed is not None:
            raise ConnectionClosed("connection is closed") from self._closed
        return jsonrpc.encode(
            jsonrpc.Request(id=request_id, method=method, params=params if params is not None else UNSET)
        )

    async def wait(
        self, request_id: jsonrpc.RequestId, future: asyncio.Future[Any], timeout: float | None
    ) -> Any:
        """Wait for the answer to a sent request; on timeout or cancellation tell the peer to stop."""
        try:
            if timeout is None:
                return await future
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            await self._cancel_remote(request_id, "request timed out")
            raise RequestTimeout(f"no answer to request {request_id!r} within {timeout:g} s") from None
        except asyncio.CancelledError:
            await self._cancel_remote(request_id, "request cancelled by the caller")
            raise
        finally:
            self._waiting.pop(request_id, None)

    async def cancel(self, request_id: jsonrpc.RequestId, reason: str) -> None:
        """Stop waiting for *request_id* and tell the peer to stop working on it."""
        await self._cancel_remote(request_id, reason)

    async def _cancel_remote(self, request_id: jsonrpc.RequestId, reason: str) -> None:
        self._waiting.pop(request_id, None)
        if self._closed is None:
            with contextlib.suppress(ConnectionClosed):
                await self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related: jsonrpc.RequestId | None = None
    ) -> None:
        """Send a notification (*related*: the incoming request it is sent while handling, if any)."""
        message = jsonrpc.Notification(method=method, params=params if params is not None else UNSET)
        await self._emit(jsonrpc.encode(message), related, False)

    async def close_response_stream(self, related: jsonrpc.RequestId) -> None:
        """End the stream carrying *related*'s messages, where the transport has one per request."""
        if self._routed is not None:
            await self._routed.close_stream(related)

    async def _emit(self, message: bytes, related: jsonrpc.RequestId | None, final: bool) -> None:
        # The one place messages leave: a routed transport learns what each belongs to.
        if self._routed is not None:
            await self._routed.send_related(message, related, final)
        else:
            await self.transport.send(message)

    # -- receiving ---------------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and route messages until the transport ends; then fail what still waits."""
        # A transport that reads many messages at once hands over those it holds without a
        # coroutine each (stdio: the lines of one chunk); receive() when it holds none.
        receive_nowait: Callable[[], bytes | None] | None = getattr(self.transport, "receive_nowait", None)
        # A transport that can hand messages over as they arrive (stdio) does so while this waits:
        # a lone request starts in the turn that read it, not a turn later in this task.
        listen: Callable[[Callable[[bytes], bool] | None], None] | None = getattr(
            self.transport, "listen", None
        )
        if listen is not None:
            listen(self.take)
        try:
            while True:
                data = receive_nowait() if receive_nowait is not None else None
                if data is None:
                    try:
                        data = await self.transport.receive()
                    except EOFError:
                        break
                pending = self._route(data)
                if pending is not None:
                    await pending
        except (ConnectionClosed, OSError) as exc:
            self._closed = exc
        finally:
            if listen is not None:
                listen(None)
            self.close()

    def close(self, reason: BaseException | None = None) -> None:
        """No more messages will come: fail every request still waiting for an answer.

        :meth:`run` calls this when the transport ends; a transport without a read loop calls it
        when its session ends. Requests being handled go on (see :meth:`drain`)."""
        if self._closed is None:
            self._closed = (
                reason if reason is not None else ConnectionClosed("the peer closed the connection")
            )
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionClosed(f"connection closed before an answer: {self._closed}"))
        self._waiting.clear()
        self.closed.set()
        for request_id, task in list(self._running.items()):
            # Requests go on; but at shutdown the loop cancels what is left, maybe before it ran.
            self._unstarted(request_id, task)

    def cancel_incoming(self, request_id: jsonrpc.RequestId) -> bool:
        """Stop handling the incoming request *request_id* (no answer will be sent); what
        ``notifications/cancelled`` does, for transports that learn of it otherwise (a dropped
        HTTP response). Returns whether it was running."""
        task = self._running.get(request_id)
        if task is None:
            return False
        self._unstarted(request_id, task)
        task.cancel()
        return True

    def cancel_all(self) -> None:
        """Stop handling every incoming request (the session is gone)."""
        for request_id, task in list(self._running.items()):
            self._unstarted(request_id, task)
            task.cancel()

    async def drain(self, grace: float) -> None:
        """Let requests still being handled finish for up to *grace* seconds, then cancel them."""
        working = self._tasks.union(self._running.values())
        if working:
            _, pending = await asyncio.wait(working, timeout=grace)
            for request_id, task in list(self._running.items()):
                if task in pending:
                    self._unstarted(request_id, task)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)

    def _route(self, data: bytes) -> Awaitable[None] | None:
        """Route one framed message as :meth:`deliver` would; what is left to await, if anything
        (see :meth:`_dispatch`)."""
        if data is OVERSIZE:
            return self._send_quietly(
                error_response(None, RemoteProtocolError("message too large", INVALID_REQUEST))
            )
        try:
            events = self._decode(data)
        except RemoteProtocolError as exc:
            return self._send_quietly(error_response(exc.request_id, exc))
        if type(events) is jsonrpc.Request:  # nearly every message: _dispatch's first case, inline
            self._start(events)
            return None
        return self._dispatch(events)

    def decode(self, data: bytes) -> jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]:
        """Decode one framed message as :meth:`run` would: an event, or a batch's list of them.

        Raises:
            RemoteProtocolError: not JSON (-32700), not JSON-RPC (-32600), or a batch where none is allowed.
        """
        return self._decode(data)

    async def deliver(self, message: jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]) -> None:
        """Take in one decoded message, as :meth:`run` does for each it reads: answers settle their
        requests, requests start (each in a task of its own), notifications are handled in order;
        a batch (a list, even of one) is answered with one array."""
        pending = self._dispatch(message)
        if pending is not None:
            await pending

    async def answer_here(self, request: jsonrpc.Request) -> bytes:
        """Handle *request* in the caller's task rather than a task of its own (one request
        delivered alone, whose transport sends its answer itself: an HTTP POST), and return its
        answer instead of sending it: ``b""`` when none is owed (it was cancelled).

        Otherwise as :meth:`deliver`: the same refusals and answers, and while the handler runs
        the caller's task is the request's, so ``notifications/cancelled``, :meth:`cancel_incoming`,
        :meth:`cancel_all` and :meth:`drain` reach it (their cancellation ends here)."""
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        request_id = request.id
        try:
            work = self._on_request(request) if self._on_request is not None else self._handle(request)
        except Exception as exc:  # as in _start
            return error_response(request_id, exc)
        # Its first step here: most handlers answer in it, and then nothing could have reached them
        # in between (a cancellation, a repeated id) and nothing need be registered.
        try:
            finished, outcome = first_step(work)
        except asyncio.CancelledError:
            return _NO_ANSWER
        except Exception as exc:
            return error_response(request_id, exc)
        if finished:
            return result_response(request_id, outcome)
        work = outcome
        task = asyncio.current_task()
        assert task is not None
        self._running[request_id] = task
        try:
            result = await work
        except asyncio.CancelledError:
            task.uncancel()  # the request's cancellation, not the caller's: it answers "nothing"
            return _NO_ANSWER
        except Exception as exc:
            return error_response(request_id, exc)
        finally:
            self._running.pop(request_id, None)
        return result_response(request_id, result)

    def _dispatch(
        self, message: jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]
    ) -> Awaitable[None] | None:
        # Requests and answers, nearly every message, are handled at once with no coroutine of
        # their own; notifications and batches come back to be awaited, in order.
        if isinstance(message, jsonrpc.Request):
            self._start(message)
            return None
        if isinstance(message, list):
            return self._route_batch(message)
        if isinstance(message, jsonrpc.Notification):
            return self._notification(message)
        self._settle(message)
        return None

    def take(self, data: bytes) -> bool:
        """Route *data* now, as :meth:`run` would once it read it, where that needs no waiting: an
        answer settles its request, a request starts. ``False``, having done nothing, for anything
        else: a notification (handled in order, maybe awaited), a batch, or what cannot be decoded
        (which run() answers) then goes through :meth:`run`, in order. For a transport that hands
        messages over as they arrive while :meth:`run` waits for more (stdio's ``listen``)."""
        if b'"method"' in data:  # a request or notification (rarely, an answer)
            if b'"id"' not in data:  # a notification: for run(), not decoded twice
                return False
            try:
                request = self._decode(data)
            except RemoteProtocolError:
                return False
            if type(request) is not jsonrpc.Request:
                return False
            self._start(request)
            return True
        event: jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError] | None = jsonrpc.decode_response(
            data
        )
        if event is None:  # not a result (an error answer, or not JSON-RPC at all)
            try:
                event = self._decode(data)
            except RemoteProtocolError:
                return False  # run() answers it as it should
        if isinstance(event, jsonrpc.Response | jsonrpc.ErrorResponse):
            self._settle(event)
            return True
        return False

    def _settle(self, event: jsonrpc.Response | jsonrpc.ErrorResponse) -> None:
        future = self._waiting.pop(event.id, None) if event.id is not None else None
        if future is None or future.done():
            logger.debug("dropping an answer to no pending request: %r", event.id)
            return
        if isinstance(event, jsonrpc.Response):
            future.set_result(event.result)
        else:
            future.set_exception(RPCError.from_wire(event.error))

    async def _notification(self, event: jsonrpc.Notification) -> None:
        if event.method == "notifications/cancelled":
            params = event.params if isinstance(event.params, dict) else {}
            request_id = params.get("requestId")
            # A RequestId is a string or an integer; `true` is neither, and must not cancel request 1.
            if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
                self.cancel_incoming(request_id)
            return
        if self._on_notification is not None:
            try:
                await self._on_notification(event)
            except Exception:
                logger.exception("notification handler for %s failed", event.method)

    def _refusal(self, request: jsonrpc.Request) -> bytes | None:
        """The answer refusing *request* before it starts, if it must be refused."""
        if request.id in self._running:
            # "The request ID MUST NOT match the ID of any other request the sender has issued and
            # not yet received a response for."
            return error_response(
                request.id, RemoteProtocolError(f"request id {request.id!r} is already in use")
            )
        if self.max_in_flight is not None and len(self._running) >= self.max_in_flight:
            busy = RPCError(SERVER_BUSY, f"Server busy: {self.max_in_flight} requests in flight, retry later")
            return error_response(request.id, busy)
        return None

    def _start(self, request: jsonrpc.Request) -> None:
        refusal = self._refusal(request)
        if refusal is not None:
            self._send_answer(refusal, request.id)
            return
        try:
            work = self._on_request(request) if self._on_request is not None else self._handle(request)
        except Exception as exc:  # an RPCError is the answer; anything else a bug, answered -32603
            self._send_answer(error_response(request.id, exc), request.id)
            return
        request_id = request.id
        if isinstance(work, asyncio.Future):
            # A handler that is already a future (a def tool on a worker thread) needs no task:
            # its answer is sent from its done-callback.
            self._running[request_id] = work
            work.add_done_callback(self._answerer(request_id))
            return
        # Not _spawn: a request's task is kept (and waited for by drain) through _running already.
        # No done-callback either (one cost a handle and a turn of the loop per request): _answer
        # takes its entry out itself; a task that never runs _answer is seen to by _unstarted.
        self._unstarted_work[request_id] = work
        self._running[request_id] = (self._loop or self._event_loop()).create_task(
            self._answer(request_id, work)
        )

    def thread_answerer(
        self, request_id: jsonrpc.RequestId
    ) -> Callable[[asyncio.Future[Any], Callable[[], Any]], bool] | None:
        """Where the transport can take an answer from another thread: a function a worker thread
        calls, once the job that handles *request_id* is done, to send its answer itself, now,
        where the loop would send it at once as well (a lone call: no other request running, when
        it came or now). It is given the job's future and a function that makes the result, called
        only then, and returns whether it sent the answer. If it did, the request no longer runs
        here (its job's future is never settled: see ``run_sync``); else it did nothing (what the
        maker raised, it raises) and the future's done-callback answers as usual.

        A lone call's answer then goes out without waking the loop's thread first (a switch
        between threads on the way back to a client that waits for this one call). ``None`` where
        the transport cannot (HTTP, which answers through its own response) or the call is not a
        lone one."""
        send = self._send_from_thread
        running = self._running
        if send is None or running:  # another request runs: this call is not a lone one
            return None

        def answer(job: asyncio.Future[Any], result_of: Callable[[], Any]) -> bool:
            # With more running, answers that finish together go out in one write from the loop:
            # one system call, where each thread's own write would cost one. A cancelled job is
            # the loop's to see to (its done-callback ends the request, unanswered).
            # The entry must be this job's, as in _answerer: under the same id now may be a later
            # request (the id reused after a cancellation). Looked at before it is taken out, so
            # that another request's entry is not taken out even for a moment (its done-callback,
            # finding none, would take it for answered here).
            if len(running) != 1 or job.cancelled() or running.get(request_id) is not job:
                return False
            # Taken out before the answer goes: a client may reuse an id once it is answered. If
            # the entry changed since the look above (the loop ran meanwhile), it is put back.
            work = running.pop(request_id, None)  # dict operations are atomic under the GIL
            sent = False
            try:
                if work is job:
                    sent = send(result_response(request_id, result_of()))
            finally:
                if not sent and work is not None:
                    running.setdefault(request_id, work)
            return sent

        return answer

    def _answerer(self, request_id: jsonrpc.RequestId) -> Callable[[asyncio.Future[Any]], None]:
        """The done-callback answering *request_id* from a future, as :meth:`_answer` and
        :func:`_outcome` do from a coroutine."""

        def answer(done: asyncio.Future[Any]) -> None:
            if self._running.get(request_id) is not done:
                return  # no longer this request's: answered from its worker thread (thread_answerer)
            del self._running[request_id]
            message: bytes | None = None
            if not done.cancelled():
                exc = done.exception()
                if exc is None:
                    message = result_response(request_id, done.result())
                elif isinstance(exc, Exception):
                    message = error_response(request_id, exc)
                elif isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise exc  # as out of a task: the loop stops
                elif not isinstance(exc, asyncio.CancelledError):
                    # What a task would keep unanswered, with its exception logged.
                    logger.error("handler for request %r failed", request_id, exc_info=exc)
            if message is not None:
                self._send_answer(message, request_id)
            elif self._routed is not None:
                self._send_answer(_NO_ANSWER, request_id)

        return answer

    def _send_answer(self, message: bytes, request_id: jsonrpc.RequestId | None) -> None:
        """Send the last message of a request without waiting: at once where the transport can
        take it now, else from a task of its own."""
        if self._routed is None and self._send_nowait is not None and self._send_nowait(message):
            return
        self._spawn(self._send_quietly(message, request_id, True))

    def _handle(self, request: jsonrpc.Request) -> Awaitable[Any]:
        if self._on_request is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return self._on_request(request)

    async def _answer(self, request_id: jsonrpc.RequestId, work: Awaitable[Any]) -> None:
        # What _outcome does, written out: one coroutine fewer per request. The request counts as
        # running (for max_in_flight and its id) until its answer is sent, as before.
        self._unstarted_work.pop(request_id, None)  # started: from here on it sees to itself
        answer: bytes | None
        try:
            try:
                result = await work
            except asyncio.CancelledError:
                answer = None
            except Exception as exc:
                answer = error_response(request_id, exc)
            else:
                answer = result_response(request_id, result)
            if answer is not None:
                if self._routed is None and self._send_nowait is not None and self._send_nowait(answer):
                    return  # taken at once: no coroutine of the transport's to run
                await self._send_quietly(answer, request_id, True)
            elif self._routed is not None:
                await self._send_quietly(_NO_ANSWER, request_id, True)
        finally:
            self._running.pop(request_id, None)

    def _unstarted(self, request_id: jsonrpc.RequestId, task: asyncio.Future[Any]) -> None:
        """See to *task* if it ends without running _answer: cancelled before its first step.

        Called where request tasks are cancelled (and by :meth:`close`, for the loop's own
        cancellation at shutdown), so the hot path needs no done-callback. Such a task's _answer
        never took its entry out of _running, never awaited its handler's coroutine (close it, or
        Python warns that it was never awaited) and never told a routed transport that nothing is
        owed (an HTTP POST would hang)."""
        work = self._unstarted_work.get(request_id)
        if work is None:
            return  # started (it takes its entry out itself), or a future answered from its callback

        def forget(done: asyncio.Future[Any]) -> None:
            if self._unstarted_work.get(request_id) is not work:
                return  # _answer ran after all
            del self._unstarted_work[request_id]
            if self._running.get(request_id) is done:
                del self._running[request_id]
            _close(work)
            if self._routed is not None:
                self._spawn(self._send_quietly(_NO_ANSWER, request_id, True))

        task.add_done_callback(forget)

    async def _route_batch(self, events: list[jsonrpc.Event | RemoteProtocolError]) -> None:
        # Members run concurrently, each a task of its own that notifications/cancelled can stop;
        # the answers go back together, in one array ("The Server SHOULD respond with an Array").
        answers: list[Awaitable[bytes | None]] = []
        first: jsonrpc.RequestId | None = None
        for event in events:
            if isinstance(event, jsonrpc.Request):
                first = event.id if first is None else first
                answers.append(self._batch_member(event))
            elif isinstance(event, jsonrpc.Notification):
                await self._notification(event)
            elif isinstance(event, RemoteProtocolError):
                first = event.request_id if first is None else first
                answers.append(ready(error_response(event.request_id, event)))
            else:
                self._settle(event)
        if answers:
            self._spawn(self._send_batch(answers, first))

    def _batch_member(self, request: jsonrpc.Request) -> Awaitable[bytes | None]:
        refusal = self._refusal(request)
        if refusal is not None:
            return ready(refusal)
        try:
            work = self._handle(request)
        except Exception as exc:  # as in _start: a bug in on_request must not end the read loop
            return ready(error_response(request.id, exc))
        request_id = request.id
        task = self._spawn(_outcome(request_id, work))
        self._running[request_id] = task

        def forget(_: asyncio.Task[Any]) -> None:
            self._running.pop(request_id, None)
            _close(work)

        task.add_done_callback(forget)
        return _settled(task)

    async def _send_batch(
        self, answers: list[Awaitable[bytes | None]], first: jsonrpc.RequestId | None
    ) -> None:
        parts = [part for part in await asyncio.gather(*answers) if part is not None]
        if parts:
            await self._send_quietly(b"[" + b",".join(parts) + b"]", first, True)
        elif first is not None and self._routed is not None:
            await self._send_quietly(_NO_ANSWER, first, True)

    async def _send_quietly(
        self, message: bytes, related: jsonrpc.RequestId | None = None, final: bool = False
    ) -> None:
        try:
            await self._emit(message, related, final)
        except (ConnectionClosed, OSError):
            logger.debug("could not send: the transport is closed")

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def event_loop(self) -> asyncio.AbstractEventLoop:
        """The loop this peer runs on (asked of asyncio once: each asking costs a getpid(2))."""
        return self._loop or self._event_loop()

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        # create_task, not ensure_future: one task per request, and the checks add up.
        task = self._event_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


async def _outcome(request_id: jsonrpc.RequestId, work: Awaitable[Any]) -> bytes | None:
    """The encoded answer to one request: its result, or its error; ``None`` if it was cancelled
    (by the peer, when no answer is owed, or by our own shutdown). The one place a handler's
    failure becomes a JSON-RPC error, for every transport."""
    try:
        result = await work
    except asyncio.CancelledError:
        return None
    except Exception as exc:
        return error_response(request_id, exc)
    return result_response(request_id, result)


def _close(work: Awaitable[Any]) -> None:
    # A request cancelled before its task first ran never awaited its handler's coroutine: close it,
    # or Python warns "coroutine was never awaited" (an error under -W error). A no-op otherwise.
    if isinstance(work, Coroutine):
        work.close()


async def _settled(task: asyncio.Task[bytes | None]) -> bytes | None:
    try:
        return await task
    except asyncio.CancelledError:
        return None


def first_step(work: Awaitable[T]) -> tuple[bool, Any]:
    """Take the first step of *work* here, if it is a coroutine: ``(True, its result)`` when it
    finished in that step (most handlers do), else ``(False, what to await for the rest)``: a
    :func:`go_on` of it, or *work* itself when it is no coroutine. What the step raises is raised.

    A caller learns this way, at no cost, whether a handler answered at once, and does what only
    a handler that must wait needs (a watcher, a registration) only then."""
    if type(work) is types.CoroutineType:
        try:
            waiting = work.send(None)
        except StopIteration as done:
            return True, done.value
        return False, go_on(work, waiting)
    return False, work


@types.coroutine
def go_on(coro: Coroutine[Any, Any, T], waiting: Any) -> Generator[Any, Any, T]:
    """Await the rest of *coro*, whose first step was taken by hand (``coro.send(None)``) and
    yielded *waiting*: from there exactly what ``await coro`` would have done, what is sent or
    thrown in (a cancellation) passed on to it (see :func:`first_step`).
    """
    while True:
        try:
            sent = yield waiting
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                waiting = coro.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
        else:
            try:
                waiting = coro.send(sent)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]


async def ready(value: T) -> T:
    """An awaitable that is already done: for answers known without waiting."""
    return value
