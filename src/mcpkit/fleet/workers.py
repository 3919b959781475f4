"""Several worker processes on one machine serving one port (``mcpkit run --workers N``).

The parent loads the server once, binds the listening socket, and forks *N* children that each run
their own event loop and app on that socket (the kernel hands each new connection to one of them).
They share their state through Redis, as the nodes of a fleet do: a URL, or ``auto``, a
``redis-server`` of their own that the parent starts on 127.0.0.1 (a free port, nothing saved to
disk) and stops when they are done.

Signals: SIGTERM to the parent is passed to every worker, each of which drains and stops (see
:mod:`mcpkit.transports.http.server.serving`); SIGINT from a terminal reaches the whole process group,
so the parent leaves it to them. The parent exits when every worker has.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["local_redis", "serve_workers"]

logger = logging.getLogger("mcpkit.fleet")


@contextlib.contextmanager
def local_redis(startup_seconds: float = 10.0) -> Iterator[str]:
    """A ``redis-server`` on 127.0.0.1 for as long as the block runs; yields its URL.

    Raises:
        RuntimeError: ``redis-server`` is not installed, or did not start.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError(
            "--redis auto starts redis-server, which is not installed (apt-get install redis-server)"
        )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="mcpkit-redis-") as folder:
        options = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        proc = subprocess.Popen(
            [binary, *options, "--dir", folder, "--loglevel", "warning"], stdout=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + startup_seconds
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the local redis-server did not start") from None
                    time.sleep(0.05)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve_workers(
    count: int, host: str, port: int, http_options: dict[str, Any], serve_one: Callable[[Any], None]
) -> None:
    """Serve *host*:*port* from *count* forked processes, each calling ``serve_one(sock)``; with
    ``http_options["redis"] == "auto"`` a local Redis is started first (and its URL put there)."""
    with contextlib.ExitStack() as stack:
        if http_options.get("redis") == "auto":
            http_options["redis"] = stack.enter_context(local_redis())
            logger.warning("mcpkit: workers share a local redis-server at %s", http_options["redis"])
        if count <= 1:
            serve_one(None)
            return
        sock = _listen(host, port)
        children: list[int] = []
        for _ in range(count):
            pid = os.fork()
            if pid == 0:  # a worker: its own event loop, app and Redis connections
                code = 0
                try:
                    serve_one(sock)
                except BaseException:
                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stderr.flush()
                    os._exit(code)
            children.append(pid)

        def forward(signum: int, frame: object) -> None:
            for child in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGTERM)

        signal.signal(signal.SIGTERM, forward)
        signal.signal(signal.SIGINT, lambda signum, frame: None)  # the terminal told them too
        for child in children:
            os.waitpid(child, 0)
        sock.close()
