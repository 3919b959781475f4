"""The probes a load balancer or an orchestrator asks: ``GET /healthz`` and ``GET /readyz``.

Answered before the Host and Origin checks (probes use addresses) and without a token:

* ``/healthz``, **liveness**: 200 ``ok`` for as long as the process serves HTTP at all. Restarting a
  process cannot bring its Redis back, so a store that is away never fails it.
* ``/readyz``, **readiness** (send this node new traffic?): 200 once the node has joined its fleet's
  shared state and until it starts draining (shutting down); 503 before and after. While the store
  cannot be reached it stays 200, with the body ``degraded: ...``: the node still serves what needs
  no shared state and answers the rest with a prompt 503 and ``Retry-After``, and since every node
  shares the one store, taking them out for its absence would take the whole fleet out
  (:mod:`mcpkit.fleet.node`). Without a fleet a process is ready from the start.
"""

from __future__ import annotations

from typing import Final

from ....fleet.node import Node
from ._asgi import Send, plain

__all__ = ["DEGRADED", "answer_probe"]

#: The body of a ready node whose shared state does not answer now.
DEGRADED: Final = b"degraded: the shared state cannot be reached; serving what needs none"


async def answer_probe(node: Node, path: str, method: str, send: Send) -> None:
    """Answer the probe at *path* (one of :data:`~mcpkit.fleet.node.HEALTH_PATHS`)."""
    if method not in ("GET", "HEAD"):
        await plain(send, 405, b"GET only")
    elif path == "/healthz":
        await plain(send, 200, b"ok")
    elif node.draining:
        await plain(send, 503, b"not ready: shutting down")
    elif not node.is_ready():
        await plain(send, 503, b"not ready: the shared state has not been reached yet")
    elif await node.degraded():
        await plain(send, 200, DEGRADED)
    else:
        await plain(send, 200, b"ok")
