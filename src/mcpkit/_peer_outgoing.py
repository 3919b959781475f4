"""A peer's own requests and notifications: ids, the futures of their answers, timeouts, cancelling them."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from msgspec import UNSET

from . import _jsonrpc as jsonrpc
from ._errors import ConnectionClosed, RequestTimeout, RPCError
from ._peer_core import PeerCore, logger

__all__ = ["Outgoing"]


class Outgoing(PeerCore):
    """Requests this peer sends, each waiting on a future its answer settles (:meth:`_settle`)."""

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
        message = self._request_message(request_id, method, params)
        send_request = self._send_request_nowait
        if not (
            send_nowait(message)
            if send_request is None
            else send_request(message, request_id, method, params)
        ):
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

    def _settle(self, event: jsonrpc.Response | jsonrpc.ErrorResponse) -> None:
        future = self._waiting.pop(event.id, None) if event.id is not None else None
        if future is None or future.done():
            logger.debug("dropping an answer to no pending request: %r", event.id)
            return
        if isinstance(event, jsonrpc.Response):
            future.set_result(event.result)
        else:
            future.set_exception(RPCError.from_wire(event.error))
