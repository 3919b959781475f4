"""The probes a load balancer or an orchestrator asks: ``GET /healthz`` and ``GET /readyz``.

Answered before the Host and Origin checks (probes use addresses) and without a token:

* ``/healthz``, **liveness**: 200 ``ok`` for as long as the process serves HTTP at all. Restarting a
  process cannot bring its Redis back, so a store that is away never fails it.
* ``/readyz``, **readiness** (send this process new traffic?): the app's session strategy says
  (:meth:`~.seams.SessionStrategy.readiness`). A process alone is ready from the start until it
  starts draining (shutting down), then 503; a node of a fleet is not ready before it has joined
  its shared state either, and stays ready, ``degraded``, while that state cannot be reached
  (:mod:`mcpkit.fleet.node` says why).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from ._asgi import Send, plain

__all__ = ["HEALTH_PATHS", "answer_probe"]

HEALTH_PATHS: Final = frozenset({"/healthz", "/readyz"})


async def answer_probe(
    readiness: Callable[[], Awaitable[tuple[int, bytes]]], path: str, method: str, send: Send
) -> None:
    """Answer the probe at *path* (one of :data:`HEALTH_PATHS`); *readiness* answers ``/readyz``."""
    if method not in ("GET", "HEAD"):
        await plain(send, 405, b"GET only")
    elif path == "/healthz":
        await plain(send, 200, b"ok")
    else:
        await plain(send, *await readiness())
