"""Run the whole benchmark side by side and write the report: ``./dev bench [--short]``.

Every server answers the same raw JSON-RPC load from :mod:`loadgen` on this machine: first each on
its own, one after another; then the figures the targets are judged on in rounds, the servers (kept
running) taking turns (:func:`side_by_side`). The figures go to ``bench/results/``: ``results.json`` (everything measured),
``results.md`` (the tables, with ratios against the official SDK's low-level ``Server`` measured in
the same run, and the targets of issues 5 and 16) and PNG plots.

``--short`` is the CI mode: every server is started over stdio and HTTP and must answer
``tools/list``, ``echo`` and ``add`` correctly, each measurement runs for a moment only, and the report
must render. Its figures mean nothing and nothing is asserted about them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadgen
from loadgen import HANDSHAKE, MODERN, BenchError, StdioServer

from framework import bench_framework

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SERVERS = BENCH / "servers"
TS = BENCH / "ts"
LOGS = ROOT / ".cache" / "bench-logs"
HOST = "127.0.0.1"
BASELINE = "sdk-lowlevel"
SUBJECT = "mcpkit"


@dataclass(frozen=True)
class Settings:
    cold_runs: int  # extra spawns to time cold start (besides the one measured)
    import_runs: int
    seq_calls: int
    seq_seconds: float
    pipe_seconds: float
    rss_calls: int  # calls made before "RSS after N calls"
    http_seconds: float
    sessions: int
    client_seconds: float
    rounds: int  # how many turns each server takes at the headline figures (see side_by_side)
    pairs: int  # paired windows of mcpkit and the ceiling over HTTP (see paired_http)
    pair_seconds: float
    in_flight: tuple[int, ...] = (1, 16)  # besides HEADLINE_IN_FLIGHT, measured in the rounds
    http_clients: tuple[int, ...] = (1, 32)  # besides HEADLINE_CLIENTS, measured in the rounds


FULL = Settings(cold_runs=2, import_runs=3, seq_calls=3000, seq_seconds=1.0, pipe_seconds=1.5,
                rss_calls=10_000, http_seconds=1.5, sessions=1000, client_seconds=1.5, rounds=3,
                pairs=6, pair_seconds=1.0)  # fmt: skip
SHORT = Settings(cold_runs=0, import_runs=1, seq_calls=20, seq_seconds=0.2, pipe_seconds=0.1,
                 rss_calls=200, http_seconds=0.1, sessions=10, client_seconds=0.1, rounds=1,
                 pairs=1, pair_seconds=0.1)  # fmt: skip

#: The figures the targets are judged on are measured in rounds, the servers taking turns:
#: stdio with this many calls in flight (and one at a time, on two cores) ...
HEADLINE_IN_FLIGHT = 64
#: ... and HTTP with this many clients.
HEADLINE_CLIENTS = 8


@dataclass
class Peer:
    key: str
    label: str
    stdio: list[str]
    http: Callable[[int], list[str]]
    imports: list[str]  # a command that only imports what the server needs
    bare: list[str]  # the same interpreter doing nothing (subtracted from the import time)
    cwd: Path = ROOT
    def_tool: str | None = None  # the same echo written as a sync ``def`` tool, where the server has one
    results: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # Kept running from a peer's own steps to the rounds (side_by_side):
    stdio_server: StdioServer | None = None
    stdio_calls: int = 0  # calls it has answered (for "RSS after N calls")
    http_port: int | None = None
    http_pid: int | None = None
    http_eras: list[str] = field(default_factory=list)
    turns: int = 0  # rounds taken so far (side_by_side): the order of its HTTP eras alternates


def peers() -> list[Peer]:
    py = sys.executable

    def script(name: str) -> Callable[[int], list[str]]:
        return lambda port: [py, str(SERVERS / name), "--http", str(port)]

    mcpkit_file = str(SERVERS / "mcpkit_server.py")
    node = shutil.which("node") or "node"
    return [
        Peer("raw", "hand-written loop (uvloop, orjson; raw ASGI on uvicorn)", [py, str(SERVERS / "raw_server.py")],
             script("raw_server.py"), [py, "-c", "import asyncio, uvloop, orjson, uvicorn"], [py, "-c", "pass"]),
        Peer("mcpkit", "mcpkit `Server` (high-level)", [py, "-m", "mcpkit", "run", mcpkit_file],
             # Every session of the benchmark comes from 127.0.0.1: lift the per-address cap (1,000).
             lambda port: [py, "-m", "mcpkit", "run", mcpkit_file, "--transport", "http", "--port", str(port),
                           "--max-sessions-per-client", "100000"],
             [py, "-c", "import mcpkit.cli, mcpkit"], [py, "-c", "pass"], def_tool="echo_sync"),
        Peer("ts", "TypeScript SDK 1.32 low-level `Server`", [node, str(TS / "server.mjs")],
             lambda port: [node, str(TS / "server.mjs"), "--http", str(port)],
             [node, "--input-type=module", "-e",
              "await import('@modelcontextprotocol/sdk/server/index.js');"
              "await import('@modelcontextprotocol/sdk/server/stdio.js')"],
             [node, "--input-type=module", "-e", "0"], cwd=TS),
        Peer(BASELINE, "`mcp` 2.3.0 low-level `Server`", [py, str(SERVERS / "sdk_lowlevel.py")],
             script("sdk_lowlevel.py"), [py, "-c", "import mcp.server.lowlevel, mcp.server.stdio"],
             [py, "-c", "pass"]),
        Peer("sdk-mcpserver", "`mcp` 2.3.0 `MCPServer`", [py, str(SERVERS / "sdk_mcpserver.py")],
             script("sdk_mcpserver.py"), [py, "-c", "import mcp.server.mcpserver"], [py, "-c", "pass"]),
        Peer("fastmcp", "`fastmcp` 4.1.2", [py, str(SERVERS / "fastmcp_server.py")], script("fastmcp_server.py"),
             [py, "-c", "import fastmcp"], [py, "-c", "pass"]),
    ]  # fmt: skip


def ensure_ts() -> None:
    """Install the TypeScript SDK into bench/ts/node_modules from the committed lock file."""
    if (TS / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise BenchError("npm is not installed; the TypeScript SDK peer needs Node.js and npm")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=TS, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


def log_file(peer: Peer, what: str) -> Any:
    LOGS.mkdir(parents=True, exist_ok=True)
    return open(LOGS / f"{peer.key}-{what}.log", "wb")


# -- measurements ----------------------------------------------------------------------------------


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


async def take_turns(
    count: int, entrants: Sequence[str], turn: Callable[[str], Awaitable[dict[str, Any]]]
) -> dict[str, dict[str, list[float]]]:
    """*count* rounds in which every entrant takes its *turn*, the order rotating from round to
    round; the figures (numbers) each entrant's turns returned, round by round."""
    rounds: dict[str, dict[str, list[float]]] = {entrant: {} for entrant in entrants}
    for index in range(count):
        for entrant in loadgen.in_turn(entrants, index):
            for key, value in (await turn(entrant)).items():
                if isinstance(value, int | float):
                    rounds[entrant].setdefault(key, []).append(value)
    return rounds


def medians(rounds: dict[str, list[float]]) -> dict[str, Any]:
    """Each figure's median, and every round's figures under ``rounds``."""
    return {**{key: statistics.median(values) for key, values in rounds.items()}, "rounds": rounds}


async def side_by_side(peers: Sequence[Peer], s: Settings, log: Callable[[str], None]) -> None:
    """The figures the targets are judged on, in ``s.rounds`` rounds (:func:`take_turns`): every
    server, kept running from its own steps, takes its turn at stdio (one call at a time, and 64 in
    flight; the ``def`` tool too where there is one) and at HTTP with 8 clients in each era it
    speaks. Each figure is the median of its rounds (each round's in ``results["rounds"]``).

    Measured one server after another, minutes apart, two servers' figures met different moments of
    a shared VM: the same code read 8,062 and 10,260 calls/s in two runs, and the ratios between
    servers moved with it. Taking turns, every server meets the same moments."""
    live = {p.key: p for p in peers if p.stdio_server is not None or p.http_port is not None}
    t0 = time.perf_counter()

    async def turn(key: str) -> dict[str, Any]:
        peer, figures = live[key], {}
        try:
            await asyncio.wait_for(one_turn(peer, s, figures), 300)
        except Exception as exc:  # what was measured before it failed still counts
            peer.errors.append(f"rounds: {type(exc).__name__}: {exc}")
            log(f"{peer.key}: a round failed:\n{traceback.format_exc()}")
        return figures

    rounds = await take_turns(s.rounds, list(live), turn)
    log(f"{s.rounds} rounds: {time.perf_counter() - t0:.1f} s")
    for key, peer in live.items():
        peer.results.update(medians(rounds[key]))


async def one_turn(peer: Peer, s: Settings, figures: dict[str, Any]) -> None:
    if peer.stdio_server is not None:
        peer.stdio_calls += await stdio_figures(figures, peer.stdio_server, s, "echo", "")
        if peer.def_tool is not None:
            peer.stdio_calls += await stdio_figures(figures, peer.stdio_server, s, peer.def_tool, "def_")
    if peer.http_port is not None and peer.http_pid is not None:
        # The eras take turns too: measured always in one order, the second would always meet
        # what the first left (and the moments after it), and their ratio is a target.
        eras = peer.http_eras if peer.turns % 2 == 0 else peer.http_eras[::-1]
        for era in eras:
            await http_figures(figures, peer.http_pid, peer.http_port, era, HEADLINE_CLIENTS, s.http_seconds)
    peer.turns += 1


async def paired_http(peers: Sequence[Peer], s: Settings) -> dict[str, Any]:
    """The three HTTP targets that compare two figures of the same kind (mcpkit against the raw
    ceiling in each era, and mcpkit's 2026-07-28 against its handshake era), in ``s.pairs`` paired
    windows: in each, both servers in both eras (8 clients, ``s.pair_seconds`` each), one window
    right after another, and each ratio taken within the pair; each target is the median of its
    pairs' ratios (every pair's in ``pairs``).

    In the rounds, the two figures of a ratio are a whole turn of the other servers apart (half a
    minute), and on a shared VM a server's rate moves by a fifth and more in that time: the ceiling
    read 23,515 and 29,696 calls/s in two rounds of one run. Side by side within seconds, the ratio
    is what the two servers cost, not which moments they met. Who goes first alternates, and so does
    the order of the eras."""
    live = {p.key: p for p in peers if p.http_port is not None and p.http_pid is not None}
    raw, mcpkit = live.get("raw"), live.get(SUBJECT)
    if raw is None or mcpkit is None or MODERN not in raw.http_eras or MODERN not in mcpkit.http_eras:
        return {}
    ratios: dict[str, list[float]] = {
        f"{HANDSHAKE}_over_raw": [],
        f"{MODERN}_over_raw": [],
        "modern_over_handshake": [],
        "raw_modern_over_handshake": [],  # what the eras' messages cost the ceiling itself
    }
    for index in range(s.pairs):
        eras = (HANDSHAKE, MODERN) if index % 2 == 0 else (MODERN, HANDSHAKE)
        order = (raw, mcpkit) if index // 2 % 2 == 0 else (mcpkit, raw)
        rate: dict[tuple[str, str], float] = {}
        for era in eras:
            for peer in order:
                assert peer.http_port is not None and peer.http_pid is not None
                figures = await loadgen.http_figures(
                    HOST, peer.http_port, era, HEADLINE_CLIENTS, s.pair_seconds, [peer.http_pid]
                )
                rate[peer.key, era] = figures["per_s"]
        for era in (HANDSHAKE, MODERN):
            ratios[f"{era}_over_raw"].append(rate[SUBJECT, era] / rate["raw", era])
        ratios["modern_over_handshake"].append(rate[SUBJECT, MODERN] / rate[SUBJECT, HANDSHAKE])
        ratios["raw_modern_over_handshake"].append(rate["raw", MODERN] / rate["raw", HANDSHAKE])
    return {name: {"median": statistics.median(values), "pairs": values} for name, values in ratios.items()}


async def bench_clients(s: Settings) -> dict[str, Any]:
    """The hand-written client, the mcpkit client and the official client, each against the
    hand-written server (on asyncio's loop and on uvloop, unpinned and on one core); then the mcpkit
    client against the mcpkit server over Streamable HTTP, in both eras."""
    server = [sys.executable, str(SERVERS / "raw_server.py")]
    out: dict[str, Any] = {}

    async def run_client(which: str, *args: str, core: int | None = None) -> dict[str, Any]:
        # core: the client and the server it spawns both pinned to that one core (children inherit it)
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(BENCH / "clients.py"), which, str(s.client_seconds), "16", *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            preexec_fn=None if core is None else lambda: os.sched_setaffinity(0, {core}),
        )  # fmt: skip
        stdout, _ = await process.communicate()
        try:
            return json.loads(stdout.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]
        except (ValueError, IndexError):
            return {"error": f"no result (exit code {process.returncode})"}

    # One call at a time, a client's CPU is mostly the system waking it for each answer, and that
    # depends on placement as the servers' sequential latency does: each client runs unpinned (the
    # scheduler's choice, usually two cores) and then with its server on one core. The hand-written
    # client ("raw") is the floor on each loop. As with the servers' headline figures, the clients
    # take turns in s.rounds rounds (the order rotating) and each figure is the median of its rounds.
    core = min(os.sched_getaffinity(0))
    failed: dict[str, str] = {}

    async def turn(which: str) -> dict[str, Any]:
        unpinned = await run_client(which, "--", *server)
        one_core = await run_client(which, "--", *server, core=core)
        if "error" in unpinned or "error" in one_core:
            failed[which] = unpinned.get("error") or one_core["error"]
            return {}
        return {
            **unpinned,
            "one_core_sequential_calls_per_s": one_core.get("sequential_calls_per_s"),
            "one_core_sequential_cpu_us_per_call": one_core.get("sequential_cpu_us_per_call"),
        }

    rounds = await take_turns(s.rounds, ["raw", "mcpkit", "official", "raw@uvloop", "mcpkit@uvloop"], turn)
    for which, figures in rounds.items():
        out[which] = {"error": failed[which]} if which in failed else medians(figures)
    mcpkit = next(p for p in peers() if p.key == "mcpkit")
    async with http_server(mcpkit, "client-http") as (port, _):
        url = f"http://{HOST}:{port}/mcp"
        for key, version in (("mcpkit-http-handshake", loadgen.HANDSHAKE_VERSION),
                             ("mcpkit-http-modern", loadgen.MODERN_VERSION)):  # fmt: skip
            out[key] = await run_client("mcpkit", version, "--", url)
    return out


async def bench_fleet(s: Settings, log: Callable[[str], None]) -> dict[str, Any]:
    """One mcpkit node without Redis, one on Redis, three on Redis behind nginx (``bench/fleet.py``)."""
    import fleet

    t0 = time.perf_counter()
    data = await fleet.bench_fleet(
        0.1 if s is SHORT else 3.0, 0.05 if s is SHORT else 1.0, log=log, logs=LOGS
    )
    log(f"fleet: done in {time.perf_counter() - t0:.1f} s")
    return data


# -- the run ---------------------------------------------------------------------------------------


async def run_all(s: Settings, only: Sequence[str] | None, log: Callable[[str], None]) -> dict[str, Any]:
    selected = [p for p in peers() if not only or p.key in only]
    async with contextlib.AsyncExitStack() as stack:  # the servers kept running for the rounds
        for peer in selected:
            t0 = time.perf_counter()
            if peer.key == "ts":
                try:
                    ensure_ts()
                except (BenchError, subprocess.CalledProcessError, OSError) as exc:
                    peer.errors.append(f"install: {exc}")
                    log(f"{peer.key}: cannot install: {exc}")
                    continue
            for name, step in (("stdio", bench_stdio), ("http", bench_http)):
                try:
                    await asyncio.wait_for(step(peer, s, stack), 300)
                except Exception as exc:
                    peer.errors.append(f"{name}: {type(exc).__name__}: {exc}")
                    log(f"{peer.key}: {name} failed:\n{traceback.format_exc()}")
            try:
                peer.results["import_ms"] = import_time(peer, s.import_runs)
            except (subprocess.CalledProcessError, OSError) as exc:
                peer.errors.append(f"import: {exc}")
            log(f"{peer.key}: done in {time.perf_counter() - t0:.1f} s")
        await side_by_side(selected, s, log)
        t0 = time.perf_counter()
        try:
            paired = await asyncio.wait_for(paired_http(selected, s), 300)
        except Exception as exc:
            paired = {"error": f"{type(exc).__name__}: {exc}"}
            log(f"paired HTTP windows failed:\n{traceback.format_exc()}")
        log(f"{s.pairs} paired HTTP windows: {time.perf_counter() - t0:.1f} s")
        for peer in selected:
            try:
                await asyncio.wait_for(finish_stdio(peer, s), 300)
            except Exception as exc:
                peer.errors.append(f"stdio RSS: {type(exc).__name__}: {exc}")
                log(f"{peer.key}: stdio RSS failed:\n{traceback.format_exc()}")
    t0 = time.perf_counter()
    clients = await bench_clients(s) if not only or "mcpkit" in only else {}
    log(f"clients: done in {time.perf_counter() - t0:.1f} s")
    fleet = await bench_fleet(s, log) if not only or "fleet" in only else {}
    framework: dict[str, Any] = {}  # what one middleware and a mounted call cost (bench/framework.py)
    if not only or "mcpkit" in only or "framework" in only:
        framework = await bench_framework(0.02 if s is SHORT else 0.5, 1 if s is SHORT else 5, log)
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "mode": "short" if s is SHORT else "full",
        "settings": s.__dict__,
        "peers": [
            {"key": p.key, "label": p.label, "results": p.results, "errors": p.errors} for p in selected
        ],
        "paired_http": paired,
        "clients": clients,
        "fleet": fleet,
        "framework": framework,
    }


def machine() -> str:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    node = ""
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        node = subprocess.run(
            ["node", "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
    mem = ""
    with contextlib.suppress(OSError, ValueError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB"
    return (
        f"{os.cpu_count()} cores ({model or platform.machine()}){mem}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, Node {node or 'n/a'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="CI mode: check every server, time nothing")
    parser.add_argument(
        "--only",
        nargs="*",
        help="measure only these servers (keys: raw mcpkit ts sdk-lowlevel ...), or fleet (the fleet step)",
    )
    parser.add_argument("--out", type=Path, default=BENCH / "results", help="where to write the report")
    args = parser.parse_args(argv)
    settings = SHORT if args.short else FULL
    # Start-up is measured with bytecode caches written, as an installed package has them: a shell
    # that sets PYTHONDONTWRITEBYTECODE would otherwise have every spawn of mcpkit (an editable
    # install) compile its changed modules again.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {text}", file=sys.stderr, flush=True)

    try:
        import uvloop

        data = uvloop.run(run_all(settings, args.only, log))
    except ImportError:  # pragma: no cover
        data = asyncio.run(run_all(settings, args.only, log))
    data["seconds"] = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    import report

    report.write(data, args.out)
    log(f"report written to {args.out} ({data['seconds']:.0f} s in all)")
    failed = [f"{p['key']}: {e}" for p in data["peers"] for e in p["errors"]]
    failed += [f"client {k}: {v['error']}" for k, v in data["clients"].items() if "error" in v]
    failed += [f"fleet {s['label']}: {s['error']}" for s in data["fleet"].get("setups", []) if "error" in s]
    failed += [f"framework: {data['framework']['error']}"] if "error" in data["framework"] else []
    for line in failed:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
