"""Fleet throughput: one mcpkit node vs three behind nginx on Redis (and one without Redis).

The fleet step of ``./dev bench`` (``./dev bench --only fleet`` runs it alone); ``python
bench/fleet.py [--seconds S] [--clients N]`` prints its table by itself.

Every setup serves ``bench/servers/mcpkit_server.py`` with ``mcpkit run --transport http`` and is
loaded by the benchmark's own generator (:mod:`loadgen`: pre-encoded requests, no MCP library) with
*clients* concurrent clients calling ``echo`` back to back, in both eras: 2026-07-28 (each request
stands alone) and 2025-11-25 (a session per client; behind round-robin, its requests land on every
node). The setups:

* one node, no Redis (everything in memory: the single-process default);
* one node on Redis (what the shared state costs a node);
* one node on Redis behind nginx (what the proxy costs);
* three nodes on Redis behind nginx (round-robin, no sticky sessions).

The setups on Redis need ``redis-server``, those behind nginx ``nginx`` (Debian packages); when one
is missing its setups are skipped, and the report says why. Before timing, each setup must answer
``tools/list``, ``echo`` and ``add`` correctly in both eras.

The load generator runs on the same machine as the servers: on a small machine the figures say what
the fleet machinery costs, not how a fleet scales across machines (see docs/deployment.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadgen
from loadgen import HANDSHAKE, MODERN, BenchError

SERVER = Path(__file__).resolve().parent / "servers" / "mcpkit_server.py"
HOST = "127.0.0.1"
#: The setups, in the report's order: (key, label, nodes, on Redis, behind nginx).
SETUPS = (
    ("memory", "1 node, no Redis (memory)", 1, False, False),
    ("redis", "1 node on Redis", 1, True, False),
    ("redis-nginx", "1 node on Redis, behind nginx", 1, True, True),
    ("fleet", "3 nodes on Redis, behind nginx", 3, True, True),
)

NGINX = """
daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream mcp {{
{servers}
        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 1h;
        }}
    }}
}}
"""


def missing() -> dict[str, str]:
    """What each kind of setup lacks on this machine: ``{"redis": why, "nginx": why}`` (empty: nothing)."""
    out = {}
    if shutil.which("redis-server") is None:
        out["redis"] = "redis-server is not installed (apt-get install redis-server)"
    if _nginx() is None:
        out["nginx"] = "nginx is not installed (apt-get install nginx)"
    return out


def _nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)


def wait_ready(port: int, proc: subprocess.Popen[bytes], seconds: float = 30) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"the node on port {port} exited with code {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://{HOST}:{port}/readyz", timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise BenchError(f"the node on port {port} never became ready")


@contextlib.contextmanager
def nodes(
    count: int, redis: str | None, log: Any = subprocess.DEVNULL
) -> Iterator[list[tuple[subprocess.Popen[bytes], int]]]:
    """*count* ``mcpkit run`` nodes (on *redis* if given), ready; yields each one's process and port."""
    ports = [loadgen.free_port() for _ in range(count)]
    extra = ["--redis", redis] if redis else []
    # Every session of the benchmark comes from 127.0.0.1: lift the per-address cap.
    command = [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http",
               "--max-sessions-per-client", "100000"]  # fmt: skip
    procs = [subprocess.Popen([*command, "--port", str(p), *extra], stdout=log, stderr=log) for p in ports]
    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_ready(port, proc)
        yield list(zip(procs, ports, strict=True))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def nginx(ports: list[int]) -> Iterator[int]:
    """nginx round-robin over 127.0.0.1:*ports*; yields its port."""
    binary = _nginx()
    if binary is None:
        raise BenchError("nginx is not installed")
    port = loadgen.free_port()
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-nginx-") as tmp:
        servers = "\n".join(f"        server {HOST}:{p};" for p in ports)
        conf = Path(tmp) / "nginx.conf"
        conf.write_text(NGINX.format(tmp=tmp, servers=servers, port=port))
        proc = subprocess.Popen([binary, "-p", tmp, "-c", str(conf), "-e", f"{tmp}/error.log"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection((HOST, port), timeout=0.2).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise BenchError("nginx did not start") from None
                    time.sleep(0.05)
            yield port
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@contextlib.contextmanager
def _log_file(folder: Path | None) -> Iterator[Any]:
    """Where the nodes' output goes: *folder*/fleet.log, or nowhere."""
    if folder is None:
        yield subprocess.DEVNULL
        return
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "fleet.log", "wb") as file:
        yield file


async def measure(
    port: int, pids: list[int], clients: int, seconds: float, warmup: float
) -> dict[str, float]:
    """Both eras through *port*: calls/s, p50/p99 µs, and the nodes' CPU (all of them) per call."""
    row: dict[str, float] = {}
    for era in (MODERN, HANDSHAKE):
        await loadgen.check_http(HOST, port, era)
        await loadgen.http_load(HOST, port, era, clients, warmup)
        figures = await loadgen.http_figures(HOST, port, era, clients, seconds, pids)
        row.update((f"{era}_{name}", value) for name, value in figures.items())
    return row


async def bench_fleet(
    seconds: float,
    warmup: float,
    clients: int = 16,
    log: Callable[[str], None] = print,
    logs: Path | None = None,
) -> dict[str, Any]:
    """Every setup of :data:`SETUPS` this machine can run: ``{"clients", "seconds", "setups": [...]}``,
    each setup ``{"key", "label", "results"}`` or, skipped or failed, ``{"key", "label", "skipped" | "error"}``."""
    from mcpkit.fleet.workers import local_redis

    lacking = missing()
    out: dict[str, Any] = {"clients": clients, "seconds": seconds, "setups": []}
    with contextlib.ExitStack() as stack:
        redis: str | None = None
        if "redis" not in lacking:
            redis = stack.enter_context(local_redis())
        log_file = stack.enter_context(_log_file(logs))
        for key, label, count, on_redis, behind in SETUPS:
            entry: dict[str, Any] = {"key": key, "label": label}
            out["setups"].append(entry)
            why = [
                lacking[need]
                for need, wanted in (("redis", on_redis), ("nginx", behind))
                if wanted and need in lacking
            ]
            if why:
                entry["skipped"] = "; ".join(why)
                log(f"fleet: {label}: skipped, {entry['skipped']}")
                continue
            t0 = time.perf_counter()
            try:
                with nodes(count, redis if on_redis else None, log_file) as running:
                    ports = [port for _, port in running]
                    pids = [proc.pid for proc, _ in running]
                    with contextlib.ExitStack() as front:
                        port = front.enter_context(nginx(ports)) if behind else ports[0]
                        entry["results"] = await measure(port, pids, clients, seconds, warmup)
            except (BenchError, OSError, KeyError, ValueError) as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                log(f"fleet: {label}: failed: {entry['error']}")
                continue
            log(f"fleet: {label}: done in {time.perf_counter() - t0:.1f} s")
    return out


def errors(data: dict[str, Any]) -> list[str]:
    """The setups that failed (skipped ones are not failures)."""
    return [f"{s['label']}: {s['error']}" for s in data.get("setups", []) if "error" in s]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    data = asyncio.run(
        bench_fleet(args.seconds, 1.0, args.clients, log=lambda line: print(line, file=sys.stderr))
    )
    import report

    print(f"\n{os.cpu_count()} CPUs\n")
    print("\n".join(report.fleet_table(data)))


if __name__ == "__main__":
    main()
