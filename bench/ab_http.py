"""HTTP servers side by side, rounds interleaved, for one change's before and after (both eras).

    .venv/bin/python bench/ab_http.py SECONDS ROUNDS CLIENTS NAME=COMMAND...

COMMAND is started with ``{port}`` replaced by a free port, e.g. the previous commit's source
against the working tree, beside the raw ASGI ceiling:

    git archive HEAD~1 src | tar -x -C /tmp/old
    .venv/bin/python bench/ab_http.py 2 3 8 \\
        "raw=.venv/bin/python bench/servers/raw_server.py --http {port}" \\
        "old=env PYTHONPATH=/tmp/old/src .venv/bin/python -m mcpkit run bench/servers/mcpkit_server.py \\
             --transport http --port {port} --max-sessions-per-client 100000" \\
        "new=.venv/bin/python -m mcpkit run bench/servers/mcpkit_server.py \\
             --transport http --port {port} --max-sessions-per-client 100000"

Each round (the servers in an order that rotates from round to round) starts every server afresh,
checks its answers, warms it up and loads it in the handshake era then in 2026-07-28. Prints, per
server and era, the median over the rounds of the calls/s (and its ratio to the first server's),
the server's CPU per call and the p50 latency.
Uses the benchmark's own load generator (no MCP library on the client side).
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import loadgen
from loadgen import HANDSHAKE, MODERN

HOST = "127.0.0.1"
Row = tuple[float, float, float]  # calls/s, CPU µs per call, p50 µs


async def measure(command: str, seconds: float, clients: int) -> dict[str, Row]:
    port = loadgen.free_port()
    argv = shlex.split(command.replace("{port}", str(port)))
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL
    )
    rows: dict[str, Row] = {}
    try:
        await loadgen.wait_for_port(HOST, port, process)
        for era in (HANDSHAKE, MODERN):
            await loadgen.check_http(HOST, port, era)
            await loadgen.http_load(HOST, port, era, clients, 0.3)  # warm-up
            cpu0 = loadgen.cpu_seconds(process.pid)
            calls, elapsed, latencies = await loadgen.http_load(HOST, port, era, clients, seconds)
            cpu = loadgen.cpu_seconds(process.pid) - cpu0
            rows[era] = (calls / elapsed, cpu / calls * 1e6, loadgen.percentile(latencies, 0.5))
    finally:
        process.terminate()
        await process.wait()
    return rows


async def main() -> None:
    seconds, rounds, clients = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    servers = [arg.split("=", 1) for arg in sys.argv[4:]]
    results: dict[str, list[dict[str, Row]]] = {name: [] for name, _ in servers}
    for index in range(rounds):
        for name, command in loadgen.in_turn(servers, index):
            results[name].append(await measure(command, seconds, clients))
    for era in (HANDSHAKE, MODERN):
        print(f"-- {era}, {clients} clients, {rounds} rounds")
        first = None
        for name, rounds_of in results.items():
            rows = [r[era] for r in rounds_of]
            rate, cpu, p50 = loadgen.medians(rows)
            first = first or rate
            print(f"{name:12s} {rate:8.0f}/s ({rate / first:.2f}x)  cpu {cpu:6.1f} µs/call  "
                  f"p50 {p50:5.0f} µs  rounds {[round(row[0]) for row in rows]}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
