"""One ASGI app on one ASGI server, for comparing the servers (issue 16): the same app, the same port.

    python bench/asgi_servers.py SERVER APP PORT

SERVER is ``uvicorn`` (uvloop, httptools), ``granian`` (its Rust HTTP/1.1, uvloop, one worker,
one runtime thread; ``granian-rust-tasks``: with its own task implementation) or ``hypercorn`` (uvloop, h11); APP is ``mcpkit`` (the benchmark's mcpkit
server as the app ``mcpkit run --transport http`` serves, with uvicorn's stock protocol rather
than mcpkit's bounded one) or ``raw`` (the raw ASGI app of ``bench/servers/raw_server.py``).
granian and hypercorn are not dependencies of mcpkit: install them into a venv of their own, e.g.

    uv venv /tmp/asgi && VIRTUAL_ENV=/tmp/asgi uv pip install granian hypercorn uvicorn uvloop \\
        httptools orjson msgspec rich httpx pyyaml joserfc
    PYTHONPATH=src /tmp/asgi/bin/python bench/asgi_servers.py granian mcpkit 8000

and load them with ``bench/ab_http.py`` (``{port}`` in its commands).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).parent / "servers"


def mcpkit_app() -> Any:
    server = runpy.run_path(str(SERVERS / "mcpkit_server.py"))["server"]
    return server.http_app(max_sessions_per_client=100_000)


def raw_app() -> Any:
    return runpy.run_path(str(SERVERS / "raw_server.py"))["app"]


def main() -> None:
    server, which, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    target = f"asgi_servers:{which}_app"
    if server == "uvicorn":
        import uvicorn

        app = mcpkit_app() if which == "mcpkit" else raw_app()
        uvicorn.run(app, host="127.0.0.1", port=port, loop="uvloop", http="httptools", log_level="warning",
                    access_log=False, server_header=False)  # fmt: skip
    elif server in ("granian", "granian-rust-tasks"):
        from granian import Granian
        from granian.constants import HTTPModes, Interfaces, Loops, TaskImpl

        tasks = TaskImpl.rust if server == "granian-rust-tasks" else TaskImpl.asyncio

        sys.path.insert(0, str(Path(__file__).parent))
        Granian(target, address="127.0.0.1", port=port, interface=Interfaces.ASGI, workers=1, runtime_threads=1,
                loop=Loops.uvloop, task_impl=tasks, http=HTTPModes.http1, websockets=False, log_access=False, factory=True,
                working_dir=Path(__file__).parent).serve()  # fmt: skip
    elif server == "hypercorn":
        import asyncio

        import uvloop
        from hypercorn.asyncio import serve
        from hypercorn.config import Config

        config = Config()
        config.bind = [f"127.0.0.1:{port}"]
        config.loglevel = "WARNING"
        app = mcpkit_app() if which == "mcpkit" else raw_app()
        uvloop.install()
        asyncio.run(serve(app, config))  # type: ignore[arg-type]
    else:
        raise SystemExit(f"unknown server {server!r}")


if __name__ == "__main__":
    main()
