"""Two (or more) stdio servers side by side, rounds interleaved, for one change's before and after.

    .venv/bin/python bench/ab.py SECONDS ROUNDS IN_FLIGHT [--tool NAME] NAME=COMMAND...

e.g. the previous commit's source against the working tree:

    git archive HEAD~1 src | tar -x -C /tmp/old
    .venv/bin/python bench/ab.py 2 3 64 \\
        "old=env PYTHONPATH=/tmp/old/src .venv/bin/python -m mcpkit run bench/servers/mcpkit_server.py" \\
        "new=.venv/bin/python -m mcpkit run bench/servers/mcpkit_server.py"

Prints, per server, the median over the rounds of the pipelined calls/s (and its ratio to the
first server), the server's CPU per call, and the sequential p50 latency. Uses the benchmark's own
load generator (no MCP library on the client side).
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import loadgen
from loadgen import HANDSHAKE, StdioServer


async def measure(
    command: list[str], seconds: float, in_flight: int, tool: str
) -> tuple[float, float, float]:
    server = await StdioServer.spawn(command)
    await server.handshake(HANDSHAKE)
    await server.check(HANDSHAKE)
    await server.pipelined(HANDSHAKE, 16, 0.3, tool=tool)  # warm-up
    cpu_before = loadgen.cpu_seconds(server.pid)
    calls, elapsed = await server.pipelined(HANDSHAKE, in_flight, seconds, tool=tool)
    cpu = loadgen.cpu_seconds(server.pid) - cpu_before
    latencies = await server.sequential(HANDSHAKE, 2000, 0.5, tool=tool)
    await server.close()
    return calls / elapsed, cpu / calls * 1e6, loadgen.percentile(latencies, 0.5)


async def main() -> None:
    seconds, rounds, in_flight = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rest = sys.argv[4:]
    tool = "echo"  # bench/servers/mcpkit_server.py also has echo_sync, the same tool as a def
    if rest[:1] == ["--tool"]:
        tool, rest = rest[1], rest[2:]
    servers = [arg.split("=", 1) for arg in rest]
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in servers}
    for index in range(rounds):
        for name, command in loadgen.in_turn(servers, index):
            results[name].append(await measure(shlex.split(command), seconds, in_flight, tool))
    first = None
    for name, rows in results.items():
        rate, cpu, p50 = loadgen.medians(rows)
        first = first or rate
        print(f"{name:12s} {rate:9.0f}/s ({rate / first:.2f}x)  cpu {cpu:6.1f} µs/call  "
              f"sequential p50 {p50:.0f} µs  rounds {[round(row[0]) for row in rows]}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
