"""Worker threads for sync (``def``) handlers: one hand-off per turn of the loop, not per call.

``loop.run_in_executor`` pays, per call, a ``concurrent.futures.Future`` (with its own lock and
condition), the executor's idle-semaphore dance, a second, chained asyncio future, a worker wake-up
and a ``call_soon_threadsafe`` (a write to the loop's self-pipe) for the result. With many calls in
flight that hand-off costs more than a small tool itself; so here both directions go in batches:

* **Out.** The jobs submitted in one turn of the loop wait in a list; at the end of the turn they
  join the pool's deque together and at most one worker is woken, and none if one is awake already.
  A worker takes jobs from the deque one at a time until it is empty.
* **Back.** A worker appends each outcome to its loop's list of finished jobs; only the append that
  finds that list empty schedules the callback that settles every future finished so far.
* **Or on.** A job may carry a *deliver* function that sends its result on from the worker itself
  (a lone stdio call's answer, written to the pipe): the way back through the loop is a wake-up of
  the loop's thread and a switch to it, on the path of a client that waits for this one call. A
  job delivered so is never settled on the loop, which is not woken for it at all: woken after the
  answer went, it would only compete with the client's next call for the CPU and the GIL.

One awake worker drains a burst, so a job could wait behind a long one (a tool that blocks). A
watchdog on the loop sees to that: while jobs wait, it looks every :data:`_WATCH_SECONDS`, and if no
job was taken since its last look, it wakes (or starts) a worker for every waiting job.

A worker never preempts the loop's thread when it is woken: on Linux the workers run under
``SCHED_BATCH``, the scheduling policy for threads whose wake-ups need not be served at once. A
worker woken (for a job, or by the I/O its job waits on) while the loop's thread runs could do
nothing but wait for the GIL that thread holds: preempting it cost two context switches and the
futex traffic of a contended GIL on every hand-off. It now runs when the loop's thread waits for
I/O (or at the scheduler's next tick), with the same share of the CPU as before. Threads a job
starts inherit the policy.

Sizing follows the loop's default executor (``min(32, cpus + 4)`` threads): a worker is started when
one is needed and none is idle, and a worker idle for a while ends. The threads are daemons (an idle
one never holds the interpreter up), but at exit the interpreter waits for the jobs already taken, as
it does for an executor's. One pool serves every loop of the process; a forked child starts with an
empty one.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import contextvars
import functools
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Final

_MAX_WORKERS: Final = min(32, (os.cpu_count() or 1) + 4)
_IDLE_SECONDS: Final = 30.0
#: How often the watchdog looks for jobs stuck behind long ones (their worst extra wait is twice it).
#: Not shorter than the interpreter's switch interval: a worker kept from the GIL by a busy loop
#: gets it within one, and must not be taken for a worker held up by its job.
_WATCH_SECONDS: Final = 2 * sys.getswitchinterval()

#: Turns a job's outcome (its exception, or its value) into the future's result, on the loop; may
#: raise, and then the future holds what it raised.
Finish = Callable[[BaseException | None, Any], Any]
#: Sends a job's result on from the worker thread, if it can now: whether it did. Its arguments:
#: the job's future (which says whose job it is), and what makes the result (the job's finish, run
#: there), called only if it is to be sent.
Deliver = Callable[["asyncio.Future[Any]", Callable[[], Any]], bool]
_Outcome = tuple["asyncio.Future[Any]", BaseException | None, Any, Finish | None]
_Job = tuple[
    asyncio.AbstractEventLoop,
    "asyncio.Future[Any]",
    contextvars.Context,
    Callable[..., Any],
    dict[str, Any],
    Finish | None,
    Deliver | None,
]


class _Pool:
    __slots__ = (
        "_busy",
        "_done",
        "_idle",
        "_jobs",
        "_lock",
        "_outgoing",
        "_taken",
        "_watched",
        "_workers",
    )

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Start empty: also in a forked child, where none of the parent's threads exist."""
        self._jobs: collections.deque[_Job] = collections.deque()
        self._lock = threading.Lock()
        # Loop-side, touched only by the loop's own thread: this turn's jobs, not handed over yet;
        # and the loops whose watchdog is armed.
        self._outgoing: dict[asyncio.AbstractEventLoop, list[_Job]] = {}
        self._watched: set[asyncio.AbstractEventLoop] = set()
        # Under _lock: finished jobs per loop; idle workers, each waiting on a lock of its own that
        # the waker releases (the last is woken first: its caches are the warmest); all workers.
        self._done: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        self._idle: list[threading.Lock] = []
        self._workers = 0
        # The workers running a job now (each adds and discards only itself: a set's add and
        # discard are atomic, so this needs no lock, which a count would, on every job).
        self._busy: set[threading.Lock] = set()
        self._taken = 0  # jobs taken so far: the watchdog's sign of progress (a lost count is harmless)

    def submit(
        self,
        loop: asyncio.AbstractEventLoop,
        fn: Callable[..., Any],
        kwargs: dict[str, Any],
        finish: Finish | None = None,
        deliver: Deliver | None = None,
    ) -> asyncio.Future[Any]:
        future = loop.create_future()
        outgoing = self._outgoing.get(loop)
        if outgoing is None:
            outgoing = self._outgoing[loop] = []
            loop.call_soon(self._hand_over, loop)
        outgoing.append((loop, future, contextvars.copy_context(), fn, kwargs, finish, deliver))
        return future

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        self._jobs.extend(self._outgoing.pop(loop))
        with self._lock:
            awake = self._workers - len(self._idle)
        if awake == 0:
            self._wake(1)
        if loop not in self._watched:
            self._watched.add(loop)
            loop.call_later(_WATCH_SECONDS, self._watch, loop, self._taken)

    def _watch(self, loop: asyncio.AbstractEventLoop, taken: int) -> None:
        if not self._jobs:
            self._watched.discard(loop)
            return
        if self._taken == taken:  # nothing taken for a while: the awake workers are all held up
            self._wake(len(self._jobs))
        loop.call_later(_WATCH_SECONDS, self._watch, loop, self._taken)

    def _wake(self, count: int) -> None:
        """Wake idle workers, or start new ones, for ``count`` jobs (as many as the cap allows)."""
        with self._lock:
            woken = self._idle[-count:]
            del self._idle[-count:]
            new = max(0, min(count - len(woken), _MAX_WORKERS - self._workers))
            self._workers += new
        for idle in woken:
            idle.release()
        for _ in range(new):
            threading.Thread(target=self._work, name="mcpkit-worker", daemon=True).start()

    def _work(self) -> None:
        _no_wakeup_preemption()
        jobs, lock, done, busy = self._jobs, self._lock, self._done, self._busy
        wake = threading.Lock()
        wake.acquire()
        while True:
            try:
                loop, future, context, fn, kwargs, finish, deliver = jobs.popleft()
            except IndexError:
                with lock:
                    if jobs:  # a job came as the deque emptied: take it
                        continue
                    self._idle.append(wake)
                if wake.acquire(timeout=_IDLE_SECONDS):
                    continue
                with lock:
                    if wake not in self._idle:  # woken as the wait ended: the release is owed
                        wake.acquire()
                        continue
                    self._idle.remove(wake)
                    self._workers -= 1
                return
            self._taken += 1
            outcome: _Outcome
            ran = not future.cancelled()  # a timeout or a disconnect came first (racy, and harmless)
            if not ran:
                outcome = (future, None, None, None)
            else:
                busy.add(wake)
                try:
                    outcome = (future, None, context.run(fn, **kwargs), finish)
                except BaseException as exc:  # handed to the awaiting task as it is
                    outcome = (future, exc, None, finish)
                busy.discard(wake)
                if deliver is not None and outcome[1] is None:
                    kept = _delivered(outcome, deliver)
                    if kept is None:  # sent on: nothing for the loop to do
                        del loop, future, context, fn, kwargs, finish, deliver, outcome
                        continue
                    outcome = kept
            with lock:
                finished = done.get(loop)
                first = finished is None
                if first:
                    finished = done[loop] = []
                finished.append(outcome)  # type: ignore[union-attr]
            if first:
                try:
                    loop.call_soon_threadsafe(self._settle, loop)
                except RuntimeError:  # the loop is closed: nobody waits for these any more
                    with lock:
                        done.pop(loop, None)
            del loop, future, context, fn, kwargs, finish, deliver, outcome, finished

    def _settle(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            finished = self._done.pop(loop, ())
        for future, exc, value, finish in finished:
            if future.cancelled():
                continue
            if finish is not None:
                try:
                    exc, value = None, finish(exc, value)
                except BaseException as failure:
                    exc = failure
            if exc is None:
                future.set_result(value)
            else:
                future.set_exception(exc)

    def wait_for_running(self) -> None:
        """At exit: let the jobs already started end, as the loop's default executor would."""
        while self._busy:
            time.sleep(0.01)


def _delivered(outcome: _Outcome, deliver: Deliver) -> _Outcome | None:
    """Offer *deliver* a job's result (made by its finish, on this thread): ``None`` if it sent it
    on; else the outcome for the loop: what the making raised, or the outcome as it was."""
    future, _, value, finish = outcome
    result_of = functools.partial(_same, value) if finish is None else functools.partial(finish, None, value)
    try:
        if deliver(future, result_of):
            return None
    except BaseException as exc:  # as from finish on the loop: the future holds it
        return (future, exc, None, None)
    return outcome


def _same(value: Any) -> Any:
    return value


def _no_wakeup_preemption() -> None:
    """Put the calling thread under SCHED_BATCH where there is one (see the module docstring)."""
    batch = getattr(os, "SCHED_BATCH", None)
    if batch is not None:
        # Refused (a sandbox): the default policy serves as well, a little slower.
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, batch, os.sched_param(0))  # 0: the calling thread


_pool: Final = _Pool()
atexit.register(_pool.wait_for_running)
os.register_at_fork(after_in_child=_pool.reset)  # `mcpkit run --workers N` forks


def run_sync(
    fn: Callable[..., Any],
    kwargs: dict[str, Any],
    finish: Finish | None = None,
    loop: asyncio.AbstractEventLoop | None = None,
    deliver: Deliver | None = None,
) -> asyncio.Future[Any]:
    """Run ``fn(**kwargs)`` on a worker thread, in a copy of the current context; await the result.

    *finish*, if given, is called on the loop with the call's outcome (its exception or ``None``,
    and its value) and its return value (or what it raises) is the future's: work that would
    otherwise need a coroutine resumed on the loop after the thread is done. *loop*: the running
    loop, where the caller knows it (asking asyncio costs a getpid(2) system call, every time).

    *deliver*, if given, is offered the result on the worker thread, with a function that makes it
    (*finish*, run there). If it sends it on from there (and returns ``True``), the future is never
    settled: whoever gave *deliver* answered for the call and must not wait for it (nor may anyone
    else). If the call raised, or *deliver* declines, all goes to the loop as without it (*finish*
    too).
    """
    return _pool.submit(loop or asyncio.get_running_loop(), fn, kwargs, finish, deliver)
