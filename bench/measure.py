"""One server's own steps: import time, cold start, its stdio and HTTP figures, its idle sessions.

Each step measures one server alone (:func:`bench_stdio`, :func:`bench_http`) and leaves it
running for the rounds (``rounds.py``), which call :func:`stdio_figures` and :func:`http_figures`
again on every turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import subprocess
import time
from typing import Any

import loadgen
from loadgen import HANDSHAKE, MODERN, BenchError, StdioServer
from peers import HEADLINE_IN_FLIGHT, HOST, SHORT, Peer, Settings, log_file


def import_time(peer: Peer, runs: int) -> float:
    """Median wall time (ms) of importing the server's stack, less the bare interpreter's start."""

    def timed(command: list[str]) -> float:
        t0 = time.perf_counter()
        subprocess.run(
            command, cwd=peer.cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        return time.perf_counter() - t0

    timed(peer.imports)  # bytecode caches written, files in the page cache
    full = statistics.median(timed(peer.imports) for _ in range(runs))
    bare = statistics.median(timed(peer.bare) for _ in range(runs))
    return max(0.0, (full - bare) * 1e3)


async def cold_start(peer: Peer) -> tuple[StdioServer, float]:
    """Spawn the stdio server; the time (ms) until its answer to ``initialize``."""
    with log_file(peer, "stdio") as log:
        server = await StdioServer.spawn(peer.stdio, cwd=str(peer.cwd), stderr=log)
    await server.handshake(HANDSHAKE)
    return server, (time.perf_counter() - server.started) * 1e3


async def bench_stdio(peer: Peer, s: Settings, stack: contextlib.AsyncExitStack) -> None:
    """Cold start, idle RSS, latency on one core and 1 and 16 in flight; the server is then kept
    running for the rounds (:func:`side_by_side`) and closed by :func:`finish_stdio`."""
    r = peer.results
    colds = []
    for _ in range(s.cold_runs):
        extra, ms = await cold_start(peer)
        colds.append(ms)
        await extra.close()
    server, ms = await cold_start(peer)
    stack.push_async_callback(server.close)
    colds.append(ms)
    r["cold_start_ms"] = statistics.median(colds)
    await server.check(HANDSHAKE)
    await asyncio.sleep(0.2)
    r["rss_idle_mb"] = loadgen.rss_bytes(server.pid) / 2**20
    # Warm-up: JIT compilers, caches, lazily imported modules.
    calls, _ = await server.pipelined(HANDSHAKE, 16, 0.05 if s is SHORT else 0.3)
    with loadgen.placed(server.pid, True):
        latencies = await server.sequential(HANDSHAKE, s.seq_calls, s.seq_seconds)
    calls += len(latencies)
    r["seq_1core_p50_us"] = loadgen.percentile(latencies, 0.5)
    r["seq_1core_p99_us"] = loadgen.percentile(latencies, 0.99)
    for width in s.in_flight:
        cpu0 = loadgen.cpu_seconds(server.pid)
        answered, elapsed = await server.pipelined(HANDSHAKE, width, s.pipe_seconds)
        cpu = loadgen.cpu_seconds(server.pid) - cpu0
        calls += answered
        r[f"stdio_{width}_per_s"] = answered / elapsed
        r[f"stdio_{width}_cpu_us"] = cpu / answered * 1e6
    if peer.def_tool is not None:  # warm the def tool's workers too
        answered, _ = await server.pipelined(HANDSHAKE, 16, 0.05 if s is SHORT else 0.3, tool=peer.def_tool)
        calls += answered
    peer.stdio_server, peer.stdio_calls = server, calls


async def finish_stdio(peer: Peer, s: Settings) -> None:
    """RSS after ``s.rss_calls`` calls (topped up if the rounds made fewer), then close."""
    server, peer.stdio_server = peer.stdio_server, None
    if server is None:
        return
    r = peer.results
    try:
        calls = peer.stdio_calls
        if calls < s.rss_calls:
            answered, _ = await server.pipelined(HANDSHAKE, 64, 600, max_calls=s.rss_calls - calls)
            calls += answered
        await server.check(HANDSHAKE)
        await asyncio.sleep(0.2)
        r["rss_calls"] = calls
        r["rss_after_mb"] = loadgen.rss_bytes(server.pid) / 2**20
    finally:
        await server.close()


@contextlib.asynccontextmanager
async def http_server(peer: Peer, what: str) -> Any:
    port = loadgen.free_port()
    with log_file(peer, what) as log:
        process = await asyncio.create_subprocess_exec(
            *peer.http(port), cwd=str(peer.cwd), stdin=asyncio.subprocess.DEVNULL,
            stdout=log, stderr=log,
        )  # fmt: skip
    try:
        await loadgen.wait_for_port(HOST, port, process)
        yield port, process
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 5)
            except TimeoutError:
                process.kill()
                await process.wait()


async def bench_http(peer: Peer, s: Settings, stack: contextlib.AsyncExitStack) -> None:
    """Both eras with 1 and 32 clients, then idle sessions on a fresh process; the first server is
    kept running for the rounds (:func:`side_by_side`)."""
    r = peer.results
    port, process = await stack.enter_async_context(http_server(peer, "http"))
    for era in (HANDSHAKE, MODERN):
        client = loadgen.HttpClient(HOST, port, era)
        try:
            await client.open()
            await client.check()
        except (BenchError, KeyError, ValueError, OSError) as exc:
            if era == HANDSHAKE:
                raise
            r["modern_http"] = "not supported"
            r["modern_http_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        finally:
            client.close()
        r["modern_http"] = "yes" if era == MODERN else r.get("modern_http")
        await loadgen.http_load(HOST, port, era, 8, 0.05 if s is SHORT else 0.3)  # warm-up
        for clients in s.http_clients:
            await http_figures(r, process.pid, port, era, clients, s.http_seconds)
        peer.http_eras.append(era)
    peer.http_port, peer.http_pid = port, process.pid
    # Idle sessions on a fresh process, so that nothing freed by the load is reused for them.
    async with http_server(peer, "sessions") as (port, process):
        await loadgen.open_idle_sessions(HOST, port, 20)
        await asyncio.sleep(0.3)
        before = loadgen.rss_bytes(process.pid)
        t0 = time.perf_counter()
        opened = await loadgen.open_idle_sessions(HOST, port, s.sessions)
        r["handshakes_per_s"] = len(opened) / (time.perf_counter() - t0)
        await asyncio.sleep(0.5)
        r["session_kb"] = (loadgen.rss_bytes(process.pid) - before) / len(opened) / 1024
        r["sessions"] = len(opened)


async def http_figures(
    into: dict[str, Any], pid: int, port: int, era: str, clients: int, seconds: float
) -> None:
    """*clients* clients calling ``echo`` for *seconds*, as ``http_<era>_<clients>_*`` in *into*."""
    figures = await loadgen.http_figures(HOST, port, era, clients, seconds, [pid])
    into.update((f"http_{era}_{clients}_{name}", value) for name, value in figures.items())


async def stdio_figures(
    into: dict[str, Any], server: StdioServer, s: Settings, tool: str, prefix: str
) -> int:
    """One call at a time (client and server on two cores), then ``HEADLINE_IN_FLIGHT`` in flight:
    ``<prefix>seq_p50_us``, ``<prefix>seq_p99_us``, ``<prefix>stdio_64_per_s`` and ``..._cpu_us``."""
    with loadgen.placed(server.pid, False):
        latencies = await server.sequential(HANDSHAKE, s.seq_calls, s.seq_seconds, tool)
    into[f"{prefix}seq_p50_us"] = loadgen.percentile(latencies, 0.5)
    into[f"{prefix}seq_p99_us"] = loadgen.percentile(latencies, 0.99)
    cpu0 = loadgen.cpu_seconds(server.pid)
    answered, elapsed = await server.pipelined(HANDSHAKE, HEADLINE_IN_FLIGHT, s.pipe_seconds, tool=tool)
    cpu = loadgen.cpu_seconds(server.pid) - cpu0
    into[f"{prefix}stdio_{HEADLINE_IN_FLIGHT}_per_s"] = answered / elapsed
    into[f"{prefix}stdio_{HEADLINE_IN_FLIGHT}_cpu_us"] = cpu / answered * 1e6
    return len(latencies) + answered
