"""A request's answer as bytes (its result or its error), and a handler's first step taken by hand.

Shared by every way a peer answers (a request's task, a future's done-callback, a batch, an HTTP
POST answered in its own task) and by the HTTP server's stateless exchange, so that a handler's
failure becomes a JSON-RPC error in one place.
"""

from __future__ import annotations

import logging
import types
from collections.abc import Awaitable, Coroutine, Generator
from typing import Any, Final, TypeVar

from . import _jsonrpc as jsonrpc
from ._errors import INTERNAL_ERROR, ConnectionClosed, RemoteProtocolError, RPCError

__all__ = [
    "NO_ANSWER",
    "close_unawaited",
    "error_response",
    "first_step",
    "go_on",
    "ready",
    "result_response",
]

T = TypeVar("T")

logger = logging.getLogger("mcpkit")

#: Told to a routed transport as the last message of a request that ends unanswered (cancelled):
#: the stream waiting for it is owed an end, not an answer.
NO_ANSWER: Final = b""


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


def close_unawaited(work: Awaitable[Any]) -> None:
    # A request cancelled before its task first ran never awaited its handler's coroutine: close it,
    # or Python warns "coroutine was never awaited" (an error under -W error). A no-op otherwise.
    if isinstance(work, Coroutine):
        work.close()


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
