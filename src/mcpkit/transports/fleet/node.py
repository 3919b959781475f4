"""One process's membership of a fleet: joining the shared state, health and readiness.

The HTTP app holds a :class:`Node`. At start (the ASGI lifespan, or the first request when the app
is mounted where no lifespan runs) the node connects to the shared state and runs its join hooks
(the server fetches the shared ``requestState`` key, subscribes to change notifications, shares its
tasks). If the store cannot be reached the node keeps trying in the background: ``/healthz`` says
the process is alive all along, ``/readyz`` says 503 until it has joined and while the store does
not answer, and MCP requests get 503 meanwhile rather than answers a fleet would not agree on.

Without shared state (one process, everything in memory) the node has nothing to join and is
always ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from .state import SharedState, ready

__all__ = ["HEALTH_PATHS", "Node"]

logger = logging.getLogger("mcpkit.fleet")

HEALTH_PATHS: Final = frozenset({"/healthz", "/readyz"})
#: How long a request (or the lifespan's startup) waits for the node to join before giving up.
JOIN_WAIT: Final = 5.0
_RETRY: Final = 1.0


class Node:
    """This process in its fleet (or alone, with *state* ``None``)."""

    def __init__(self, state: SharedState | None) -> None:
        self.state = state
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

    async def wait_joined(self, timeout: float = JOIN_WAIT) -> bool:
        """Whether the node has joined, waiting up to *timeout* seconds for its first attempt
        (not at all once an attempt failed: it goes on retrying in the background)."""
        task = self.join()
        if task is not None and not task.done() and not self._failed.is_set():
            failed = asyncio.ensure_future(self._failed.wait())
            await asyncio.wait({task, failed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            failed.cancel()
        return self.joined

    async def is_ready(self) -> bool:
        return self.joined and not self.draining and (self.state is None or await ready(self.state))

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
        if self.state is not None:
            with contextlib.suppress(Exception):
                await self.state.close()
