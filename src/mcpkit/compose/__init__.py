"""Servers made of other servers: mounted servers, proxies, and servers built from OpenAPI documents.

:class:`Server` (exported as :class:`mcpkit.Server`) adds the constructors ``Server.proxy``,
``Server.from_openapi`` and ``Server.from_fastapi``; mounting, middleware and transforms are the
server's own (:mod:`mcpkit.server`). The proxy and OpenAPI machinery load on first use.
"""

from .server import Server

__all__ = ["Server"]
