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
import math
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias

from .._errors import MCPError, RequestTimeout, RPCError
from ..session import Peer

__all__ = [
    "Deadlines",
    "Progress",
    "ProgressCallback",
    "await_answer",
    "follow_task",
    "list_all",
    "retry_params",
]

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

    __slots__ = ("_callback", "seen")

    def __init__(self, callback: ProgressCallback | None) -> None:
        self._callback = callback
        #: The loop's time when progress was last heard of; ``None`` before any.
        self.seen: float | None = None

    async def update(self, params: dict[str, Any]) -> None:
        self.seen = asyncio.get_running_loop().time()
        if self._callback is not None:
            await self._callback(params.get("progress", 0), params.get("total"), params.get("message"))


class Deadlines:
    """When the requests in flight give up, watched by one timer for them all.

    A timer per request (armed when it is sent, cancelled when its answer comes, nearly always
    long before) cost a heap push and a cancellation each, in Python. One timer, armed for the
    earliest deadline, checks them all when it fires: it then fails the requests whose time is up
    and is armed again for the next deadline. With the usual 60 s timeout it fires about once a
    minute, whatever the rate of calls.
    """

    __slots__ = ("_at", "_timer", "_watched")

    def __init__(self) -> None:
        self._watched: dict[asyncio.Future[Any], tuple[Progress | None, float, float, float]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._at = math.inf

    def watch(
        self,
        future: asyncio.Future[Any],
        progress: Progress | None,
        timeout: float,
        hard_stop: float,
        sent: float,
    ) -> None:
        """Fail *future* with :class:`_Expired` after *timeout* s of silence since *sent* (the
        loop's time) or since *progress* was last heard of, or at *hard_stop*."""
        self._watched[future] = (progress, sent, timeout, hard_stop)
        deadline = sent + timeout
        if hard_stop < deadline:
            deadline = hard_stop
        if deadline < self._at:
            self._arm(future.get_loop(), deadline)

    def restart(self, now: float) -> None:
        """Start the silence of every request watched again at *now* (as progress heard of would)."""
        for future, (progress, _, timeout, hard_stop) in self._watched.items():
            self._watched[future] = (progress, now, timeout, hard_stop)
            if progress is not None:
                progress.seen = None  # heard of at *now*, the later of the two

    def forget(self, future: asyncio.Future[Any]) -> None:
        self._watched.pop(future, None)

    def close(self) -> None:
        """Stop watching (the connection is gone)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._at = math.inf
        self._watched.clear()

    def _arm(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._at = deadline
        self._timer = loop.call_at(deadline, self._check, loop)

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        self._at = math.inf
        now = loop.time()
        earliest = math.inf
        for future, (progress, sent, timeout, hard_stop) in list(self._watched.items()):
            seen = sent if progress is None or progress.seen is None else progress.seen
            deadline = min(seen + timeout, hard_stop)
            if future.done():
                del self._watched[future]
            elif deadline <= now:  # progress heard of since moves the deadline on
                del self._watched[future]
                future.set_exception(_Expired())
            else:
                earliest = min(earliest, deadline)
        if earliest < math.inf:
            self._arm(loop, earliest)


async def await_answer(
    peer: Peer,
    request_id: int,
    future: asyncio.Future[Any],
    progress: Progress | None,
    timeout: float | None,
    max_timeout: float | None,
    deadlines: Deadlines | None = None,
) -> Any:
    """The answer to a sent request, waited for as the module docstring says (its timeout watched
    by *deadlines*, the connection's, if given).

    Raises:
        RPCError: the server answered with an error.
        RequestTimeout: silence for *timeout* seconds, or *max_timeout* in all (cancelled on the server).
        ConnectionClosed: the connection ended first.
    """
    if timeout is None:
        return await peer.wait(request_id, future, None)
    # At the deadline the watcher fails the answer's future itself, so awaiting that future is all
    # the waiting there is (no asyncio.wait(), with its waiter future and extra turn of the loop).
    own = deadlines is None
    if deadlines is None:
        deadlines = Deadlines()
    now = future.get_loop().time()  # not asyncio.get_running_loop(): a getpid(2) per call
    deadlines.watch(future, progress, timeout, now + max_timeout if max_timeout else math.inf, now)
    try:
        return await future
    except _Expired:
        await peer.cancel(request_id, "request timed out")
        raise RequestTimeout(f"no answer to request {request_id} within {timeout:g} s") from None
    except asyncio.CancelledError:
        await peer.cancel(request_id, "request cancelled by the caller")
        raise
    finally:
        deadlines.forget(future)
        if own:
            deadlines.close()


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
