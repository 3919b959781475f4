"""What the benchmark reads of processes (CPU, memory), where it places them, and its small statistics."""

from __future__ import annotations

import contextlib
import os
import statistics
from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def in_turn(entrants: Sequence[T], index: int) -> list[T]:
    """*entrants* in round *index*'s order, which rotates from round to round: measured always in
    one order, a later place met what the earlier ones left, and was favoured on this VM (identical
    code read 13 µs of p50 apart)."""
    shift = index % len(entrants) if entrants else 0
    return [*entrants[shift:], *entrants[:shift]]


def medians(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The median of each column of *rows* (one row a round: calls/s, CPU µs/call, p50 µs)."""
    return (
        statistics.median(row[0] for row in rows),
        statistics.median(row[1] for row in rows),
        statistics.median(row[2] for row in rows),
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children, from /proc (Linux)."""
    import psutil  # type: ignore[import-untyped]

    total = 0.0
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(pid)
        for proc in [process, *process.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                total += times.user + times.system
    return total


def pin(pid: int, cpus: set[int]) -> None:
    """Restrict every thread of process *pid* (0: this one) to *cpus*."""
    pid = pid or os.getpid()
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(task), cpus)


@contextlib.contextmanager
def placed(server_pid: int, same_core: bool) -> Iterator[None]:
    """Pin this process and the server to one core, or to two different ones, for a while.

    Unpinned, a sequential round trip on a small VM is bimodal: fast when the scheduler happens to
    put both processes on one core, slower by the cost of waking another core when not. Pinning
    makes each placement repeatable, and the report shows both.
    """
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 and not same_core:
        yield
        return
    mine, theirs = cpus[0], cpus[0] if same_core else cpus[1]
    pin(0, {mine})
    pin(server_pid, {theirs})
    try:
        yield
    finally:
        pin(0, set(cpus))
        pin(server_pid, set(cpus))


def rss_bytes(pid: int) -> int:
    """Resident memory of a process and its children."""
    import psutil

    total = 0
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(pid)
        for proc in [process, *process.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
    return total
