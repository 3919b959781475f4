"""``mcpkit.Server``: the friendly server, with the constructors of servers made of others.

The composition layer stands above the server (it uses the client and the host), so the
classmethods that build a server from another one live on this subclass, which the package root
exports as :class:`mcpkit.Server`. What they build is this class too. Each imports its machinery
when first called: a plain stdio server never loads the host, the client or httpx for them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .. import server as _server

if TYPE_CHECKING:
    import httpx

    from .openapi import RouteMap

__all__ = ["Server"]


class Server(_server.Server):
    __doc__ = _server.Server.__doc__

    @classmethod
    def proxy(cls, target: Any, *, name: str | None = None, **client_options: Any) -> Server:
        """A server mirroring *target* (a command line, a URL, a :class:`~mcpkit.Client`, a
        server, or a host config dict with ``mcpServers``), in any revision on either side, with
        progress, logs, cancellation, sampling/elicitation/roots and list changes relayed; see
        :func:`mcpkit.compose.proxy.proxy` and ``docs/composition.md``."""
        from .proxy import proxy

        return cast("Server", proxy(target, name=name, server_type=cls, **client_options))

    @classmethod
    def from_openapi(
        cls,
        spec: Any,
        *,
        base_url: str | None = None,
        client: httpx.AsyncClient | None = None,
        name: str | None = None,
        route_maps: Sequence[RouteMap] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = 30.0,
        forward_headers: Collection[str] = (),
        **options: Any,
    ) -> Server:
        """A server with one tool per operation of the OpenAPI 3.0/3.1 document *spec* (a dict,
        a path or a URL); see :func:`mcpkit.compose.openapi.from_openapi` and ``docs/openapi.md``."""
        from .openapi import from_openapi

        return cast(
            "Server",
            from_openapi(
            spec, base_url=base_url, client=client, name=name, route_maps=route_maps,
            headers=headers, timeout=timeout, forward_headers=forward_headers, server_type=cls, **options,
            ),
        )  # fmt: skip

    @classmethod
    def from_fastapi(
        cls,
        app: Any,
        *,
        name: str | None = None,
        route_maps: Sequence[RouteMap] | None = None,
        headers: Mapping[str, str] | None = None,
        **options: Any,
    ) -> Server:
        """:meth:`from_openapi` of a FastAPI app, called in this process over ASGI; see
        :func:`mcpkit.compose.openapi.from_fastapi`."""
        from .openapi import from_fastapi

        built = from_fastapi(
            app, name=name, route_maps=route_maps, headers=headers, server_type=cls, **options
        )
        return cast("Server", built)
