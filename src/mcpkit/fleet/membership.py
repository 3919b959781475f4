"""The process's side of the fleet's session strategy: its guard, its lifespan and its readiness.

:class:`Membership` is what :class:`~mcpkit.fleet.sessions.SessionFleet` adds to the HTTP app
about this process as one node of the fleet (:class:`~mcpkit.fleet.node.Node`), at the points
:class:`~mcpkit.transports.http.server.seams.SessionStrategy` names:

* :meth:`~Membership.guard` wraps each request: until the node has joined its shared state, a probe
  is answered and anything else waits for the join (503 if it fails); after, a request the shared
  state cannot serve now gets 503 and ``Retry-After`` (:mod:`.outage`);
* :meth:`~Membership.start`, :meth:`~Membership.drain` and :meth:`~Membership.stop` are the node's
  join, drain and leave;
* :meth:`~Membership.readiness` is ``/readyz``: 503 before the join and once draining, 200
  otherwise, ``degraded`` while the store does not answer (see :mod:`.node` for why that is still
  ready).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from ..transports.http.server._asgi import Receive, Scope, Send, path_of
from ..transports.http.server.health import HEALTH_PATHS, answer_probe
from ..transports.http.server.seams import Handler
from .node import Node
from .outage import answer_outages, unavailable

__all__ = ["DEGRADED", "Membership"]

#: The body of a ready node whose shared state does not answer now.
DEGRADED: Final = b"degraded: the shared state cannot be reached; serving what needs none"


class Membership:
    """This process as one node of a fleet, as the HTTP app asks about it."""

    def __init__(self, node: Node) -> None:
        self.process = node

    @property
    def on_drain(self) -> list[Callable[[], Awaitable[None]]]:
        """Run when shutdown begins, to end long-lived streams (the server's listen streams)."""
        return self.process.on_drain

    def guard(self, handler: Handler) -> Handler:
        node = self.process

        async def joined(scope: Scope, receive: Receive, send: Send) -> None:
            if not node.joined:
                path = path_of(scope)
                if path in HEALTH_PATHS:
                    await answer_probe(self.readiness, path, scope["method"], send)
                    return
                if not await node.wait_joined():
                    await unavailable(send)
                    return
            await handler(scope, receive, send)

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            # While its shared state is away, 503 rather than 500.
            await answer_outages(joined, scope, receive, send)

        return guarded

    async def start(self) -> None:
        await self.process.wait_joined()

    async def drain(self) -> None:
        await self.process.drain()

    async def stop(self) -> None:
        await self.process.leave()

    async def readiness(self) -> tuple[int, bytes]:
        node = self.process
        if node.draining:
            return 503, b"not ready: shutting down"
        if not node.is_ready():
            return 503, b"not ready: the shared state has not been reached yet"
        if await node.degraded():
            return 200, DEGRADED
        return 200, b"ok"
