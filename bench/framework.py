"""What the framework's layers cost per call: one no-op middleware, and a call through a mount.

    .venv/bin/python bench/framework.py [--seconds S] [--rounds N] [--only CASE...] [--json] [--calls]

Each case is a server whose ``tools/call echo`` (the benchmark's ``async def`` echo) is started
through :meth:`LowLevelServer.start <mcpkit.LowLevelServer.start>`, the entry every transport
uses, and awaited, in one process with no transport, so the CPU time per call (``process_time``)
is the dispatch alone: what a middleware or a mount adds is a difference of a few microseconds,
which the noise of a stdio or HTTP round trip (tens of microseconds, two processes) would hide.
The cases, each in the handshake era (2025-11-25 session) and in 2026-07-28:

* ``plain``: the server with no middleware (the fast path of a plain tool call);
* ``other_mw``: one no-op middleware for ``prompts/get`` only: the tool call no longer takes the
  fast path (any middleware turns it off) but passes no middleware;
* ``noop_mw``: one no-op middleware around every request;
* ``child``: the server to be mounted, called directly (``echo``);
* ``mounted``: a parent that mounts it with ``namespace="x"``, called as ``x__echo``.

Rounds take turns (the order rotating) and each figure is the median of its rounds. The rows
derived from them: one no-op middleware (``noop_mw - plain``, and ``noop_mw - other_mw``: the
layer itself), and a mounted call (``mounted - child``); the target of each is under 2 µs.
Time on a shared machine moves by half between runs; ``--calls`` prints instead what does not
move: the Python functions one call enters, per case and era (:func:`python_calls`).
``./dev bench`` runs this as its ``framework`` step (:func:`bench_framework`).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
ERAS = {"handshake": HANDSHAKE_VERSION, "modern": MODERN_VERSION}
CASES = ("plain", "other_mw", "noop_mw", "child", "mounted")
#: The derived rows: (name, case, minus case).
DIFFERENCES = (
    ("one no-op middleware", "noop_mw", "plain"),
    ("the middleware layer alone", "noop_mw", "other_mw"),
    ("a mounted call", "mounted", "child"),
)
TARGET_US = 2.0
BATCH = 2000


def build(case: str) -> tuple[Any, str]:
    """The server of *case* and the name its echo is called by."""
    from mcpkit import Server

    def echo_server(name: str) -> Any:
        server = Server(name, "1.0.0")

        @server.tool
        async def echo(text: str) -> str:
            """Return the text unchanged."""
            return text

        return server

    server = echo_server("bench")
    if case == "plain" or case == "child":
        return server, "echo"
    if case in ("noop_mw", "other_mw"):

        async def noop(call: Any, call_next: Any) -> Any:
            return await call_next(call)

        server.add_middleware(noop, methods=["prompts/get"] if case == "other_mw" else None)
        return server, "echo"
    if case == "mounted":
        parent = Server("parent", "1.0.0")
        parent.mount(server, namespace="x")
        return parent, "x__echo"
    raise ValueError(f"unknown case {case!r}")


def scope_of(era: str) -> tuple[Any, Any, dict[str, Any]]:
    """A connection past its handshake (or none needed), and the request ``_meta`` of *era*."""
    from mcpkit import Notification, Request, ServerConnection

    conn = ServerConnection()
    if era == "modern":
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        }
        return conn, None, meta
    init = {
        "protocolVersion": HANDSHAKE_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "1"},
    }
    conn.admit(Request(id=0, method="initialize", params=init))
    conn.initialize_answered(ok=True)
    conn.notification_received(Notification(method="notifications/initialized"))
    return conn, None, {}


async def per_call_us(server: Any, tool: str, era: str, seconds: float) -> float:
    """CPU µs per ``tools/call`` of *tool* on *server* in *era*, over about *seconds*."""
    from mcpkit import Request

    conn, outbound, meta = scope_of(era)
    start = server.start

    async def batch(first: int) -> None:
        for rid in range(first, first + BATCH):
            params: dict[str, Any] = {"name": tool, "arguments": {"text": "hello, benchmark"}}
            if meta:
                params["_meta"] = meta
            request = Request(id=rid, method="tools/call", params=params)
            result = await start(request, conn.admit(request), outbound, conn)
            if result.get("isError"):
                raise RuntimeError(f"{tool} failed: {result}")

    await batch(1)  # warm-up, and a check that the call is answered
    calls, cpu, rid = 0, 0.0, BATCH + 1
    deadline = time.perf_counter() + seconds
    gc.collect()
    while not calls or time.perf_counter() < deadline:  # one batch at least
        before = time.process_time()
        await batch(rid)
        cpu += time.process_time() - before
        calls += BATCH
        rid += BATCH
    return cpu / calls * 1e6


def python_calls(server: Any, tool: str, era: str) -> int:
    """How many Python functions one ``tools/call`` of *tool* on *server* in *era* enters (the
    request's own making left out), once warm: a count that is the same on every run."""
    from mcpkit import Request

    conn, outbound, meta = scope_of(era)

    def request(rid: int) -> Any:
        params: dict[str, Any] = {"name": tool, "arguments": {"text": "hello, benchmark"}}
        if meta:
            params["_meta"] = meta
        return Request(id=rid, method="tools/call", params=params)

    async def run() -> int:
        for rid in range(3):  # warm: routes found, handlers checked once
            first = request(rid)
            await server.start(first, conn.admit(first), outbound, conn)
        measured = request(99)
        scope = conn.admit(measured)
        entered = 0

        def count(frame: Any, event: str, arg: Any) -> None:
            nonlocal entered
            entered += event == "call"

        sys.setprofile(count)
        try:
            result = await server.start(measured, scope, outbound, conn)
        finally:
            sys.setprofile(None)
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed: {result}")
        return entered

    return asyncio.run(run())


def in_turn(items: Sequence[str], index: int) -> list[str]:
    shift = index % len(items)
    return [*items[shift:], *items[:shift]]


def measure(seconds: float, rounds: int, cases: Sequence[str]) -> dict[str, Any]:
    """Every case in both eras, *rounds* rounds in turn: ``{era: {case: median}}`` and the rows."""
    servers: dict[str, tuple[Any, str]] = {}
    errors: dict[str, str] = {}
    for case in cases:
        try:
            servers[case] = build(case)
        except Exception as exc:  # e.g. mount() not there yet: say so, measure the rest
            errors[case] = f"{type(exc).__name__}: {exc}"
    figures: dict[str, dict[str, list[float]]] = {era: {c: [] for c in servers} for era in ERAS}

    async def run() -> None:
        for index in range(rounds):
            for era in in_turn(list(ERAS), index):
                for case in in_turn(list(servers), index):
                    server, tool = servers[case]
                    figures[era][case].append(await per_call_us(server, tool, era, seconds))

    asyncio.run(run())
    out: dict[str, Any] = {"errors": errors, "rounds": figures, "medians": {}, "differences": {}}
    for era, by_case in figures.items():
        out["medians"][era] = {case: statistics.median(values) for case, values in by_case.items()}
        mid = out["medians"][era]
        out["differences"][era] = {
            name: mid[case] - mid[base] for name, case, base in DIFFERENCES if case in mid and base in mid
        }
    return out


def table(data: dict[str, Any]) -> list[str]:
    """The report's lines for *data* (what :func:`measure` returned)."""
    if not data:
        return []
    if "error" in data:
        return ["", f"**The framework's costs per call**: failed: {data['error']}"]
    lines = [
        "",
        "**The framework's costs per call** (`bench/framework.py`): the server's dispatch of `tools/call echo`, "
        "in process, CPU µs per call (median of the rounds).",
        "",
        "| | handshake era | 2026-07-28 | target |",
        "|---|---|---|---|",
    ]
    medians, differences = data["medians"], data["differences"]
    for case in medians.get("handshake", {}):
        cells = [f"{medians[era][case]:.2f}" for era in ERAS]
        lines.append(f"| `{case}` | {' | '.join(cells)} | |")
    for name, _, _ in DIFFERENCES:
        if name in differences.get("handshake", {}):
            cells = [f"{differences[era][name]:+.2f}" for era in ERAS]
            target = f"< {TARGET_US:g} µs" if name != "the middleware layer alone" else ""
            lines.append(f"| {name} | {' | '.join(cells)} | {target} |")
    for case, error in data.get("errors", {}).items():
        lines.append(f"| `{case}` | not measured: {error} | | |")
    return lines


async def bench_framework(seconds: float, rounds: int, log: Callable[[str], None]) -> dict[str, Any]:
    """``./dev bench``'s step: this script in a process of its own; its figures, or an error."""
    t0 = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--seconds", str(seconds), "--rounds", str(rounds), "--json",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await process.communicate()
    log(f"framework: done in {time.perf_counter() - t0:.1f} s")
    try:
        return json.loads(stdout)  # type: ignore[no-any-return]
    except ValueError:
        return {"error": f"exit {process.returncode}: {stderr.decode(errors='replace')[-500:]}"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="per case, era and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=CASES, default=list(CASES))
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--calls", action="store_true", help="count Python calls per call instead of timing")
    args = parser.parse_args(argv)
    if args.calls:
        for era in ERAS:
            counts = {case: python_calls(*build(case), era) for case in args.only}
            print(era, " ".join(f"{case}={count}" for case, count in counts.items()))
        return 0
    data = measure(args.seconds, args.rounds, args.only)
    if args.json:
        print(json.dumps(data))
    else:
        print("\n".join(table(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
