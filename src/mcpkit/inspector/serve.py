"""Running the inspector: bind the loopback port, print the address, watch the dev files, serve."""

from __future__ import annotations

import secrets
import socket
import sys
import webbrowser
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from .app import InspectorApp
from .targets import dev_command

__all__ = ["inspector_url", "run"]

HOST = "127.0.0.1"


def inspector_url(port: int, token: str) -> str:
    return f"http://{HOST}:{port}/?token={token}"


def run(
    spec: str | None,
    *,
    port: int = 0,
    open_browser: bool = True,
    watch: Sequence[Path] = (),
    reload: bool = True,
) -> None:
    """Serve the inspector until interrupted (blocking).

    Args:
        spec: the dev server, ``FILE.py[:OBJECT]`` (``None``: only other targets).
        port: the port on 127.0.0.1 (0: any free one).
        open_browser: open the page in the default browser; otherwise only print its address.
        watch: folders or files to watch besides the dev file's folder.
        reload: reconnect pages to the dev server when a watched ``.py`` file changes.
    """
    import uvicorn

    token = secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        raise SystemExit(f"mcpkit dev: cannot listen on {HOST}:{port}: {exc.strerror}") from None
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    port = int(sock.getsockname()[1])
    paths = [*([Path(spec.partition(":")[0]).resolve().parent] if spec else []), *watch]
    app = InspectorApp(
        token=token,
        port=port,
        dev=dev_command(spec) if spec else None,
        dev_label=spec,
        watcher=_watcher(paths) if reload and paths else None,
    )
    url = inspector_url(port, token)
    print(f"mcpkit dev: inspector at {url}", flush=True)
    if spec:
        print(f"mcpkit dev: serving {spec}, reloading when {', '.join(map(str, paths))} changes", flush=True)
    if open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", ws="none", timeout_graceful_shutdown=2, server_header=False
    )
    uvicorn.Server(config).run(sockets=[sock])


def _watcher(paths: list[Path]) -> Callable[[InspectorApp], Awaitable[None]]:
    async def watch(app: InspectorApp) -> None:
        from watchfiles import PythonFilter, awatch

        try:
            async for changes in awatch(*paths, watch_filter=PythonFilter()):
                files = sorted({Path(path).name for _, path in changes})
                print(f"mcpkit dev: {', '.join(files)} changed; reloading", file=sys.stderr, flush=True)
                app.reload(files)
        except Exception as exc:  # the inspector keeps serving; only reloading is lost
            print(f"mcpkit dev: stopped watching the files: {exc}", file=sys.stderr, flush=True)

    return watch
