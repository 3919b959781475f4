"""What a peer holds and how its messages leave: its state, the one way out, its loop and tasks.

:class:`PeerCore` is the base of :class:`~mcpkit.session.Peer`: the other parts of a peer (its
outgoing requests, its incoming ones, batches, the read loop) are written against what it holds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from . import _jsonrpc as jsonrpc
from ._errors import ConnectionClosed, RemoteProtocolError
from ._transport import RoutedTransport, SendRequestNowait, Transport

__all__ = ["Decoder", "NotificationHandler", "PeerCore", "RequestHandler"]

logger = logging.getLogger("mcpkit")

#: Decodes one framed message.
Decoder = Callable[[bytes], "jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]"]
#: Runs one incoming request; returns its result or raises RPCError.
RequestHandler = Callable[[jsonrpc.Request], Awaitable[Any]]
NotificationHandler = Callable[[jsonrpc.Notification], Awaitable[None]]


def _default_decode(data: bytes) -> jsonrpc.Event:
    decoded = jsonrpc.decode(data)
    if isinstance(decoded, list):
        raise RemoteProtocolError("JSON-RPC batches are not supported here")
    return decoded


class PeerCore:
    """A peer's state and its sending primitives (see :class:`~mcpkit.session.Peer` for the arguments)."""

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
        # The same for a request, given its parts too, to a transport that reads them (HTTP makes its
        # headers of the method and the name): then it need not decode what was just encoded.
        self._send_request_nowait: SendRequestNowait | None = getattr(transport, "send_request_nowait", None)
        # A transport a worker thread may write an answer to itself (stdio; see thread_answerer).
        self._send_from_thread: Callable[[bytes], bool] | None = (
            None if self._routed is not None else getattr(transport, "send_from_thread", None)
        )

    async def _emit(self, message: bytes, related: jsonrpc.RequestId | None, final: bool) -> None:
        # The one place messages leave: a routed transport learns what each belongs to.
        if self._routed is not None:
            await self._routed.send_related(message, related, final)
        else:
            await self.transport.send(message)

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
