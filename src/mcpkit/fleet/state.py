"""The state a fleet of server processes shares: the store interface, and its in-process default.

One process serving alone keeps everything in memory and needs none of this. Several processes
behind a load balancer (``mcpkit run --redis URL`` on each, or ``--workers N``) must agree on a few
things, and :class:`SharedState` is what they agree through:

* **keys with expiry** (:meth:`~SharedState.get`, :meth:`~SharedState.put`): handshake-era
  session records, so a session opened on one node is served on any; task records, so a
  ``tasks/get`` lands on any node; the ``requestState`` sealing key, created once by whichever
  node comes first (:meth:`~SharedState.shared_secret`), so a multi round-trip retry opens on any
  node;
* **queues** (:meth:`~SharedState.push`, :meth:`~SharedState.pop_all`, :meth:`~SharedState.peek`):
  what waits for a session's GET stream, taken by whichever process holds that stream; the tasks
  of each requestor, read by ``tasks/list`` wherever it lands;
* **channels** (:meth:`~SharedState.publish`, :meth:`~SharedState.subscribe`): a list change or a
  resource update made on one node reaches the ``subscriptions/listen`` streams of every node, and
  a ``tasks/cancel`` or ``tasks/update`` reaches the node running the task;
* **event streams** (:attr:`~SharedState.events`, an :class:`~mcpkit.transports.http.server.event_store.EventStore`):
  the events of resumable SSE streams.

:class:`MemoryState` keeps all of it in this process (what the test suite runs the same tests on,
next to :class:`~mcpkit.fleet.redis_state.RedisState`). Values are bytes, channels carry
bytes; what they mean is their users' business.

When the store cannot be reached (Redis stopped, restarting, the network gone) every operation
raises :class:`StateUnavailable`, whatever the store's client raised: the one error the layers above
know. It is an :class:`~mcpkit.RPCError` (-32000, the code of every "try again later" answer), so a
handler it escapes answers the request with it rather than with an internal error, and the HTTP app
turns it into 503 with ``Retry-After`` wherever the response has not started
(:mod:`mcpkit.fleet.outage`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from ..transports.http.server.event_store import EventStore, MemoryEventStore
from ..transports.http.server.seams import Unavailable

__all__ = ["Listener", "MemoryState", "SharedState", "StateUnavailable", "Unsubscribe"]

logger = logging.getLogger("mcpkit.fleet")

#: Called with each message published on a channel it subscribed to (in the event loop; it must
#: not block, and what it schedules is its own business).
Listener = Callable[[bytes], None]
Unsubscribe = Callable[[], Awaitable[None]]


class StateUnavailable(Unavailable, ConnectionError):
    """The fleet's shared state cannot be reached now; the same request may succeed later.

    An ``RPCError`` (-32000) for the request it fails (the HTTP app's :class:`Unavailable`: 503 and
    ``Retry-After`` where the response has not started), and a ``ConnectionError`` for code that
    sends through the store: a message that cannot travel now is one more that cannot be sent (as
    over a transport that closed), not a bug. What the peer is told is generic (the store's address
    and its client's words stay in this process's log, in :attr:`detail`)."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("Service unavailable: the shared state cannot be reached, retry later")
        #: What the store's client said (logged, never sent).
        self.detail = detail


class SharedState(Protocol):
    """What the processes of one fleet share (see the module docstring)."""

    #: Where resumable streams' events are kept.
    events: EventStore

    async def start(self) -> None:
        """Connect (idempotent). Raises :class:`StateUnavailable` if the store cannot be reached
        (as every method below does)."""
        ...

    async def close(self) -> None:
        """Stop listening and let go of connections."""
        ...

    async def ping(self) -> None:
        """Return if the store answers now; raise otherwise (what ``/readyz`` asks)."""
        ...

    async def get(self, key: str) -> bytes | None:
        """The value at *key*, ``None`` if absent or expired."""
        ...

    async def put(self, key: str, value: bytes, ttl: float | None = None) -> None:
        """Set *key* to *value*, expiring after *ttl* seconds (``None``: never)."""
        ...

    async def delete(self, key: str) -> None:
        """Remove *key* (a value or a queue)."""
        ...

    async def claim(self, key: str, value: bytes, ttl: float) -> bool:
        """Set *key* to *value* for *ttl* seconds unless it is set: whether this caller got it."""
        ...

    async def swap(
        self, key: str, expected: bytes | None, value: bytes | None, ttl: float | None = None
    ) -> bool:
        """Compare and set, atomically: if *key* holds *expected* (``None``: is unset), set it to
        *value* for *ttl* seconds (*value* ``None``: remove it); whether it did."""
        ...

    async def subscribers(self, channel: str) -> int:
        """How many processes listen on *channel* now (a process that died listens nowhere: its
        connection to the store closed with it)."""
        ...

    async def shared_secret(self, name: str, size: int = 32) -> bytes:
        """A random secret of *size* bytes, the same for every process sharing this state: the
        first to ask creates it, the others read it."""
        ...

    async def push(self, key: str, value: bytes, limit: int, ttl: float | None = None) -> None:
        """Append *value* to the queue at *key*, keeping its last *limit* values; the queue
        expires *ttl* seconds after the last push."""
        ...

    async def pop_all(self, key: str) -> list[bytes]:
        """Take every value of the queue at *key*, oldest first (each is taken once, by one taker)."""
        ...

    async def peek(self, key: str) -> list[bytes]:
        """Every value of the queue at *key*, oldest first, leaving them there."""
        ...

    async def publish(self, channel: str, data: bytes) -> None:
        """Send *data* to every subscriber of *channel*, in every process (this one included)."""
        ...

    async def subscribe(self, channel: str, listener: Listener) -> Unsubscribe:
        """Call *listener* with each message published on *channel* from now on; returns the
        coroutine function that stops it."""
        ...


class MemoryState:
    """A :class:`SharedState` that one process shares with itself."""

    def __init__(self, events: EventStore | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.events: EventStore = events if events is not None else MemoryEventStore()
        self._clock = clock
        self._values: dict[str, tuple[bytes, float | None]] = {}
        self._queues: dict[str, tuple[collections.deque[bytes], float | None]] = {}
        self._channels: dict[str, list[Listener]] = {}

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        self._channels.clear()

    async def ping(self) -> None:
        return None

    async def get(self, key: str) -> bytes | None:
        entry = self._values.get(key)
        if entry is None:
            return None
        value, expires = entry
        if expires is not None and expires <= self._clock():
            del self._values[key]
            return None
        return value

    async def put(self, key: str, value: bytes, ttl: float | None = None) -> None:
        self._values[key] = (value, None if ttl is None else self._clock() + ttl)

    async def delete(self, key: str) -> None:
        self._values.pop(key, None)
        self._queues.pop(key, None)

    async def claim(self, key: str, value: bytes, ttl: float) -> bool:
        if await self.get(key) is not None:
            return False
        await self.put(key, value, ttl)
        return True

    async def swap(
        self, key: str, expected: bytes | None, value: bytes | None, ttl: float | None = None
    ) -> bool:
        if await self.get(key) != expected:
            return False
        if value is None:
            self._values.pop(key, None)
        else:
            await self.put(key, value, ttl)
        return True

    async def subscribers(self, channel: str) -> int:
        return 1 if self._channels.get(channel) else 0

    async def push(self, key: str, value: bytes, limit: int, ttl: float | None = None) -> None:
        entry = self._queues.get(key)
        queue = (
            entry[0] if entry is not None and not self._expired(entry[1]) else collections.deque(maxlen=limit)
        )
        queue.append(value)
        self._queues[key] = (queue, None if ttl is None else self._clock() + ttl)

    async def pop_all(self, key: str) -> list[bytes]:
        entry = self._queues.pop(key, None)
        return list(entry[0]) if entry is not None and not self._expired(entry[1]) else []

    async def peek(self, key: str) -> list[bytes]:
        entry = self._queues.get(key)
        return list(entry[0]) if entry is not None and not self._expired(entry[1]) else []

    def _expired(self, expires: float | None) -> bool:
        return expires is not None and expires <= self._clock()

    async def shared_secret(self, name: str, size: int = 32) -> bytes:
        secret = await self.get(name)
        if secret is None:
            secret = os.urandom(size)
            await self.put(name, secret)
        return secret

    async def publish(self, channel: str, data: bytes) -> None:
        for listener in list(self._channels.get(channel, ())):
            deliver(listener, data)

    async def subscribe(self, channel: str, listener: Listener) -> Unsubscribe:
        self._channels.setdefault(channel, []).append(listener)

        async def unsubscribe() -> None:
            with contextlib.suppress(KeyError, ValueError):
                self._channels[channel].remove(listener)
                if not self._channels[channel]:
                    del self._channels[channel]

        return unsubscribe


def deliver(listener: Listener, data: bytes) -> None:
    """Call *listener*, logging (not raising) what it raises: one bad listener stops no other."""
    try:
        listener(data)
    except Exception:
        logger.exception("a shared-state listener failed")


async def ready(state: SharedState, timeout: float = 1.0) -> bool:
    """Whether *state* answers within *timeout* seconds."""
    try:
        await asyncio.wait_for(state.ping(), timeout)
    except Exception:
        return False
    return True
