"""Worker threads for sync (``def``) handlers, with one event-loop wake-up per batch of results.

``loop.run_in_executor`` pays, per call, a ``concurrent.futures.Future`` (with its own lock and
condition), the executor's idle-semaphore dance, a second, chained asyncio future, and one
``call_soon_threadsafe`` (a write to the loop's self-pipe, so one wake-up) per result. With many
calls in flight that hand-off costs more than a small tool itself.

Here a job is ``(loop, future, context, fn, kwargs)`` put on one C ``SimpleQueue``; a worker takes
jobs as long as there are any, runs each in its copy of the caller's context, and appends the
outcome to its loop's list of finished jobs. Only the append that finds that list empty schedules
a callback on the loop, which settles every future finished so far: results that finish while the
loop is busy ride on one wake-up.

Sizing follows the loop's default executor (``min(32, cpus + 4)`` threads): a worker is started
when a job arrives and none is waiting, and a worker idle for a while ends. The threads are daemons
(an idle one never holds the interpreter up), but at exit the interpreter waits for the jobs already
taken, as it does for an executor's. One pool serves every loop of the process; a forked child
starts with an empty one.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Final

_MAX_WORKERS: Final = min(32, (os.cpu_count() or 1) + 4)
_IDLE_SECONDS: Final = 30.0

_Outcome = tuple["asyncio.Future[Any]", BaseException | None, Any]
_Job = tuple[
    asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Callable[..., Any], dict[str, Any]
]


class _Pool:
    __slots__ = ("_done", "_jobs", "_lock", "_queued", "_running", "_waiting", "_workers")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Start empty: also in a forked child, where none of the parent's threads exist."""
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._done: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        # Under _lock, and exact (an estimate that drifts would let a job wait behind a long one
        # while a worker could have been started): jobs put and not yet taken, workers waiting for
        # a job, all workers, jobs being run.
        self._queued = 0
        self._waiting = 0
        self._workers = 0
        self._running = 0

    def submit(
        self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], kwargs: dict[str, Any]
    ) -> asyncio.Future[Any]:
        future = loop.create_future()
        with self._lock:
            self._jobs.put((loop, future, contextvars.copy_context(), fn, kwargs))
            self._queued += 1
            if self._waiting >= self._queued or self._workers >= _MAX_WORKERS:
                return future  # a waiting worker takes it, or the first one free does
            self._workers += 1
            self._waiting += 1  # the new worker counts as waiting from its start
        threading.Thread(target=self._work, name="mcpkit-worker", daemon=True).start()
        return future

    def _work(self) -> None:
        jobs, lock, done = self._jobs, self._lock, self._done
        while True:
            try:
                loop, future, context, fn, kwargs = jobs.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with lock:
                    if self._queued > 0:  # a job came as the wait ended: take it
                        continue
                    self._waiting -= 1
                    self._workers -= 1
                return
            outcome: _Outcome
            ran = not future.cancelled()  # a timeout or a disconnect came first (racy, and harmless)
            with lock:
                self._queued -= 1
                self._waiting -= 1
                if ran:
                    self._running += 1
            if not ran:
                outcome = (future, None, None)
            else:
                try:
                    outcome = (future, None, context.run(fn, **kwargs))
                except BaseException as exc:  # handed to the awaiting task as it is
                    outcome = (future, exc, None)
            with lock:
                finished = done.get(loop)
                first = finished is None
                if first:
                    finished = done[loop] = []
                finished.append(outcome)  # type: ignore[union-attr]
                self._waiting += 1
                if ran:
                    self._running -= 1
            if first:
                try:
                    loop.call_soon_threadsafe(self._settle, loop)
                except RuntimeError:  # the loop is closed: nobody waits for these any more
                    with lock:
                        done.pop(loop, None)
            del loop, future, context, fn, kwargs, outcome, finished

    def _settle(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            finished = self._done.pop(loop, ())
        for future, exc, value in finished:
            if future.cancelled():
                continue
            if exc is None:
                future.set_result(value)
            else:
                future.set_exception(exc)

    def wait_for_running(self) -> None:
        """At exit: let the jobs already started end, as the loop's default executor would."""
        while True:
            with self._lock:
                if not self._running:
                    return
            time.sleep(0.01)


_pool: Final = _Pool()
atexit.register(_pool.wait_for_running)
os.register_at_fork(after_in_child=_pool.reset)  # `mcpkit run --workers N` forks


def run_sync(fn: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
    """Run ``fn(**kwargs)`` on a worker thread, in a copy of the current context; await the result."""
    return _pool.submit(asyncio.get_running_loop(), fn, kwargs)
