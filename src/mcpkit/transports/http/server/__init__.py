"""Streamable HTTP and HTTP+SSE, server side: one ASGI app, a module per job.

:mod:`.app` admits and routes; :mod:`.stateless` answers 2026-07-28 requests; :mod:`.sessions` serves
handshake-era sessions through the one session layer (:class:`~mcpkit.session.Peer`); :mod:`.resume`
makes their event streams resumable; :mod:`.legacy_sse` is the 2024-11-05 HTTP+SSE transport. It
imports no server or client API, only the :class:`~mcpkit.kernel.Endpoint` contract, and never the
client side of HTTP. Importing the package imports none of them: the fleet's shared state uses
:mod:`.event_store` alone.
"""
