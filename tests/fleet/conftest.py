"""Fleet fixtures: a real ``redis-server`` (Debian's package) on 127.0.0.1, started per test session.

Tests that need it are skipped, saying why, when the binary is absent (``.ci/run`` installs it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from mcpkit.fleet.workers import local_redis

from ..conftest import free_port

SERVER = Path(__file__).with_name("fleet_server.py")


def wait_port(port: int, seconds: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Until 127.0.0.1:*port* accepts connections (fail after *seconds*, or when *proc* exits)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if proc is not None and proc.poll() is not None:
                pytest.fail(f"the process for port {port} exited with {proc.returncode}")
            if time.monotonic() > deadline:
                pytest.fail(f"nothing listens on 127.0.0.1:{port} after {seconds} s")
            time.sleep(0.05)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A redis-server of its own for this test session: ``redis://127.0.0.1:PORT/0`` (the one
    ``mcpkit run --redis auto`` starts)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    with local_redis() as url:
        yield url


NGINX_CONF = """
daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream mcp {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://mcp;
            # What event streams need: HTTP/1.1 to the nodes, nothing buffered, long reads.
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            # A node that is gone (killed, restarting): the request goes to the next one.
            proxy_next_upstream error timeout http_502;
        }}
    }}
}}
"""


@dataclass
class Fleet:
    """Three mcpkit nodes on one redis-server, behind nginx round-robin."""

    url: str  # the MCP endpoint through nginx
    nodes: list[subprocess.Popen[bytes]]
    ports: list[int]
    redis_url: str

    def node_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.ports[index]}/mcp"


def start_node(port: int, redis: str, *extra: str, server: Path = SERVER) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "mcpkit", "run", str(server), "--transport", "http",
               "--port", str(port), "--redis", redis, *extra]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_ready(port: int, proc: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the node on port {port} exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    pytest.fail(f"the node on port {port} was not ready after {seconds} s")


@contextlib.contextmanager
def nginx_in_front(ports: list[int]) -> Iterator[int]:
    """nginx round-robin over 127.0.0.1:*ports*; yields its port."""
    binary = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
    if binary is None:
        pytest.skip("nginx is not installed (apt-get install nginx; .ci/run does)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="mcpkit-nginx-") as tmp:
        servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=0;" for p in ports)
        conf = Path(tmp) / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp, servers=servers, port=port))
        proc = subprocess.Popen([binary, "-p", tmp, "-c", str(conf), "-e", f"{tmp}/error.log"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            wait_port(port, 60, proc)  # generous: start-up is not what the tests test
            yield port
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@contextlib.contextmanager
def fleet_of(redis_url: str, count: int = 3, server: Path = SERVER) -> Iterator[Fleet]:
    ports = [free_port() for _ in range(count)]
    nodes = [start_node(port, redis_url, server=server) for port in ports]
    try:
        for port, node in zip(ports, nodes, strict=True):
            wait_ready(port, node)
        with nginx_in_front(ports) as front:
            yield Fleet(f"http://127.0.0.1:{front}/mcp", nodes, ports, redis_url)
    finally:
        for node in nodes:
            if node.poll() is None:
                node.terminate()
        for node in nodes:
            try:
                node.wait(timeout=10)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()


@pytest.fixture(scope="session")
def fleet(redis_url: str) -> Iterator[Fleet]:
    """Three nodes and nginx, shared by the tests that leave them running."""
    with fleet_of(redis_url) as running:
        yield running


@pytest.fixture
def own_fleet(redis_url: str) -> Iterator[Fleet]:
    """Three nodes and nginx for one test alone: it may kill a node. (Shared by a module's tests, a
    node one test killed was missing in the next: the parallel runner may hand a worker a module's
    tests in another order than they are written, so no test can rely on running first.)"""
    with fleet_of(redis_url) as running:
        yield running


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The feature matrix through the fleet: its HTTP and HTTP+SSE cells only, less the tests that
    read the test server's per-process memory (see ``test_matrix_fleet``)."""
    from .test_matrix_fleet import PER_PROCESS

    kept, dropped = [], []
    for item in items:
        if item.module is not None and item.module.__name__.endswith("test_matrix_fleet"):
            cell = getattr(getattr(item, "callspec", None), "id", "")
            if cell.startswith("stdio-") or getattr(item, "originalname", "") in PER_PROCESS:
                dropped.append(item)
                continue
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
