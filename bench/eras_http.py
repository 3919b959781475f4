"""Where the 2026-07-28 era's HTTP cost goes: the raw ceiling and mcpkit, in each era, side by side.

    .venv/bin/python bench/eras_http.py [ROUNDS] [SECONDS]

Starts the raw ASGI ceiling (``bench/servers/raw_server.py``) and the benchmark's mcpkit server,
then in ROUNDS paired windows (8 clients, SECONDS each; the order of the eras and of the servers
rotating) loads each server in three eras:

* ``handshake``: 2025-11-25 in a session, as ``./dev bench`` does;
* ``modern``: 2026-07-28 as ``./dev bench`` does (``_meta`` with the revision, the client's
  capabilities and its info; the three standard headers);
* ``modern-no-info``: the same without ``clientInfo``, which a client SHOULD send but may leave out:
  a smaller request, to show what the size of the era's messages costs by itself.

Prints, per server and era, the medians of the calls/s, of the load generator's CPU per call (this
process) and of the server's CPU per call; then each era's calls/s against the handshake era's,
taken within each window and given as the median over the windows. The ceiling checks nothing
(no header, no session, no scope) but answers as mcpkit does (``resultType``, ``serverInfo``), so
what it loses in 2026-07-28 is what the era's larger messages cost the HTTP stack and the load
generator, which share the machine with the server.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import loadgen
from loadgen import HANDSHAKE, MODERN

HOST = "127.0.0.1"
NO_INFO = "modern-no-info"
ERAS = (HANDSHAKE, MODERN, NO_INFO)
SERVERS = Path(__file__).parent / "servers"
COMMANDS = {
    "raw": [sys.executable, str(SERVERS / "raw_server.py"), "--http", "{port}"],
    "mcpkit": [sys.executable, "-m", "mcpkit", "run", str(SERVERS / "mcpkit_server.py"), "--transport", "http",
               "--port", "{port}", "--max-sessions-per-client", "100000"],
}  # fmt: skip


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


#: The 2026-07-28 ``_meta`` of the benchmark without the client's info.
NO_INFO_META = {k: v for k, v in loadgen.MODERN_META.items() if k != "io.modelcontextprotocol/clientInfo"}


async def window(port: int, era: str, seconds: float) -> tuple[int, float]:
    """8 clients of *era* calling echo for *seconds* (``modern-no-info``: 2026-07-28 calls that
    leave out clientInfo): (calls, elapsed s)."""
    if era == NO_INFO:
        calls, elapsed, _ = await loadgen.http_load(HOST, port, MODERN, 8, seconds, meta=NO_INFO_META)
    else:
        calls, elapsed, _ = await loadgen.http_load(HOST, port, era, 8, seconds)
    return calls, elapsed


async def main(rounds: int, seconds: float) -> None:
    started: dict[str, tuple[int, Any]] = {}
    try:
        for name, command in COMMANDS.items():
            port = loadgen.free_port()
            process = await asyncio.create_subprocess_exec(
                *[part.replace("{port}", str(port)) for part in command],
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            started[name] = (port, process)
            await loadgen.wait_for_port(HOST, port, process)
            for era in (HANDSHAKE, MODERN):
                await loadgen.check_http(HOST, port, era)
            for era in ERAS:
                await window(port, era, 0.5)  # warm-up
        figures: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for index in range(rounds):
            for era in loadgen.in_turn(ERAS, index):
                for name in loadgen.in_turn(list(started), index // len(ERAS)):
                    port, process = started[name]
                    own0, server0 = own_cpu(), loadgen.cpu_seconds(process.pid)
                    calls, elapsed = await window(port, era, seconds)
                    own, server = own_cpu() - own0, loadgen.cpu_seconds(process.pid) - server0
                    figures.setdefault((name, era), []).append(
                        (calls / elapsed, own / calls * 1e6, server / calls * 1e6)
                    )
        print(f"{rounds} windows of {seconds} s, 8 clients; medians")
        print(f"{'server':8} {'era':15} {'calls/s':>8} {'loadgen µs':>11} {'server µs':>10}")
        for (name, era), rows in figures.items():
            rate, own_us, server_us = (statistics.median(row[i] for row in rows) for i in range(3))
            print(f"{name:8} {era:15} {rate:8.0f} {own_us:11.2f} {server_us:10.2f}")
        for name in started:
            for era in ERAS[1:]:
                ratios = [
                    m[0] / h[0] for m, h in zip(figures[name, era], figures[name, HANDSHAKE], strict=True)
                ]
                print(f"{name:8} {era} against handshake: {statistics.median(ratios):.3f}x "
                      f"({min(ratios):.3f} to {max(ratios):.3f})")  # fmt: skip
    finally:
        for _, process in started.values():
            process.terminate()
            await process.wait()


if __name__ == "__main__":
    import uvloop

    args = sys.argv[1:]
    uvloop.run(main(int(args[0]) if args else 12, float(args[1]) if len(args) > 1 else 1.0))
