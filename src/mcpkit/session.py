"""The async JSON-RPC endpoint both roles stand on: :class:`Peer`, its read loop and its routing.

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

from collections.abc import Awaitable, Callable

from . import _jsonrpc as jsonrpc
from ._errors import INVALID_REQUEST, ConnectionClosed, RemoteProtocolError
from ._peer_answers import error_response, first_step, go_on, ready, result_response
from ._peer_batches import Batches
from ._peer_core import RequestHandler, logger
from ._peer_outgoing import Outgoing
from ._transport import OVERSIZE

__all__ = ["Peer", "RequestHandler", "error_response", "first_step", "go_on", "ready", "result_response"]


class Peer(Batches, Outgoing):
    """One end of a JSON-RPC conversation over a :class:`Transport`.

    Args:
        transport: the message stream.
        on_request: turns an incoming request into a coroutine computing its result. Called in
            arrival order (so lifecycle checks see messages in order); may raise ``RPCError``.
        on_notification: handles an incoming notification (other than cancellation).
        decode: framing-level decoder; the server passes its connection's, which knows batches.

    Its parts, each in a module of its own: what it holds and how messages leave
    (:class:`~mcpkit._peer_core.PeerCore`), its own requests (:class:`~mcpkit._peer_outgoing.Outgoing`),
    the requests it handles (:class:`~mcpkit._peer_incoming.Incoming`) and batches
    (:class:`~mcpkit._peer_batches.Batches`); the read loop and routing are here.
    """

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
