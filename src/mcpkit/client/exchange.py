"""How one request is carried through: waiting for its answer, retry rounds, tasks and pages.

* Waiting (:func:`await_answer`): ``timeout`` is a time of silence, which each progress notification
  for the request starts again; ``max_timeout`` caps the whole wait. A request that times out or
  that its caller cancels is cancelled on the server: ``notifications/cancelled``, or over
  2026-07-28 HTTP the transport abandons the request's POST ("closing the SSE response stream is
  itself the cancellation signal").
* Rounds (:func:`retry_params`): a 2026-07-28 ``input_required`` result is answered and the request
  sent again with a new id, its ``inputResponses`` and the ``requestState`` echoed verbatim.
* Tasks (:func:`follow_task`): a 2026-07-28 ``task`` result is polled with ``tasks/get`` until it
  ends, its questions answered with ``tasks/update``.
* Pages (:func:`list_all`): a list follows ``nextCursor`` to its end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias

from .._errors import MCPError, RequestTimeout, RPCError
from ..session import Peer

__all__ = ["Progress", "ProgressCallback", "await_answer", "follow_task", "list_all", "retry_params"]

#: ``async fn(progress, total, message)`` for each ``notifications/progress`` of a request.
ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], Awaitable[None]]
#: ``await request(method, params)``: the client's full request path.
Requester: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[Any]]
#: ``await answer(input_requests, answered)``: the ``inputResponses`` for the questions not yet answered.
InputAnswerer: TypeAlias = Callable[[Any, set[str]], Awaitable[dict[str, Any]]]

MAX_PAGES: Final = 10_000  # a server whose cursors never end must not hang the client
#: The ``resultType`` values a 2026-07-28 client understands; "an absent resultType" is complete.
RESULT_TYPES: Final = frozenset({"complete", "input_required", "task"})


class Progress:
    """The progress of one request: when it was last heard of, and whom to tell."""

    __slots__ = ("_callback", "_seen")

    def __init__(self, callback: ProgressCallback | None) -> None:
        self._callback = callback
        self._seen: float | None = None

    def last_seen(self, loop: asyncio.AbstractEventLoop) -> float:
        if self._seen is None:
            self._seen = loop.time()
        return self._seen

    async def update(self, params: dict[str, Any]) -> None:
        self._seen = asyncio.get_running_loop().time()
        if self._callback is not None:
            await self._callback(params.get("progress", 0), params.get("total"), params.get("message"))


async def await_answer(
    peer: Peer,
    request_id: int,
    future: asyncio.Future[Any],
    progress: Progress,
    timeout: float | None,
    max_timeout: float | None,
) -> Any:
    """The answer to a sent request, waited for as the module docstring says.

    Raises:
        RPCError: the server answered with an error.
        RequestTimeout: silence for *timeout* seconds, or *max_timeout* in all (cancelled on the server).
        ConnectionClosed: the connection ended first.
    """
    if timeout is None:
        return await peer.wait(request_id, future, None)
    # One timer, moved on when progress was heard of, instead of asyncio.wait() per request (a
    # waiter future, its callbacks and an extra turn of the loop): at the deadline the timer fails
    # the answer's future itself, so awaiting that future is all the waiting there is.
    loop = asyncio.get_running_loop()
    hard_stop = loop.time() + (max_timeout or float("inf"))
    expired = False
    timer: asyncio.TimerHandle | None = None

    def check() -> None:
        nonlocal timer, expired
        if future.done():
            return
        deadline = min(progress.last_seen(loop) + timeout, hard_stop)
        if deadline > loop.time():
            timer = loop.call_at(deadline, check)
        else:
            expired = True
            future.set_exception(_Expired())

    timer = loop.call_at(min(progress.last_seen(loop) + timeout, hard_stop), check)
    try:
        return await future
    except _Expired:
        if not expired:  # not our timer's: cannot happen, but never mistake it for a timeout
            raise
        await peer.cancel(request_id, "request timed out")
        raise RequestTimeout(f"no answer to request {request_id} within {timeout:g} s") from None
    except asyncio.CancelledError:
        await peer.cancel(request_id, "request cancelled by the caller")
        raise
    finally:
        if timer is not None:
            timer.cancel()


class _Expired(Exception):
    """Set on a request's future by its timer; becomes :class:`RequestTimeout`."""


def check_result_type(method: str, result: Any) -> None:
    """ "Clients MUST treat an absent resultType as complete"; an unknown one is invalid."""
    kind = result.get("resultType", "complete") if isinstance(result, dict) else "complete"
    if kind not in RESULT_TYPES:
        raise MCPError(f"unsupported resultType {kind!r} in the answer to {method}")


def retry_params(params: dict[str, Any], result: dict[str, Any], responses: dict[str, Any]) -> dict[str, Any]:
    """The params of the next round after an ``input_required`` *result*: the original request's,
    with *responses* as ``inputResponses`` and the result's ``requestState`` echoed verbatim."""
    again = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    if responses:
        again["inputResponses"] = responses
    if "requestState" in result:
        again["requestState"] = result["requestState"]
    return again


async def follow_task(request: Requester, answer: InputAnswerer, created: dict[str, Any]) -> Any:
    """Drive a 2026-07-28 task to its end and return its inlined result: poll ``tasks/get`` as often
    as ``pollIntervalMs`` says, and answer its ``inputRequests`` with ``tasks/update``.

    Raises:
        RPCError: the task failed (its error).
        MCPError: the task was cancelled.
    """
    task_id = created.get("taskId")
    interval = created.get("pollIntervalMs")
    answered: set[str] = set()
    while True:
        task = await request("tasks/get", {"taskId": task_id})
        if not isinstance(task, dict):
            raise MCPError(f"tasks/get returned no task for {task_id!r}")
        status = task.get("status")
        if status == "completed":
            return task.get("result", {})
        if status == "failed":
            raise RPCError.from_wire(task.get("error") or {"code": -32603, "message": "task failed"})
        if status == "cancelled":
            raise MCPError(f"task {task_id} was cancelled")
        responses = await answer(task.get("inputRequests"), answered) if status == "input_required" else {}
        if responses:
            await request("tasks/update", {"taskId": task_id, "inputResponses": responses})
            continue
        interval = task.get("pollIntervalMs", interval)
        seconds = interval / 1000 if isinstance(interval, (int, float)) and interval > 0 else 0.5
        await asyncio.sleep(min(max(seconds, 0.01), 5.0))


async def list_all(
    request: Requester, method: str, key: str, params: dict[str, Any] | None = None
) -> list[Any]:
    """Every item of a paginated list (*key* of each page), following ``nextCursor``."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page_params = {**(params or {}), "cursor": cursor} if cursor is not None else dict(params or {})
        result = await request(method, page_params)
        page = result.get(key, []) if isinstance(result, dict) else []
        items.extend(page if isinstance(page, list) else [])
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        if not isinstance(cursor, str) or not cursor:
            return items
    raise MCPError(f"{method}: the server returned more than {MAX_PAGES} pages")
