"""Listeners: whom a server tells about changes, each with a queue and a writer of its own.

A listener is a handshake-era session (list changes on its GET stream or stdio) or a 2026-07-28
``subscriptions/listen`` stream (its notifications stamped with the listen request's id). A change
is offered to every listener at once and sent by each listener's own task, so a client that does
not read holds up nobody else; past :data:`LISTENER_QUEUE` waiting changes, more are dropped and
logged (the same change already waiting is not queued twice).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any, Final

from . import _jsonrpc as jsonrpc
from ._connection import META_SUBSCRIPTION_ID
from ._errors import ConnectionClosed
from .kernel import Outbound

__all__ = ["LISTENER_QUEUE", "Listener"]

logger = logging.getLogger("mcpkit.server")

#: Distinct change notifications that may wait for one slow listener (see Listener.offer).
LISTENER_QUEUE: Final = 1024


@dataclass(eq=False, slots=True)
class Listener:
    """Someone to tell about changes: a handshake-era session, or a 2026-07-28 listen stream."""

    peer: Outbound
    #: List kinds ("tools", "prompts", "resources") whose list_changed notifications it wants.
    kinds: set[str] = field(default_factory=set)
    #: Resource URIs whose notifications/resources/updated it wants.
    uris: set[str] = field(default_factory=set)
    #: The subscriptions/listen request id (stateless era), stamped on every notification.
    subscription_id: jsonrpc.RequestId | None = None
    #: Change notifications that may wait for a listener that is slow to take them; beyond it they
    #: are dropped (and logged). They are distinct: one already waiting is not queued twice.
    limit: int = LISTENER_QUEUE
    _queue: collections.deque[tuple[str, dict[str, Any]]] = field(
        default_factory=collections.deque, repr=False
    )
    _waiting: set[tuple[str, str | None]] = field(default_factory=set, repr=False)
    _writer: asyncio.Task[None] | None = field(default=None, repr=False)

    def offer(self, method: str, params: dict[str, Any]) -> None:
        """Send a change notification without waiting for this listener: it is queued, and a task
        of the listener's own sends what is queued (a slow listener holds up nobody else)."""
        key = (method, params.get("uri"))
        if key in self._waiting:
            return  # the same change is still waiting to be told: once is enough
        if len(self._queue) >= self.limit:
            logger.warning("dropping %s for a listener that has %d notifications waiting", method, self.limit)
            return
        self._waiting.add(key)
        self._queue.append((method, params))
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            while self._queue:
                method, params = self._queue.popleft()
                self._waiting.discard((method, params.get("uri")))
                await self.send(method, params)
                # One at a time: the transport's own writer takes each before the next, so only a
                # client that does not read fills the transport's queue, never a burst.
                await asyncio.sleep(0)
        except Exception:
            logger.exception("telling a listener about a change failed")
        finally:
            self._writer = None

    async def send(self, method: str, params: dict[str, Any]) -> None:
        # A listen stream's notifications belong to its request (its HTTP response stream); a
        # session's belong to no request (its GET stream).
        if self.subscription_id is not None:
            params = {**params, "_meta": {META_SUBSCRIPTION_ID: self.subscription_id}}
        with contextlib.suppress(ConnectionClosed, OSError):
            await self.peer.notify(method, params, related=self.subscription_id)
