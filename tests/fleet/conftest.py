"""Fleet fixtures: a real ``redis-server`` (Debian's package) on 127.0.0.1, started per test session.

Tests that need it are skipped, saying why, when the binary is absent (``.ci/run`` installs it).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest

from ..conftest import free_port


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
    """A redis-server of its own for this test session: ``redis://127.0.0.1:PORT/0``."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="mcpkit-redis-") as folder:
        proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                folder,
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_port(port, 10, proc)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            proc.wait(timeout=10)
