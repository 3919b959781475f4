"""Serving an ASGI app with uvicorn and mcpkit's bounds: blocking, or on the running event loop.

Either way the server ends as it should: on SIGTERM or SIGINT (or, on the running loop, when the
serving task is cancelled) new connections are refused, *drain* ends the long-lived streams (GET
and listen streams, whose clients reconnect), requests still running get *shutdown_timeout*
seconds, and the listening socket, the connections and the app's lifespan are closed. A cancelled
``uvicorn.Server.serve()`` would skip all that: its socket would stay open until the garbage
collector found it.

Proxy headers are believed only from the proxies named (*trusted_proxies*): believed from anyone,
``X-Forwarded-For`` would let every caller pick its own address, and so its own share of the
per-client limits. There is no ``Server`` header (it only advertises the stack) and no access log.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._uvicorn import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_KEEP_ALIVE,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_HEADER_COUNT,
    DEFAULT_SHUTDOWN_TIMEOUT,
    bounded_protocol,
)

if TYPE_CHECKING:
    import uvicorn

__all__ = ["serve", "serve_here"]

logger = logging.getLogger("mcpkit.http")


def serve(app: Any, *, sock: socket.socket | None = None, **options: Any) -> None:
    """Serve *app* until interrupted (blocking, on an event loop of its own); *sock*: serve this
    listening socket (shared by worker processes) instead of binding ``host`` and ``port``.
    *options* are :func:`server`'s."""
    server(app, **options).run(sockets=[sock] if sock is not None else None)


async def serve_here(app: Any, **options: Any) -> None:
    """Serve *app* on the running event loop (whose other work, such as a host's connections,
    goes on beside it) until interrupted or cancelled. *options* are :func:`server`'s."""
    running = server(app, **options)
    serving = asyncio.ensure_future(running.serve())
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        running.should_exit = True  # the shutdown described in the module, then CancelledError
        await asyncio.wait([serving])
        if not serving.cancelled():
            serving.exception()  # retrieved: the caller asked to stop, so it hears CancelledError
        raise


def server(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    max_header_count: int = DEFAULT_MAX_HEADER_COUNT,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    keep_alive_timeout: int = DEFAULT_KEEP_ALIVE,
    shutdown_timeout: int = DEFAULT_SHUTDOWN_TIMEOUT,
    trusted_proxies: Sequence[str] = (),
    drain: Callable[[], Awaitable[None]] | None = None,
) -> uvicorn.Server:
    """A uvicorn server of *app* with these bounds, which runs *drain* when it shuts down."""
    import uvicorn

    class DrainingServer(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            for listening in self.servers:
                listening.close()  # refuse new connections first, then end the streams
            if drain is not None:
                try:
                    await drain()
                except Exception:
                    logger.exception("draining the app failed")
            await super().shutdown(sockets)

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=bounded_protocol(max_header_bytes, header_timeout, max_header_count),
        timeout_keep_alive=keep_alive_timeout,
        timeout_graceful_shutdown=shutdown_timeout,
        log_level="warning",
        lifespan="on",
        proxy_headers=bool(trusted_proxies),
        forwarded_allow_ips=list(trusted_proxies) or None,
        server_header=False,
        access_log=False,  # never shown at this log level, but uvicorn formats each line first
    )
    return DrainingServer(config)
