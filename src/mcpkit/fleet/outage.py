"""While the fleet's shared state is away: 503 and ``Retry-After``, never a 500.

A node of a fleet keeps serving while its Redis is stopped, restarting or cut off: whatever needs no
shared state goes on as usual (2026-07-28 requests, a session this node already holds, its open
streams), and whatever does (``initialize`` writes the session's record; a request for a session
held elsewhere reads it; DELETE, a GET stream's claim, a replay from the shared event store, an
HTTP+SSE message for another node) cannot be answered now and is answered so:

* HTTP **503** with ``Retry-After: 1`` and a JSON-RPC error **-32000** ("Service unavailable: the
  shared state cannot be reached, retry later"), the answer a node gives before it has joined;
* a response that has already started (an event stream) cannot change its status: it is ended, and
  its client reconnects (with ``Last-Event-ID`` where the stream is resumable) once Redis is back.

The state layer raises one error for every way of not reaching the store
(:class:`~mcpkit.fleet.state.StateUnavailable`, whatever the Redis client raised), and
:func:`answer_outages`, around the whole app, is where that error becomes an HTTP answer: no code
path in between needs to know about outages, and none can leak a 500. A handler the error escapes
answers its request with it (-32000: it is an ``RPCError``), which a 2026-07-28 request then gets as
this same 503 (see :mod:`mcpkit.transports.http.server.stateless`). The fleet's session strategy
puts :func:`answer_outages` around each request (:meth:`~mcpkit.fleet.membership.Membership.guard`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

from .. import _jsonrpc as jsonrpc
from ..transports.http.server._asgi import Message, Receive, Scope, Send, end_body, error
from .state import StateUnavailable

__all__ = ["RETRY_AFTER", "answer_outages", "unavailable"]

logger = logging.getLogger("mcpkit.fleet")

#: Seconds a client is told to wait: Redis restarted under running nodes is reached again within
#: about one (the client reconnects on the next command).
RETRY_AFTER: Final = 1


async def unavailable(send: Send, request_id: jsonrpc.RequestId | None = None) -> None:
    """Answer 503: the shared state cannot be reached (or has not been yet)."""
    await error(
        send,
        503,
        request_id,
        StateUnavailable.default_code,
        StateUnavailable().message,
        [(b"retry-after", str(RETRY_AFTER).encode())],
    )


async def answer_outages(
    app: Callable[[Scope, Receive, Send], Awaitable[None]], scope: Scope, receive: Receive, send: Send
) -> None:
    """Run *app* for one HTTP request, answering 503 if the shared state cannot be reached (or
    ending the response if it had started): the one place that error becomes an HTTP answer."""
    started = False

    async def watched(message: Message) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, receive, watched)
    except StateUnavailable as exc:
        logger.warning(
            "%s %s: the shared state cannot be reached (%s)", scope["method"], scope["path"], exc.detail
        )
        if started:
            await end_body(send)  # its client reconnects; the status cannot change now
        else:
            await unavailable(send, exc.request_id)
