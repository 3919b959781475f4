"""Fleet sizing: one mcpkit node vs three behind nginx on Redis (and one without Redis).

    .venv/bin/python bench/fleet.py              # about a minute; prints a markdown table
    .venv/bin/python bench/fleet.py --seconds 3  # shorter

Every setup serves ``bench/servers/mcpkit_server.py`` with ``mcpkit run --transport http`` and is
loaded by the benchmark's own generator (``bench/loadgen.py``: pre-encoded requests, no MCP
library) with *clients* concurrent clients calling ``echo`` back to back, in both eras: 2026-07-28
(each request stands alone) and 2025-11-25 (a session per client; behind round-robin, its requests
land on every node). Needs ``redis-server`` and ``nginx`` on the PATH (Debian packages).

The load generator runs on the same machine as the servers: on a small machine the figures say how
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
from collections.abc import Iterator
from pathlib import Path

import httpx
from loadgen import HANDSHAKE, MODERN, http_load, percentile

from mcpkit.transports.fleet.workers import local_redis

SERVER = Path(__file__).parent / "servers" / "mcpkit_server.py"

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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(port: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise SystemExit(f"the node on port {port} never became ready")


@contextlib.contextmanager
def nodes(count: int, redis: str | None) -> Iterator[list[int]]:
    ports = [free_port() for _ in range(count)]
    extra = ["--redis", redis] if redis else []
    command = [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http"]
    procs = [
        subprocess.Popen(
            [*command, "--port", str(p), *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for p in ports
    ]
    try:
        for port in ports:
            wait_ready(port)
        yield ports
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)


@contextlib.contextmanager
def nginx(ports: list[int]) -> Iterator[int]:
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-nginx-") as tmp:
        servers = "\n".join(f"        server 127.0.0.1:{p};" for p in ports)
        conf = Path(tmp) / "nginx.conf"
        conf.write_text(NGINX.format(tmp=tmp, servers=servers, port=port))
        proc = subprocess.Popen([binary, "-p", tmp, "-c", str(conf), "-e", f"{tmp}/error.log"])
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("nginx did not start") from None
                    time.sleep(0.05)
            yield port
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def measure(port: int, clients: int, seconds: float) -> dict[str, str]:
    row = {}
    for era, label in ((MODERN, "2026-07-28"), (HANDSHAKE, "2025-11-25")):
        asyncio.run(http_load("127.0.0.1", port, era, clients, 1.0))  # warm-up
        calls, elapsed, latencies = asyncio.run(http_load("127.0.0.1", port, era, clients, seconds))
        row[label] = f"{calls / elapsed:,.0f}/s (p50 {percentile(latencies, 0.5) / 1000:.1f} ms)"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    rows: list[tuple[str, dict[str, str]]] = []
    with nodes(1, None) as (port,):
        rows.append(("1 node, no Redis (memory)", measure(port, args.clients, args.seconds)))
    with local_redis() as redis:
        with nodes(1, redis) as (port,):
            rows.append(("1 node on Redis", measure(port, args.clients, args.seconds)))
            with nginx([port]) as front:
                rows.append(("1 node on Redis, behind nginx", measure(front, args.clients, args.seconds)))
        with nodes(3, redis) as ports, nginx(ports) as front:
            rows.append(("3 nodes on Redis, behind nginx", measure(front, args.clients, args.seconds)))
    print(f"\n{args.clients} clients calling echo for {args.seconds:g} s each, on {os.cpu_count()} CPUs\n")
    print("| setup | 2026-07-28 (stateless) | 2025-11-25 (sessions) |")
    print("|---|---|---|")
    for name, row in rows:
        print(f"| {name} | {row['2026-07-28']} | {row['2025-11-25']} |")


if __name__ == "__main__":
    main()
