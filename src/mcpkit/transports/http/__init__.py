"""Streamable HTTP and HTTP+SSE, server side: one ASGI app, a module per era.

:mod:`.app` routes; :mod:`.stateless` answers 2026-07-28 requests; :mod:`.sessions` serves
handshake-era sessions through the one session layer (:class:`~mcpkit.session.Peer`);
:mod:`.resume` makes their event streams resumable; :mod:`.legacy_sse` is the 2024-11-05 HTTP+SSE
transport. Imported only when HTTP is used, so ``import mcpkit`` stays free of any HTTP stack; it
imports no server or client, only the :class:`~mcpkit.kernel.Endpoint` contract.
"""

from .app import DEFAULT_MAX_BODY, StreamableHTTPApp

__all__ = ["DEFAULT_MAX_BODY", "StreamableHTTPApp"]
