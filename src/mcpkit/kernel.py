"""What a transport needs of a server, and what a handler needs of the way back: two small contracts.

Data flows one way: a transport turns bytes into messages and hands them to the server through
:class:`Endpoint`; the server answers through :class:`Outbound`. Transports therefore never import
the server (``lowlevel``, ``server``) and the server never learns which transport it is on.

* A connection with a session (stdio, a handshake-era HTTP session, an HTTP+SSE stream) is
  :meth:`Endpoint.connect`-ed once: the server gives back a :class:`ServerSession` whose
  :class:`~mcpkit.session.Peer` the transport feeds, by its read loop or message by message.
* A 2026-07-28 request over HTTP has no session: the transport admits it and calls
  :meth:`Endpoint.handle` once, passing an :class:`Outbound` for whatever the handler sends before
  its result. It is the same dispatch every ``Peer`` runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol

from ._connection import Scope, ServerConnection
from ._jsonrpc import Request, RequestId
from ._transport import Transport
from .session import Peer

__all__ = ["Endpoint", "InProcess", "Outbound", "ServerSession"]


class Outbound(Protocol):
    """The way back to the client that a handler's :class:`~mcpkit.Context` writes to.

    *related* names the request being handled, so a transport with one stream per request (HTTP)
    puts the message on that request's stream; ``None`` means the message belongs to no request.
    """

    @property
    def closed(self) -> asyncio.Event:
        """Set once the client can no longer be reached."""
        ...

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related: RequestId | None = None
    ) -> None: ...

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        related: RequestId | None = None,
    ) -> Any: ...

    async def close_response_stream(self, related: RequestId) -> None: ...


@dataclass(eq=False, slots=True)
class ServerSession:
    """One connection's conversation with the server: its lifecycle and its JSON-RPC endpoint."""

    peer: Peer
    connection: ServerConnection


class Endpoint(Protocol):
    """A server as transports see it (implemented by :class:`~mcpkit.LowLevelServer`)."""

    def connect(self, transport: Transport) -> ServerSession:
        """Start a conversation over *transport*; feed its peer, then :meth:`disconnect`."""
        ...

    def disconnect(self, session: ServerSession) -> None:
        """The conversation is over: stop telling it about changes, fail what waits on it."""
        ...

    async def handle(self, request: Request, scope: Scope, outbound: Outbound, conn: ServerConnection) -> Any:
        """Run one admitted request to its result (raises ``RPCError`` for an error answer)."""
        ...

    def start(
        self, request: Request, scope: Scope, outbound: Outbound, conn: ServerConnection
    ) -> Awaitable[Any]:
        """:meth:`handle`, started by the shortest way the server has: await it for the same result."""
        ...

    def mirrored_parameters(self, tool: str) -> dict[str, tuple[str, ...]]:
        """``{header: argument path}`` of a tool's ``x-mcp-header`` parameters."""
        ...

    async def start_serving(self) -> None:
        """Serving begins: enter the server's lifespan (raises ``mcpkit.lifespan.StartupError``)."""
        ...

    async def stop_serving(self) -> None:
        """Serving ends: exit the server's lifespan."""
        ...


class InProcess(Protocol):
    """A server a client can serve in its own process (``Client(server)``): one connection over
    *transport*, until the client closes it."""

    async def serve(self, transport: Transport) -> None: ...

    async def start_serving(self) -> None: ...

    async def stop_serving(self) -> None: ...
