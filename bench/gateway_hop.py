"""The gateway hop: what ``mcpkit gateway --transport http`` adds to a call, beside fastmcp's proxy.

    python gateway_hop.py [--seconds S] [--rounds N] [--only NAME,...] [--short] [--json PATH]
                          [--baseline SRC]

One mcpkit echo server (``servers/mcpkit_server.py``) is the upstream, over stdio or Streamable
HTTP. One caller (mcpkit's ``Client``, 2026-07-28, over HTTP) calls ``echo`` one call at a time:

- ``direct_stdio`` / ``direct_http``: the caller reaches the upstream itself (its own stdio child,
  or the HTTP server);
- ``gateway_stdio`` / ``gateway_http``: through ``mcpkit gateway --transport http``;
- ``fastmcp_stdio`` / ``fastmcp_http``: through fastmcp's ``create_proxy(...).run("http")``;
- ``keyed_stdio``: through the gateway to a handshake-era upstream, the caller declaring
  elicitation and naming its session in ``_meta`` (``io.mcpkit/session``), against
  ``gateway_stdio`` (same upstream, no callbacks declared, as ``gateway_stdio_handshake``).

Per row: p50 latency, and the proxy process's own CPU per call (``/proc/PID/stat`` user+system of
the gateway or proxy process alone, its children not counted; for ``direct_http``, the upstream
server's own, which is what answering over HTTP costs at the least). The rows take turns in rounds (the
machine's speed moves) and each figure is the median of its rounds; ``added_p50_us`` is a row's
p50 less its direct row's in the same round; ``caller_cpu_us`` is the calling client's own CPU
(this process). Each round states the gateway's targets (its own CPU per forwarded call at most
120 us, added p50 at most 150 us) for both upstreams, beside each one's floor in that round
(``floor_cpu_us``, ``floor_added_p50_us``: see :func:`_floors`; the caller runs on uvloop, as
the gateway does), which no forwarder built of this HTTP server and this client can go below.

``--baseline SRC`` runs the gateway rows a second time from another source tree (``SRC`` is put
first on ``PYTHONPATH``; rows ``gateway_stdio@baseline``...), in the same rounds, for a before and
after measured side by side. ``--short`` is a smoke run (one brief round, no fastmcp).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import uvloop

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SERVER = BENCH / "servers" / "mcpkit_server.py"
PY = sys.executable
TICK = os.sysconf("SC_CLK_TCK")
CPU_TARGET_US, ADDED_TARGET_US = 120.0, 150.0
FASTMCP_PROXY = """
import sys
from fastmcp.server import create_proxy
target = sys.argv[2] if sys.argv[2].startswith("http") else {"mcpServers": {"up": {"command": sys.argv[2], "args": sys.argv[3:]}}}
create_proxy(target, name="proxy").run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False, log_level="warning")
"""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu(pid: int) -> float:
    """The process's own user+system seconds (its children not counted)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _start(argv: list[str], port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    import socket

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{argv} did not listen on {port}")


async def _measure(
    client: Any, tool: str, seconds: float, pid: int | None, meta: dict[str, Any] | None
) -> dict[str, float]:
    params: dict[str, Any] = {"name": tool, "arguments": {"text": "hello"}}
    if meta:
        params["_meta"] = meta
    for _ in range(200):  # warm
        await client.request("tools/call", params)
    latencies: list[float] = []
    cpu0 = _cpu(pid) if pid else 0.0
    own0 = time.process_time()  # this process: the caller's client alone (a stdio child is apart)
    deadline = time.perf_counter() + seconds
    while (now := time.perf_counter()) < deadline:
        await client.request("tools/call", params)
        latencies.append(time.perf_counter() - now)
    own = time.process_time() - own0
    cpu = (_cpu(pid) - cpu0) if pid else 0.0
    return {
        "p50_us": statistics.median(latencies) * 1e6,
        "proxy_cpu_us": cpu / len(latencies) * 1e6 if pid else 0.0,
        "caller_cpu_us": own / len(latencies) * 1e6,
        "calls": len(latencies),
    }


async def _row(
    name: str, url: str | list[str], tool: str, seconds: float, pid: int | None, **client: Any
) -> dict[str, float]:
    from mcpkit import Client

    meta = client.pop("meta", None)
    async with Client(url, **client) as caller:
        deadline = time.monotonic() + 60
        while tool not in [t.name for t in await caller.list_tools()]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: no tool {tool}")
            await asyncio.sleep(0.2)
        return await _measure(caller, tool, seconds, pid, meta)


async def _accept(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="")
    parser.add_argument("--short", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--baseline", type=Path, help="another tree's src folder: its gateway too")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    if args.short:
        args.seconds, args.rounds, only = 0.3, 1, {"gateway"}
    tmp = Path(tempfile.mkdtemp(prefix="gateway-hop-"))
    stdio = [PY, "-m", "mcpkit", "run", str(SERVER)]
    up_port = _free_port()
    processes = [_start([*stdio, "--transport", "http", "--port", str(up_port)], up_port)]
    up_url, up_pid = f"http://127.0.0.1:{up_port}/mcp", processes[0].pid
    fronts: dict[str, tuple[str, int]] = {}

    def gateway(label: str, entry: dict[str, Any], src: Path | None = None) -> None:
        path = tmp / f"{label}.json"
        extra = {"audit": {"path": os.devnull}, "policy": {"default": "allow"}}
        path.write_text(json.dumps({"mcpServers": {"up": entry}, "mcpkit": extra}))
        port = _free_port()
        env = None if src is None else {**os.environ, "PYTHONPATH": str(src.resolve())}
        argv = [PY, "-m", "mcpkit", "gateway", str(path), "--transport", "http", "--port", str(port)]
        processes.append(_start(argv, port, env))
        fronts[label] = (f"http://127.0.0.1:{port}/mcp", processes[-1].pid)

    def fastmcp(label: str, target: list[str]) -> None:
        port = _free_port()
        processes.append(_start([PY, "-c", FASTMCP_PROXY, str(port), *target], port))
        fronts[label] = (f"http://127.0.0.1:{port}/mcp", processes[-1].pid)

    try:
        gateway("gateway_stdio", {"command": stdio[0], "args": stdio[1:]})
        gateway("gateway_http", {"url": up_url})
        if args.baseline is not None:
            gateway("gateway_stdio@baseline", {"command": stdio[0], "args": stdio[1:]}, args.baseline)
            gateway("gateway_http@baseline", {"url": up_url}, args.baseline)
        gateway(
            "gateway_stdio_handshake",
            {"command": stdio[0], "args": stdio[1:], "protocolVersion": "2025-11-25"},
        )
        if not only or "fastmcp" in only:
            fastmcp("fastmcp_stdio", stdio)
            fastmcp("fastmcp_http", [up_url])
        rows: dict[str, list[dict[str, float]]] = {}
        for _ in range(args.rounds):
            results: dict[str, dict[str, float]] = {}

            async def one_round(results: dict[str, dict[str, float]]) -> None:
                results["direct_stdio"] = await _row("direct_stdio", stdio, "echo", args.seconds, None)
                # Its proxy_cpu_us is the upstream server's own: what an HTTP front costs at the least.
                results["direct_http"] = await _row("direct_http", up_url, "echo", args.seconds, up_pid)
                for label, (url, pid) in fronts.items():
                    tool = "echo" if label.startswith("fastmcp") else "up__echo"
                    results[label] = await _row(label, url, tool, args.seconds, pid)
                url, pid = fronts["gateway_stdio_handshake"]
                results["keyed_stdio"] = await _row(
                    "keyed_stdio",
                    url,
                    "up__echo",
                    args.seconds,
                    pid,
                    elicitation=_accept,
                    meta={"io.mcpkit/session": "bench"},
                )

            # The caller on uvloop, as the gateway's own client is: the floors add like with like.
            uvloop.run(one_round(results))
            for label, figures in results.items():
                http = label.split("@")[0].endswith("_http")
                direct = results["direct_http" if http else "direct_stdio"]["p50_us"]
                if label == "keyed_stdio":
                    direct = results["gateway_stdio_handshake"]["p50_us"]
                figures["added_p50_us"] = figures["p50_us"] - direct
                figures["added_p50_vs_http_us"] = figures["p50_us"] - results["direct_http"]["p50_us"]
                if label.startswith("gateway_"):
                    figures.update(_floors(results, http))
                rows.setdefault(label, []).append(figures)
            print(
                json.dumps({k: {f: round(v, 1) for f, v in r.items()} for k, r in results.items()}),
                file=sys.stderr,
            )
            print(_targets(results), file=sys.stderr)
        table = {
            label: {key: round(statistics.median(r[key] for r in runs), 1) for key in runs[0]}
            for label, runs in rows.items()
        }
        print(json.dumps(table, indent=1))
        print(_targets(table))
        if args.json is not None:
            args.json.write_text(json.dumps(table, indent=1))
    finally:
        for process in processes:
            process.terminate()
            process.wait(10)


def _floors(results: dict[str, dict[str, float]], http: bool) -> dict[str, float]:
    """The least a gateway row can read in this round, from the direct rows' parts.

    CPU: the gateway answers the caller over HTTP (at the least what the upstream server itself
    spends answering over HTTP: ``direct_http``'s ``proxy_cpu_us``) and calls the upstream as a
    client does (the caller's own client CPU in the direct row of that transport). Added p50: the
    hop is one more call, so at the least one direct HTTP call's p50."""
    server = results["direct_http"]
    client = results["direct_http" if http else "direct_stdio"]
    return {
        "floor_cpu_us": server["proxy_cpu_us"] + client["caller_cpu_us"],
        "floor_added_p50_us": server["p50_us"],
    }


def _targets(rows: dict[str, dict[str, float]]) -> str:
    """Each gateway row against the targets, in words (a row missing: not measured)."""
    said = []
    for label in ("gateway_stdio", "gateway_http"):
        row = rows.get(label)
        if row is None:
            continue
        cpu, added = row["proxy_cpu_us"], row["added_p50_us"]
        said.append(
            f"{label}: CPU {cpu:.0f} us per call ({'holds' if cpu <= CPU_TARGET_US else 'misses'}"
            f" <= {CPU_TARGET_US:.0f}; floor {row['floor_cpu_us']:.0f}), added p50 {added:.0f} us"
            f" ({'holds' if added <= ADDED_TARGET_US else 'misses'} <= {ADDED_TARGET_US:.0f};"
            f" floor {row['floor_added_p50_us']:.0f})"
        )
    return "; ".join(said)


if __name__ == "__main__":
    main()
