"""The fleet's shared state on Redis (``mcpkit run --redis redis://host:6379/0``).

The official ``redis`` client (asyncio) is imported here only, and this module only when a fleet is
configured (``pip install 'mcpkit[redis]'``). What lives where, every key under one prefix:

* ``<prefix>k:<key>``: values with expiry (``SET ... EX``); a shared secret is ``SET ... NX`` then
  ``GET``, so the first process creates it and every other reads the same bytes;
* ``<prefix>c:<channel>``: pub/sub channels, read by one subscriber connection per process whose
  task hands each message to this process's listeners;
* ``<prefix>e:<stream id>``: a Redis Stream per resumable SSE stream (:class:`RedisEventStore`):
  an event id is ``<stream id>/<entry id>``, so any process can replay after it.

A lost connection is retried by the client; the subscriber reconnects and subscribes again, and
messages published while it was away are lost (pub/sub keeps nothing), as a node that restarts
loses them too. While Redis cannot be reached, every operation raises
:class:`~mcpkit.fleet.state.StateUnavailable` (what the client raised is its ``detail``
and its ``__cause__``): the layers above never see a ``redis`` exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Iterator
from typing import Any, Final

import redis.asyncio as aioredis
import redis.exceptions

from ..transports.http.server.event_store import EventStore
from .state import Listener, StateUnavailable, Unsubscribe, deliver

__all__ = ["RedisEventStore", "RedisState"]

logger = logging.getLogger("mcpkit.fleet")

_ENTRY_ID: Final = re.compile(r"\d{1,20}-\d{1,20}")
#: Compare and set (:meth:`RedisState.swap`) in one step of the server: nothing runs between the
#: read and the write. ARGV: expected is set (0/1), expected, value is set (0/1), value, ttl in ms.
_SWAP: Final = """
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
if ARGV[3] == '0' then
  redis.call('DEL', KEYS[1])
elseif ARGV[5] == '' then
  redis.call('SET', KEYS[1], ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
end
return 1
"""
#: How long an SSE stream's events are kept after its last one (a session idles out sooner).
STREAM_TTL: Final = 3600
#: What the client raises when Redis is away: refused, reset, timed out, still loading its data
#: after a restart (``BusyLoadingError`` is a ``ConnectionError``), or a replica that cannot write.
_UNREACHABLE: Final = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,
    OSError,
    TimeoutError,
)


@contextlib.contextmanager
def _reaching(store: object) -> Iterator[None]:
    """Translate the client's "cannot reach Redis" errors into :class:`StateUnavailable`."""
    try:
        yield
    except _UNREACHABLE as exc:
        raise StateUnavailable(f"{store!r}: {exc}") from exc


class RedisEventStore:
    """An :class:`~mcpkit.transports.http.server.event_store.EventStore` on Redis Streams: the last
    *per_stream* events of each stream (about: trimming is ``MAXLEN ~``), kept *ttl* seconds."""

    def __init__(self, client: Any, prefix: str, per_stream: int = 1024, ttl: int = STREAM_TTL) -> None:
        self._client = client
        self._prefix = prefix + "e:"
        self.per_stream = per_stream
        self.ttl = ttl

    async def append(self, stream_id: str, data: bytes) -> str:
        key = self._prefix + stream_id
        with _reaching(self):
            async with self._client.pipeline(transaction=False) as pipe:
                pipe.xadd(key, {"d": data}, maxlen=self.per_stream, approximate=True)
                pipe.expire(key, self.ttl)
                entry, _ = await pipe.execute()
        return f"{stream_id}/{entry.decode()}"

    async def after(self, event_id: str) -> list[tuple[str, bytes]] | None:
        followed = await self.follow(event_id, 0.0)
        return None if followed is None else followed[0]

    async def count(self, stream_id: str) -> int:
        with _reaching(self):
            entries = await self._client.xrange(self._prefix + stream_id, "-", "+")
        return sum(1 for _, fields in entries if fields.get(b"d"))

    async def end(self, stream_id: str) -> None:
        key = self._prefix + stream_id
        with _reaching(self):
            async with self._client.pipeline(transaction=False) as pipe:
                pipe.xadd(key, {"end": b""}, maxlen=self.per_stream, approximate=True)
                pipe.expire(key, self.ttl)
                await pipe.execute()

    async def follow(self, event_id: str, wait: float) -> tuple[list[tuple[str, bytes]], bool] | None:
        stream_id, _, entry = event_id.rpartition("/")
        if not stream_id or not _ENTRY_ID.fullmatch(entry):
            return None
        key = self._prefix + stream_id
        with _reaching(self):
            async with self._client.pipeline(transaction=False) as pipe:
                pipe.xrange(key, entry, entry, count=1)
                pipe.xrange(key, "(" + entry, "+")
                known, rest = await pipe.execute()
            if not known:
                return None  # never issued, or trimmed: replay would have a gap
            if not rest and wait > 0:  # wait for the writer, wherever it is (XREAD BLOCK)
                found = await self._client.xread({key: entry}, block=max(1, int(wait * 1000)))
                rest = found[0][1] if found else []
        events: list[tuple[str, bytes]] = []
        for found_id, fields in rest:
            if b"d" not in fields:
                return events, True  # the end mark
            events.append((f"{stream_id}/{found_id.decode()}", fields[b"d"]))
        return events, False

    async def forget(self, stream_id: str) -> None:
        with _reaching(self):
            await self._client.delete(self._prefix + stream_id)

    def __repr__(self) -> str:
        return f"RedisEventStore(prefix={self._prefix!r})"


class RedisState:
    """A :class:`~mcpkit.fleet.state.SharedState` on one Redis server.

    Args:
        url: ``redis://[user:password@]host:port/db`` (``rediss://`` for TLS, ``unix://`` too).
        prefix: what every key and channel starts with; fleets of different servers sharing one
            Redis need different prefixes.
        per_stream: events kept per resumable stream.
    """

    def __init__(self, url: str, *, prefix: str = "mcpkit:", per_stream: int = 1024) -> None:
        self.url = url
        self.prefix = prefix
        # A pooled connection idle for a second is pinged before use, and made again if Redis
        # went away meanwhile: after a restart no request meets a connection to the old process.
        self._client = aioredis.from_url(
            url, socket_connect_timeout=2.0, socket_timeout=5.0, health_check_interval=1
        )
        self.events: EventStore = RedisEventStore(self._client, prefix, per_stream)
        self._listeners: dict[str, list[Listener]] = {}
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._swap = self._client.register_script(_SWAP)

    def __repr__(self) -> str:
        return f"RedisState({self.url!r}, prefix={self.prefix!r})"

    async def start(self) -> None:
        with _reaching(self):
            await self._client.ping()

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
            self._reader = None
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        self._listeners.clear()
        await self._client.aclose()

    async def ping(self) -> None:
        with _reaching(self):
            await self._client.ping()

    async def get(self, key: str) -> bytes | None:
        with _reaching(self):
            value = await self._client.get(self.prefix + "k:" + key)
        return value if isinstance(value, bytes) else None

    async def put(self, key: str, value: bytes, ttl: float | None = None) -> None:
        with _reaching(self):
            await self._client.set(
                self.prefix + "k:" + key, value, px=None if ttl is None else max(1, int(ttl * 1000))
            )

    async def delete(self, key: str) -> None:
        with _reaching(self):
            await self._client.delete(self.prefix + "k:" + key)

    async def claim(self, key: str, value: bytes, ttl: float) -> bool:
        with _reaching(self):
            return bool(
                await self._client.set(self.prefix + "k:" + key, value, nx=True, px=max(1, int(ttl * 1000)))
            )

    async def swap(
        self, key: str, expected: bytes | None, value: bytes | None, ttl: float | None = None
    ) -> bool:
        args = [
            b"0" if expected is None else b"1",
            expected or b"",
            b"0" if value is None else b"1",
            value or b"",
        ]
        args.append(b"" if ttl is None else str(max(1, int(ttl * 1000))).encode())
        with _reaching(self):
            return bool(await self._swap(keys=[self.prefix + "k:" + key], args=args))

    async def subscribers(self, channel: str) -> int:
        with _reaching(self):
            counts = await self._client.pubsub_numsub(self.prefix + "c:" + channel)
        return int(counts[0][1]) if counts else 0

    async def push(self, key: str, value: bytes, limit: int, ttl: float | None = None) -> None:
        name = self.prefix + "k:" + key
        with _reaching(self):
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.rpush(name, value)
                pipe.ltrim(name, -limit, -1)
                if ttl is not None:
                    pipe.pexpire(name, max(1, int(ttl * 1000)))
                await pipe.execute()

    async def pop_all(self, key: str) -> list[bytes]:
        name = self.prefix + "k:" + key
        with _reaching(self):
            async with self._client.pipeline(transaction=True) as pipe:  # taken whole, by one taker
                pipe.lrange(name, 0, -1)
                pipe.delete(name)
                values, _ = await pipe.execute()
        return list(values)

    async def peek(self, key: str) -> list[bytes]:
        with _reaching(self):
            values = await self._client.lrange(self.prefix + "k:" + key, 0, -1)
        return [v for v in values if isinstance(v, bytes)]

    async def shared_secret(self, name: str, size: int = 32) -> bytes:
        key = self.prefix + "k:" + name
        with _reaching(self):
            await self._client.set(key, os.urandom(size), nx=True)
            secret = await self._client.get(key)
        if not isinstance(secret, bytes):  # deleted between the two (a flush): ask again later
            raise StateUnavailable(f"{self!r}: the shared secret {name!r} vanished")
        return secret

    async def publish(self, channel: str, data: bytes) -> None:
        with _reaching(self):
            await self._client.publish(self.prefix + "c:" + channel, data)

    async def subscribe(self, channel: str, listener: Listener) -> Unsubscribe:
        name = self.prefix + "c:" + channel
        listeners = self._listeners.setdefault(name, [])
        listeners.append(listener)
        if len(listeners) == 1:
            if self._pubsub is None:
                self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                with _reaching(self):
                    await self._pubsub.subscribe(name)
            except StateUnavailable:
                listeners.remove(listener)  # not subscribed: the next subscriber tries again
                if not listeners:
                    del self._listeners[name]
                raise
            if self._reader is None:
                self._reader = asyncio.get_running_loop().create_task(self._read())

        async def unsubscribe() -> None:
            current = self._listeners.get(name)
            if current is None or listener not in current:
                return
            current.remove(listener)
            if not current:
                del self._listeners[name]
                if self._pubsub is not None:
                    with contextlib.suppress(Exception):
                        await self._pubsub.unsubscribe(name)

        return unsubscribe

    async def _read(self) -> None:
        """Hand each published message to this process's listeners of its channel."""
        while True:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the connection dropped: the client reconnects and resubscribes
                logger.warning("redis subscriber: %s; retrying", exc)
                await asyncio.sleep(0.5)
                continue
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"].decode()
            for listener in list(self._listeners.get(channel, ())):
                deliver(listener, message["data"])
