"""The worker threads of sync handlers: results, errors, context, cancellation, concurrency."""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import threading
import time
from typing import Any

import pytest

from mcpkit.server._threads import run_sync

who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))  # a hang bound: threads start slowly on a busy machine


def test_a_result_delivered_from_the_worker_never_wakes_the_loop() -> None:
    # deliver sends the finished result on from the worker thread; if it does, the loop is not
    # woken for the job (its future is never settled); if it declines, the loop sees to the job as
    # without it (finish too, again if deliver had the result made before declining).
    offered: list[tuple[Any, int]] = []
    finished: list[int] = []

    def finish(exc: BaseException | None, value: Any) -> Any:
        if exc is not None:
            raise exc
        finished.append(threading.get_ident())
        if value == "unshapeable":
            raise TypeError("cannot shape it")
        return {"shaped": value}

    def deliver(accept: bool) -> Any:
        def offer(job: Any, result_of: Any) -> bool:
            assert isinstance(job, asyncio.Future) and not job.done()
            offered.append((result_of(), threading.get_ident()))
            return accept

        return offer

    async def main() -> None:
        loop = asyncio.get_running_loop()
        sent = run_sync(lambda: "a", {}, finish, loop, deliver(True))
        async with asyncio.timeout(60):  # the worker thread offers it (not a nap: a busy machine is slow)
            while not offered:  # noqa: ASYNC110 (a thread appends it)
                await asyncio.sleep(0.01)
        assert offered[0][0] == {"shaped": "a"} and offered[0][1] != threading.get_ident()
        assert not sent.done()  # answered for by deliver: nothing comes back to the loop
        declined = run_sync(lambda: "b", {}, finish, loop, deliver(False))
        assert await declined == {"shaped": "b"}
        loop_thread = threading.get_ident()
        assert [thread == loop_thread for thread in finished] == [False, False, True]
        with pytest.raises(TypeError, match="cannot shape"):
            await run_sync(lambda: "unshapeable", {}, finish, loop, deliver(True))

        def fail() -> str:
            raise ValueError("no")

        with pytest.raises(ValueError, match="no"):  # a call that raised is never offered
            await run_sync(fail, {}, finish, loop, deliver(True))
        assert [result for result, _ in offered] == [{"shaped": "a"}, {"shaped": "b"}]

    run(main())


def test_results_errors_and_context_reach_the_caller() -> None:
    def greet(name: str) -> str:
        assert threading.current_thread() is not threading.main_thread()
        return f"{who.get()} greets {name}"

    def fail() -> None:
        raise ValueError("no")

    async def main() -> None:
        who.set("alice")
        assert await run_sync(greet, {"name": "bob"}) == "alice greets bob"
        with pytest.raises(ValueError, match="no"):
            await run_sync(fail, {})

    run(main())


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="SCHED_BATCH is Linux's")
def test_a_job_runs_under_sched_batch_and_the_loop_thread_keeps_its_policy() -> None:
    # A woken worker must not preempt the loop's thread (it could only wait for the GIL there).
    policy = os.sched_getscheduler(0)

    async def main() -> None:
        assert await run_sync(lambda: os.sched_getscheduler(0), {}) == os.SCHED_BATCH
        assert os.sched_getscheduler(0) == policy

    run(main())


def test_many_calls_in_flight_on_several_loops() -> None:
    def double(n: int) -> int:
        return 2 * n

    async def main() -> None:
        results = await asyncio.gather(*(run_sync(double, {"n": n}) for n in range(500)))
        assert results == [2 * n for n in range(500)]

    for _ in range(3):  # one pool serves every loop, one after the other
        run(main())


def test_blocking_calls_run_side_by_side() -> None:
    barrier = threading.Barrier(4, timeout=60)  # only ends if four workers wait at once

    async def main() -> None:
        assert await asyncio.gather(*(run_sync(barrier.wait, {}) for _ in range(4)))

    run(main())


def test_a_cancelled_call_lets_its_thread_finish_and_drops_the_result() -> None:
    release, finished = threading.Event(), threading.Event()

    def slow() -> str:
        release.wait(60)
        finished.set()
        return "late"

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await run_sync(slow, {})
        release.set()
        assert await asyncio.to_thread(finished.wait, 60)
        assert await run_sync(lambda: "next", {}) == "next"

    run(main())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_with_a_pool_of_its_own() -> None:
    async def call(fn: Any) -> Any:
        return await run_sync(fn, {})

    run(call(lambda: None))  # the parent's workers exist now
    pid = os.fork()
    if pid == 0:  # the child: none of those threads came along
        code = 1
        try:
            code = 0 if run(call(lambda: "child")) == "child" else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child's sync call never ended")


def test_a_job_never_waits_behind_a_long_one_once_idle_workers_have_gone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool counts waiting workers exactly: after a burst, its idle workers end; a worker busy
    with a long job must not be counted as free, or the next job waits for that long job to end."""
    import mcpkit.server._threads as threads

    monkeypatch.setattr(threads, "_IDLE_SECONDS", 0.3)
    release = threading.Event()

    def nap(seconds: float) -> None:
        time.sleep(seconds)

    async def main() -> float:
        long = run_sync(release.wait, {"timeout": 120})
        await asyncio.gather(*(run_sync(nap, {"seconds": 0.02}) for _ in range(10)))
        await asyncio.sleep(3.0)  # the burst's workers idle out (after 0.3 s, on a busy machine later)
        started = time.monotonic()
        assert await asyncio.wait_for(run_sync(lambda: 7, {}), 60) == 7
        waited = time.monotonic() - started
        release.set()
        await long
        return waited

    # Far below the long job (release.wait(120)) it would otherwise wait behind, and generous for a
    # worker to start on a busy machine.
    assert asyncio.run(asyncio.wait_for(main(), 180)) < 60


def test_exit_waits_for_the_jobs_being_run() -> None:
    from mcpkit.server._threads import _pool

    started, release = threading.Event(), threading.Event()
    waited: list[float] = []

    def slow() -> str:
        started.set()
        release.wait(60)
        return "done"

    def at_exit() -> None:  # what atexit runs, here on a thread of its own
        _pool.wait_for_running()
        waited.append(time.monotonic())

    async def main() -> None:
        job = run_sync(slow, {})
        await asyncio.to_thread(started.wait, 60)
        waiter = threading.Thread(target=at_exit)
        waiter.start()
        await asyncio.sleep(0.05)
        assert not waited  # the job still runs: exit waits
        released = time.monotonic()
        release.set()
        assert await job == "done"
        await asyncio.to_thread(waiter.join, 60)
        assert waited and waited[0] >= released

    run(main())
    _pool.wait_for_running()  # nothing runs: returns at once
