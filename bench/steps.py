"""The run's steps beside the servers' own: each a function and one row of :data:`STEPS`.

A step measures something other than the servers side by side (mcpkit's client, the fleet, the
framework's costs) and returns its figures as a dict, which ``run.py`` writes under the step's key
in ``results.json``. Adding one is a function ``async def bench_x(s, log) -> dict`` and a row::

    Step("x", selected_by=frozenset({"mcpkit", "x"}), run=bench_x)

``selected_by`` names the ``--only`` keys that run it (a run without ``--only`` runs every step);
``failures`` (optional) reads the step's figures for the failures ``run.py`` reports at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import loadgen
from measure import http_server
from peers import BENCH, HOST, LOGS, SERVERS, SHORT, Settings, peers
from rounds import medians, take_turns

Log = Callable[[str], None]


def _no_failures(data: dict[str, Any]) -> list[str]:
    return []


@dataclass(frozen=True)
class Step:
    """One step of the run: its figures go under ``results.json[key]``."""

    key: str
    selected_by: frozenset[str]  # the --only keys that run it
    run: Callable[[Settings, Log], Awaitable[dict[str, Any]]]
    failures: Callable[[dict[str, Any]], list[str]] = _no_failures

    def selected(self, only: Sequence[str] | None) -> bool:
        return not only or bool(self.selected_by.intersection(only))


async def bench_clients(s: Settings, log: Log) -> dict[str, Any]:
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


async def _run_script(script: str, s: Settings, log: Log) -> dict[str, Any]:
    """Run ``bench/SCRIPT`` at the settings' length, log what it prints and return the figures it
    writes with ``--json`` (or the error, if it exits badly or writes none)."""
    out = LOGS / script.replace(".py", ".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    mode = ["--short"] if s is SHORT else ["--seconds", "2", "--rounds", str(s.rounds)]
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(BENCH / script), *mode, "--json", str(out),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    stdout, _ = await process.communicate()
    if process.returncode != 0 or not out.exists():
        return {"error": f"{script} exited with {process.returncode}"}
    log(stdout.decode())
    figures: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return figures


async def bench_clients_http(s: Settings, log: Log) -> dict[str, Any]:
    """HTTP clients side by side against one mcpkit server (``bench/clients_http.py``): mcpkit's in
    both eras, the official SDK's, fastmcp's, the TypeScript SDK's, raw httpx and the floor loop."""
    return await _run_script("clients_http.py", s, log)


def _clients_http_failures(data: dict[str, Any]) -> list[str]:
    if "error" in data:
        return [f"clients_http: {data['error']}"]
    return [f"clients_http {k}: {v['error']}" for k, v in data.get("rows", {}).items() if "error" in v]


async def bench_gateway_hop(s: Settings, log: Log) -> dict[str, Any]:
    """What ``mcpkit gateway --transport http`` adds to a call over stdio and HTTP upstreams,
    beside fastmcp's proxy (``bench/gateway_hop.py``)."""
    return await _run_script("gateway_hop.py", s, log)


def _gateway_hop_failures(data: dict[str, Any]) -> list[str]:
    return [f"gateway_hop: {data['error']}"] if "error" in data else []


async def bench_fleet(s: Settings, log: Log) -> dict[str, Any]:
    """One mcpkit node without Redis, one on Redis, three on Redis behind nginx (``bench/fleet.py``)."""
    import fleet

    return await fleet.bench_fleet(
        0.1 if s is SHORT else 3.0, 0.05 if s is SHORT else 1.0, log=log, logs=LOGS
    )


async def bench_framework_step(s: Settings, log: Log) -> dict[str, Any]:
    """What one middleware and a mounted call cost (``bench/framework.py``)."""
    from framework import bench_framework

    return await bench_framework(0.02 if s is SHORT else 0.5, 1 if s is SHORT else 5, log)


def _client_failures(data: dict[str, Any]) -> list[str]:
    return [f"client {k}: {v['error']}" for k, v in data.items() if "error" in v]


def _fleet_failures(data: dict[str, Any]) -> list[str]:
    return [f"fleet {s['label']}: {s['error']}" for s in data.get("setups", []) if "error" in s]


def _framework_failures(data: dict[str, Any]) -> list[str]:
    return [f"framework: {data['error']}"] if "error" in data else []


#: The steps, in the order they run (after the servers' rounds).
STEPS: list[Step] = [
    Step("clients", frozenset({"mcpkit"}), bench_clients, _client_failures),
    Step("clients_http", frozenset({"mcpkit", "clients_http"}), bench_clients_http, _clients_http_failures),
    Step("fleet", frozenset({"fleet"}), bench_fleet, _fleet_failures),
    Step("gateway_hop", frozenset({"gateway"}), bench_gateway_hop, _gateway_hop_failures),
    Step("framework", frozenset({"mcpkit", "framework"}), bench_framework_step, _framework_failures),
]
