"""The async JSON-RPC endpoint both roles stand on.

A :class:`Peer` owns one transport. Its read loop decodes each message once and routes it:

* a response settles the future of the request it answers;
* a request runs its handler in a task of its own (so a slow tool never holds up the others), and
  the handler's return value or ``RPCError`` goes back as the answer;
* ``notifications/cancelled`` cancels that task, and then no answer is sent, as the spec requires;
* any other notification goes to the notification callback, in arrival order.

Bad input is answered and forgotten: a line that is not JSON gets -32700, a message that is not
JSON-RPC gets -32600, and the loop keeps serving.

When the transport ends, every request still waiting for an answer fails with ``ConnectionClosed``
instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from msgspec import UNSET

from . import _jsonrpc as jsonrpc
from ._errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    ConnectionClosed,
    MethodNotFound,
    RemoteProtocolError,
    RequestTimeout,
    RPCError,
)
from .transports.base import OVERSIZE, Transport

__all__ = ["Peer", "RequestHandler", "ready"]

T = TypeVar("T")

logger = logging.getLogger("mcpkit")

#: Decodes one framed message into events (a batch gives several).
Decoder = Callable[[bytes], list["jsonrpc.Event | RemoteProtocolError"]]
#: Runs one incoming request; returns its result or raises RPCError.
RequestHandler = Callable[[jsonrpc.Request], Awaitable[Any]]
NotificationHandler = Callable[[jsonrpc.Notification], Awaitable[None]]


def _default_decode(data: bytes) -> list[jsonrpc.Event | RemoteProtocolError]:
    decoded = jsonrpc.decode(data)
    if isinstance(decoded, list):
        raise RemoteProtocolError("JSON-RPC batches are not supported here")
    return [decoded]


def _error_response(request_id: jsonrpc.RequestId | None, error: RPCError | RemoteProtocolError) -> bytes:
    body = error.to_wire() if isinstance(error, RPCError) else {"code": error.code, "message": str(error)}
    return jsonrpc.encode(jsonrpc.ErrorResponse(id=request_id, error=body))


def _result_response(request_id: jsonrpc.RequestId, result: Any) -> bytes:
    try:
        return jsonrpc.encode(jsonrpc.Response(id=request_id, result=result))
    except (TypeError, ValueError, RecursionError) as exc:  # a handler returned something not JSON
        logger.exception("the result of request %r cannot be encoded", request_id)
        return _error_response(
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
    ) -> None:
        self.transport = transport
        self._on_request = on_request
        self._on_notification = on_notification
        self._decode = decode
        self._next_id = 0
        self._waiting: dict[jsonrpc.RequestId, asyncio.Future[Any]] = {}
        self._running: dict[jsonrpc.RequestId, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed: BaseException | None = None
        self.closed = asyncio.Event()

    # -- sending -----------------------------------------------------------------------------------

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """Send a request and wait for its result.

        Raises:
            RPCError: the peer answered with an error.
            RequestTimeout: no answer within *timeout* seconds (a cancellation is sent).
            ConnectionClosed: the transport ended first.
        """
        request_id = self.next_id()
        future = await self.send_request(request_id, method, params)
        return await self.wait(request_id, future, timeout)

    async def send_request(
        self, request_id: jsonrpc.RequestId, method: str, params: dict[str, Any] | None
    ) -> asyncio.Future[Any]:
        """Send a request with an id of the caller's choosing; returns the future of its answer."""
        if self._closed is not None:
            raise ConnectionClosed("connection is closed") from self._closed
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        message = jsonrpc.Request(
            id=request_id, method=method, params=params if params is not None else UNSET
        )
        try:
            await self.transport.send(jsonrpc.encode(message))
        except BaseException:
            self._waiting.pop(request_id, None)
            raise
        return future

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

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        message = jsonrpc.Notification(method=method, params=params if params is not None else UNSET)
        await self.transport.send(jsonrpc.encode(message))

    # -- receiving ---------------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and route messages until the transport ends; then fail what still waits."""
        try:
            while True:
                try:
                    data = await self.transport.receive()
                except EOFError:
                    break
                await self._route(data)
        except (ConnectionClosed, OSError) as exc:
            self._closed = exc
        finally:
            if self._closed is None:
                self._closed = ConnectionClosed("the peer closed the connection")
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(
                        ConnectionClosed(f"connection closed before an answer: {self._closed}")
                    )
            self._waiting.clear()
            self.closed.set()

    async def drain(self, grace: float) -> None:
        """Let requests still being handled finish for up to *grace* seconds, then cancel them."""
        if self._tasks:
            _, pending = await asyncio.wait(list(self._tasks), timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)

    async def _route(self, data: bytes) -> None:
        if data is OVERSIZE:
            await self._send_quietly(
                _error_response(None, RemoteProtocolError("message too large", INVALID_REQUEST))
            )
            return
        try:
            events = self._decode(data)
        except RemoteProtocolError as exc:
            await self._send_quietly(_error_response(exc.request_id, exc))
            return
        if len(events) > 1 or not events:
            await self._route_batch(events)
            return
        event = events[0]
        if isinstance(event, jsonrpc.Request):
            self._start(event)
        elif isinstance(event, jsonrpc.Notification):
            await self._notification(event)
        elif isinstance(event, RemoteProtocolError):
            await self._send_quietly(_error_response(event.request_id, event))
        else:
            self._settle(event)

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
            task = self._running.get(params.get("requestId"))  # type: ignore[arg-type]
            if task is not None:
                task.cancel()
            return
        if self._on_notification is not None:
            try:
                await self._on_notification(event)
            except Exception:
                logger.exception("notification handler for %s failed", event.method)

    def _start(self, request: jsonrpc.Request) -> None:
        if request.id in self._running:
            # "The request ID MUST NOT match the ID of any other request the sender has issued and
            # not yet received a response for."
            self._spawn(
                self._send_quietly(
                    _error_response(
                        request.id, RemoteProtocolError(f"request id {request.id!r} is already in use")
                    )
                )
            )
            return
        try:
            work = self._handle(request)
        except RPCError as exc:
            self._spawn(self._send_quietly(_error_response(request.id, exc)))
            return
        request_id = request.id
        task = self._spawn(self._answer(request_id, work))
        self._running[request_id] = task

        def forget(_: asyncio.Task[Any]) -> None:
            self._running.pop(request_id, None)

        task.add_done_callback(forget)

    def _handle(self, request: jsonrpc.Request) -> Awaitable[Any]:
        if self._on_request is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return self._on_request(request)

    async def _answer(self, request_id: jsonrpc.RequestId, work: Awaitable[Any]) -> None:
        try:
            result = await work
        except asyncio.CancelledError:
            # Cancelled by the peer (no answer is owed) or by our own shutdown.
            return
        except RPCError as exc:
            await self._send_quietly(_error_response(request_id, exc))
            return
        except Exception as exc:
            logger.exception("handler for request %r failed", request_id)
            error = RPCError(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
            await self._send_quietly(_error_response(request_id, error))
            return
        await self._send_quietly(_result_response(request_id, result))

    async def _route_batch(self, events: list[jsonrpc.Event | RemoteProtocolError]) -> None:
        answers: list[Awaitable[bytes | None]] = []
        for event in events:
            if isinstance(event, jsonrpc.Request):
                answers.append(self._batch_member(event))
            elif isinstance(event, jsonrpc.Notification):
                await self._notification(event)
            elif isinstance(event, RemoteProtocolError):
                answers.append(ready(_error_response(event.request_id, event)))
            else:
                self._settle(event)
        if answers:
            self._spawn(self._send_batch(answers))

    async def _batch_member(self, request: jsonrpc.Request) -> bytes | None:
        try:
            result = await self._handle(request)
        except RPCError as exc:
            return _error_response(request.id, exc)
        except asyncio.CancelledError:
            return None
        except Exception as exc:
            logger.exception("handler for request %r failed", request.id)
            return _error_response(request.id, RPCError(INTERNAL_ERROR, f"Internal error: {exc}"))
        return _result_response(request.id, result)

    async def _send_batch(self, answers: list[Awaitable[bytes | None]]) -> None:
        parts = [part for part in await asyncio.gather(*answers) if part is not None]
        if parts:
            await self._send_quietly(b"[" + b",".join(parts) + b"]")

    async def _send_quietly(self, message: bytes) -> None:
        try:
            await self.transport.send(message)
        except (ConnectionClosed, OSError):
            logger.debug("could not send: the transport is closed")

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        # create_task, not ensure_future: one task per request, and the checks add up.
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


async def ready(value: T) -> T:
    """An awaitable that is already done: for answers known without waiting."""
    return value
