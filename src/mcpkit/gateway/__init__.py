"""``mcpkit gateway``: a :class:`~mcpkit.host.Host` served as one MCP server, to callers of every revision.

``gateway.server`` is a plain :class:`mcpkit.Server` with one forwarder per configured server
mounted under its key (:mod:`mcpkit.host._forward`), so everything a server does for its clients
(both eras, every transport, ``list_changed`` and ``subscriptions/listen``, results shaped per
revision, middleware, transforms) holds for the aggregate. Policy, consent (put to the calling user
with ``ctx.elicit``), rate limits and audit are ``tools/call`` middleware (:mod:`.governance`); the
config's renames are tool transforms; upstream questions are relayed by :mod:`mcpkit.host.bridge`.
The host keeps the connections: servers, sessions, restarts, status (see docs/host.md).
"""

from __future__ import annotations

from typing import Any

from ..compose.server import Server
from ..host import Host, HostConfig
from ..host.audit import AuditLog
from .governance import Governance, resolver

__all__ = ["Gateway", "serve"]


class Gateway(Host):
    """Serves *config*'s servers as one MCP server (``gateway.server``): a host served through it.

    ::

        gateway = Gateway(load_config("mcp.json"))
        async with gateway:                      # connects to the servers
            await gateway.server.serve_stdio()   # or gateway.server.http_app() in any ASGI server

    *host_options* go to the :class:`~mcpkit.host.Host`.
    """

    server: Server

    def __init__(self, config: HostConfig, *, name: str = "mcpkit-gateway", **host_options: Any) -> None:
        server = Server(name, instructions="Tools of several MCP servers, named SERVER__TOOL.")
        # Policy, consent, rate limits and audit: middleware around the calls, outermost.
        server.add_middleware(Governance(self, resolver(server)), methods=["tools/call"])
        super().__init__(config, **{"caller": "gateway", **host_options, "server": server})


def serve(
    config: HostConfig,
    *,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    audit: AuditLog | None = None,
    **options: Any,
) -> None:
    """Run a gateway for *config* until the caller goes away (stdio) or until interrupted (http).

    *audit* is where its audit lines go (default: the config's, as for a :class:`~mcpkit.host.Host`).
    """
    from ..lowlevel import run_async
    from ..transports.http.server.serving import serve_here

    host_options: dict[str, Any] = {"audit": audit} if audit is not None else {}
    gateway = Gateway(config, **host_options)

    async def main() -> None:
        async with gateway:
            if transport == "stdio":
                await gateway.server.serve_stdio()
                return
            app = gateway.server.http_app(**options)
            await serve_here(app, host=host, port=port, drain=app.drain)

    run_async(main())
