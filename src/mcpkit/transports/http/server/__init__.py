"""Streamable HTTP and HTTP+SSE, server side: one ASGI app, a module per job.

:mod:`.app` checks what HTTP adds (path, Host, Origin, CORS, rate, token); :mod:`.routing` takes an
admitted request by era and method to its answer; :mod:`.stateless` answers 2026-07-28 requests;
:mod:`.sessions` serves handshake-era sessions through the one session layer
(:class:`~mcpkit.session.Peer`), :mod:`.streams` carries a POST's answer, :mod:`.admission` caps
what a session takes in, and :mod:`.resume` makes their event streams resumable; :mod:`.legacy_sse`
is the 2024-11-05 HTTP+SSE transport. Where sessions live and what telemetry hears are handed in
(:mod:`.seams`; a process alone: :mod:`.local`). It imports no server or client API, only the
:class:`~mcpkit.kernel.Endpoint` contract, never the client side of HTTP, the fleet or telemetry.
Importing the package imports none of them: the fleet's shared state uses :mod:`.event_store` and
:mod:`.seams` alone.
"""
