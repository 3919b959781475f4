"""What a ``def`` tool's worker thread costs, by where the scheduler puts it (64 calls in flight).

    .venv/bin/python bench/def_placement.py [ROUNDS] [SECONDS]

One mcpkit server (``bench/servers/mcpkit_server.py``) over stdio, loaded with 64 calls in flight of
``echo`` (``async def``) and ``echo_sync`` (the same as ``def``, run on a worker thread), in three
placements taken in turn, ROUNDS times:

* ``unpinned``: as ``./dev bench`` measures it; the scheduler places every thread;
* ``server-on-one-core``: all of the server's threads on one core, the load generator on the other;
* ``worker-on-other-core``: the server's event loop on one core, its worker threads on the other
  (beside the load generator, which may use either).

Prints, per placement and tool, the medians of the calls/s and of the server's CPU per call, and
the ``def`` tool's calls/s against the ``async def`` one's (median of the rounds' ratios). A worker
thread and the event loop pass every call's objects (its future, context, arguments, result)
between them; on one core those stay in its caches, across two they travel between the cores.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import loadgen
from loadgen import HANDSHAKE

SERVER = Path(__file__).parent / "servers" / "mcpkit_server.py"
PLACEMENTS = ("unpinned", "server-on-one-core", "worker-on-other-core")
TOOLS = ("echo", "echo_sync")


def place(placement: str, server_pid: int, cpus: list[int]) -> None:
    """Pin the threads as *placement* says (the workers exist once the def tool has run)."""
    everywhere = set(cpus)
    if placement == "unpinned":
        loadgen.pin(0, everywhere)
        loadgen.pin(server_pid, everywhere)
    elif placement == "server-on-one-core":
        loadgen.pin(0, {cpus[0]})
        loadgen.pin(server_pid, {cpus[1]})
    else:
        loadgen.pin(0, everywhere)
        loadgen.pin(server_pid, {cpus[0]})
        os.sched_setaffinity(server_pid, {cpus[1]})  # the main thread runs the event loop


async def main(rounds: int, seconds: float) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("needs two cores")
    server = await loadgen.StdioServer.spawn([sys.executable, "-m", "mcpkit", "run", str(SERVER)])
    try:
        await server.handshake(HANDSHAKE)
        for tool in TOOLS:  # warm-up; the first def call starts a worker thread
            await server.pipelined(HANDSHAKE, 64, 0.3, tool=tool)
        figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for index in range(rounds):
            for placement in loadgen.in_turn(PLACEMENTS, index):
                place(placement, server.pid, cpus)
                for tool in TOOLS:
                    cpu0 = loadgen.cpu_seconds(server.pid)
                    answered, elapsed = await server.pipelined(HANDSHAKE, 64, seconds, tool=tool)
                    cpu = loadgen.cpu_seconds(server.pid) - cpu0
                    figures.setdefault((placement, tool), []).append(
                        (answered / elapsed, cpu / answered * 1e6)
                    )
        place("unpinned", server.pid, cpus)
    finally:
        await server.close()
    print(f"{rounds} rounds of {seconds} s per tool and placement, 64 in flight; medians")
    for placement in PLACEMENTS:
        for tool in TOOLS:
            rows = figures[placement, tool]
            rate, cpu_us = (statistics.median(row[i] for row in rows) for i in range(2))
            print(f"{placement:21} {tool:10} {rate:9.0f} calls/s {cpu_us:6.2f} µs/call")
        ratios = [
            d[0] / a[0]
            for d, a in zip(figures[placement, "echo_sync"], figures[placement, "echo"], strict=True)
        ]
        print(f"{placement:21} def against async def: {statistics.median(ratios):.2f}x "
              f"({min(ratios):.2f} to {max(ratios):.2f})")  # fmt: skip


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(int(args[0]) if args else 8, float(args[1]) if len(args) > 1 else 0.7))
