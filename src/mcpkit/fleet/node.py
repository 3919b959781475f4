"""One process's membership of a fleet: joining the shared state, health and readiness.

The HTTP app's session strategy holds a :class:`Node` (:class:`~mcpkit.fleet.membership.Membership`). At start (the ASGI lifespan, or the first request when the app
is mounted where no lifespan runs) the node connects to the shared state and runs its join hooks
(the server fetches the shared ``requestState`` key, subscribes to change notifications, shares its
tasks). If the store cannot be reached the node keeps trying in the background: ``/healthz`` says
the process is alive all along, ``/readyz`` says 503 until it has joined, and MCP requests get 503
meanwhile rather than answers a fleet would not agree on.

Once joined, a node stays **ready** while the store is away (:meth:`Node.is_ready`): it still
serves every request that needs no shared state (2026-07-28 requests, the sessions it holds), and
what needs it gets a prompt 503 (:mod:`mcpkit.fleet.outage`); every node shares the one
store, so a balancer taking nodes out for its absence would take out the whole fleet and serve
nothing at all. ``/readyz`` says ``degraded`` then (still 200). A node is not ready before it has
joined and once it drains (shutting down).

Once joined, the node writes its **heartbeat** (``node:<id>``, every :data:`HEARTBEAT` seconds,
lapsing :data:`NODE_TTL` seconds after the last): how the others tell that it died (killed, its
machine gone) and take over or fail what it was doing: a request's stream (:mod:`.sessions`),
a task (:mod:`mcpkit.tasks`). A node leaving cleanly removes its heartbeat at once.

Without shared state (one process, everything in memory) the node has nothing to join and is
always ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Final

from .state import SharedState, ready

__all__ = ["HEARTBEAT", "NODE_TTL", "Node", "alive"]

logger = logging.getLogger("mcpkit.fleet")

#: How long a request (or the lifespan's startup) waits for the node to join before giving up.
JOIN_WAIT: Final = 5.0
_RETRY: Final = 1.0
#: A node's heartbeat: written every HEARTBEAT seconds, lapsing after NODE_TTL without one.
HEARTBEAT: Final = 1.0
NODE_TTL: Final = 3.0


def _heartbeat(node_id: str) -> str:
    return f"node:{node_id}"


async def alive(state: SharedState, node_id: str) -> bool:
    """Whether the node *node_id* has written its heartbeat in the last :data:`NODE_TTL` seconds."""
    return await state.get(_heartbeat(node_id)) is not None


class Node:
    """This process in its fleet (or alone, with *state* ``None``)."""

    def __init__(self, state: SharedState | None) -> None:
        self.state = state
        #: This process in the fleet: what its heartbeat and its claims name.
        self.id = secrets.token_hex(6)
        #: Coroutine functions run once the shared state answers, in order (the server's join).
        self.on_join: list[Callable[[], Awaitable[None]]] = []
        #: Run at shutdown, before the state is closed.
        self.on_leave: list[Callable[[], Awaitable[None]]] = []
        #: Run when shutdown begins, to end long-lived streams (the server's listen streams).
        self.on_drain: list[Callable[[], Awaitable[None]]] = []
        #: Shutting down: not ready any more.
        self.draining = False
        self.joined = state is None
        self._joining: asyncio.Task[None] | None = None
        self._beating: asyncio.Task[None] | None = None
        self._failed = asyncio.Event()  # the first attempt failed: waiting longer helps nobody

    def join(self) -> asyncio.Task[None] | None:
        """Start joining (once); the task that does it, or ``None`` with nothing to join."""
        if self.state is None:
            return None
        if self._joining is None:
            self._joining = asyncio.get_running_loop().create_task(self._join())
        return self._joining

    async def _join(self) -> None:
        assert self.state is not None
        hooks = list(self.on_join)
        while True:
            try:
                await self.state.start()
                if self._beating is None:  # first: what the hooks start may be judged by it
                    await self.state.put(_heartbeat(self.id), b"1", NODE_TTL)
                    self._beating = asyncio.get_running_loop().create_task(self._beat())
                while hooks:
                    await hooks[0]()
                    hooks.pop(0)  # done: a retry does not run it twice
            except Exception as exc:
                self._failed.set()
                logger.error("cannot join the fleet's shared state %r: %s; retrying", self.state, exc)
                await asyncio.sleep(_RETRY)
                continue
            self.joined = True
            logger.info("joined the fleet's shared state %r", self.state)
            return

    async def _beat(self) -> None:
        assert self.state is not None
        while True:
            await asyncio.sleep(HEARTBEAT)
            try:
                await self.state.put(_heartbeat(self.id), b"1", NODE_TTL)
            except Exception as exc:  # the store is away: the others may judge this node dead
                logger.warning("fleet heartbeat failed: %s", getattr(exc, "detail", exc))

    async def wait_joined(self, timeout: float = JOIN_WAIT) -> bool:
        """Whether the node has joined, waiting up to *timeout* seconds for its first attempt
        (not at all once an attempt failed: it goes on retrying in the background)."""
        task = self.join()
        if task is not None and not task.done() and not self._failed.is_set():
            failed = asyncio.ensure_future(self._failed.wait())
            await asyncio.wait({task, failed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            failed.cancel()
        return self.joined

    def is_ready(self) -> bool:
        """Whether this node takes new traffic: it has joined and is not draining (whether the
        store answers now is :meth:`degraded`'s business, not readiness: see the module)."""
        return self.joined and not self.draining

    async def degraded(self) -> bool:
        """Whether the shared state fails to answer now (within a second)."""
        return self.state is not None and not await ready(self.state)

    async def drain(self) -> None:
        """Shutdown begins: not ready from now on; end the long-lived streams (:attr:`on_drain`)."""
        self.draining = True
        for hook in self.on_drain:
            try:
                await hook()
            except Exception:
                logger.exception("a drain hook failed")

    async def leave(self) -> None:
        for hook in self.on_leave:
            try:
                await hook()
            except Exception:
                logger.exception("a shutdown hook failed")
        if self._joining is not None and not self._joining.done():
            self._joining.cancel()
            with contextlib.suppress(BaseException):
                await self._joining
        if self._beating is not None:
            self._beating.cancel()
            with contextlib.suppress(BaseException):
                await self._beating
            self._beating = None
        if self.state is not None:
            with contextlib.suppress(Exception):
                if self.joined:  # gone now: the others need not wait for the heartbeat to lapse
                    await self.state.delete(_heartbeat(self.id))
            with contextlib.suppress(Exception):
                await self.state.close()
