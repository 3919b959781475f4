"""How a server is run: stdio, or HTTP under uvicorn (one process or several), or as an ASGI app."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from .lifespan import StartupError

if TYPE_CHECKING:
    from ._transport import Transport
    from .fleet import SharedState
    from .fleet.sessions import SessionFleet
    from .transports.http.server.local import LocalStrategy

__all__ = ["Entrypoints", "run_async"]


class Entrypoints:
    """Part of :class:`~mcpkit.LowLevelServer`: its ``run``, ``http_app`` and ``serve_stdio``."""

    if TYPE_CHECKING:
        info: Any
        telemetry: Any

        async def serve(self, transport: Transport) -> None: ...

        async def close_subscriptions(self) -> None: ...

        async def join_fleet(self, state: Any, node: str | None = None) -> None: ...

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        max_header_bytes: int = 64 * 1024,
        max_header_count: int = 100,
        header_timeout: float = 10.0,
        keep_alive_timeout: int = 5,
        trusted_proxies: Sequence[str] = (),
        workers: int = 1,
        **http_options: Any,
    ) -> None:
        """Serve over *transport* (blocking): ``"stdio"`` until the client goes away, or ``"http"``
        (Streamable HTTP at ``http://host:port/mcp``, served by uvicorn) until interrupted.

        For HTTP, *max_header_bytes* bounds a request's head and *max_header_count* its header
        fields (431 and the connection closed beyond either), *header_timeout* the seconds it may
        take to arrive (then 408), and *keep_alive_timeout* how long an idle connection is kept.
        *trusted_proxies* (addresses or networks, ``"*"`` for any) are believed when they say who
        the client is (``X-Forwarded-For``), so per-client limits count clients, not the proxy.
        *workers* > 1 serves the port from that many processes sharing their state through
        ``redis=`` (a URL, or ``"auto"``: a ``redis-server`` of their own, started and stopped with
        them; see :mod:`mcpkit.fleet.workers`).
        *http_options* go to :meth:`http_app` (``allowed_hosts``, ``max_sessions``, ``body_timeout``,
        ``redis``...)."""
        if transport == "stdio":
            try:
                run_async(self.serve_stdio())
            except StartupError as exc:  # one line, not a traceback, for whoever started us
                raise SystemExit(f"mcpkit: {exc}") from None
        elif transport == "http":
            from .fleet.workers import serve_workers
            from .transports.http.server.serving import serve

            def serve_one(sock: Any = None) -> None:
                app = self.http_app(**http_options)
                serve(
                    app,
                    host=host,
                    port=port,
                    max_header_bytes=max_header_bytes,
                    max_header_count=max_header_count,
                    header_timeout=header_timeout,
                    keep_alive_timeout=keep_alive_timeout,
                    trusted_proxies=trusted_proxies,
                    sock=sock,
                    drain=app.drain,
                )

            if workers <= 1 and http_options.get("redis") != "auto":
                serve_one()
            else:
                serve_workers(workers, host, port, http_options, serve_one)
        else:
            raise ValueError(f"unknown transport {transport!r}; expected 'stdio' or 'http'")

    def http_app(self, *, redis: str | None = None, **options: Any) -> Any:
        """This server as an ASGI app (see :class:`mcpkit.transports.http.StreamableHTTPApp`
        for the options); mount it in any ASGI framework.

        *redis* (``redis://host:6379/0``) makes it one node of a fleet whose state is kept there
        (``pip install 'mcpkit[redis]'``): give every node the same URL and put them behind any
        load balancer (see ``docs/deployment.md``). ``state=`` takes any
        :class:`~mcpkit.fleet.SharedState` instead."""
        from .transports.http.server.app import StreamableHTTPApp

        state = options.pop("state", None)
        if redis is not None:
            from .fleet import open_state

            state = open_state(redis, prefix=f"mcpkit:{self.info.name}:")
        strategy: LocalStrategy | SessionFleet
        if state is None:
            from .transports.http.server.local import LocalStrategy

            strategy = LocalStrategy()
        else:
            strategy = self._fleet_strategy(state)
            if options.get("event_store") is None:  # resumable streams' events: replayed anywhere
                options["event_store"] = state.events
        strategy.on_drain.append(self.close_subscriptions)
        server: Any = self  # a LowLevelServer: the Endpoint the app serves
        return StreamableHTTPApp(server, strategy=strategy, telemetry=self.telemetry, **options)

    def _fleet_strategy(self, state: SharedState) -> SessionFleet:
        """The session strategy of one node of the fleet sharing *state*: the node joins it at
        start, and the server with it (its ``requestState`` key, change notifications, tasks)."""
        from .fleet.node import Node
        from .fleet.sessions import SessionFleet

        node = Node(state)
        server: Any = self  # a LowLevelServer: the Endpoint the fleet restores sessions on
        strategy = SessionFleet(state, server, node)

        async def join() -> None:
            await self.join_fleet(state, node.id)

        node.on_join.append(join)  # after the strategy's own: its claims are present first
        return strategy

    async def serve_stdio(self) -> None:
        """Serve this process's stdin/stdout (see :mod:`mcpkit.transports.stdio`)."""
        from .transports.stdio import StdioServerTransport

        if self.telemetry is not None:  # what this task's spans say, and the handlers' it starts
            self.telemetry.serving("pipe")
        await self.serve(await StdioServerTransport.open())


def run_async(main: Coroutine[Any, Any, None]) -> None:
    """Run *main* on uvloop where it is installed, else on the standard loop."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        asyncio.run(main)
        return
    uvloop.run(main)
