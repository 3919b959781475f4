"""Resource subscriptions on the host's servers: who holds each URI, the one subscription made
upstream while anyone does, and the same made again on a server that reconnected.

A holder is any token: the host itself (:meth:`~mcpkit.host.Host.subscribe`), a gateway caller's
session or a 2026-07-28 ``subscriptions/listen`` stream. Changes are applied one at a time, so a
subscribe and an unsubscribe of one URI never cross on the way. A new connection knows nothing of
the old one's subscriptions: :meth:`Subscriptions.reconnected` makes them again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from .._errors import MCPError
from .upstream import Upstream

__all__ = ["Subscriptions"]


class Subscriptions:
    """The URIs held on the servers of *upstreams* (``subscribed``: URI -> server key, made upstream)."""

    def __init__(self, upstreams: dict[str, Upstream]) -> None:
        self.upstreams = upstreams
        self.holders: dict[str, set[object]] = {}
        self.subscribed: dict[str, str] = {}
        self._made_on: dict[str, object] = {}  # uri -> the connection it was made on
        self._applying = asyncio.Lock()
        self._watched: dict[object, asyncio.Task[None]] = {}
        self._again: set[asyncio.Task[None]] = set()

    async def add(self, holder: object, server: str, uris: Iterable[str]) -> None:
        """*holder* wants *uris*, which server *server* has (best effort: a server without
        subscriptions never tells of changes)."""
        uris = list(uris)
        for uri in uris:
            self.holders.setdefault(uri, set()).add(holder)
        await self._apply(uris, server)

    async def remove(self, holder: object, uris: Iterable[str] | None = None) -> None:
        """*holder* no longer wants *uris* (default: any)."""
        chosen = list(self.holders) if uris is None else list(uris)
        for uri in chosen:
            holders = self.holders.get(uri)
            if holders is not None:
                holders.discard(holder)
                if not holders:
                    del self.holders[uri]
        await self._apply(chosen)

    def until(self, holder: object, ends: asyncio.Event) -> None:
        """Drop *holder*'s subscriptions when *ends* is set (a handshake-era caller's connection)."""
        if holder in self._watched:
            return

        async def watch() -> None:
            await ends.wait()
            self._watched.pop(holder, None)
            await self.remove(holder)

        self._watched[holder] = asyncio.ensure_future(watch())

    async def _apply(self, uris: list[str], server: str | None = None) -> None:
        async with self._applying:
            for uri in uris:
                if uri in self.holders and uri not in self.subscribed and server is not None:
                    await self._subscribe(uri, server)
                elif uri not in self.holders and uri in self.subscribed:
                    await self._unsubscribe(uri)

    async def _subscribe(self, uri: str, server: str) -> None:
        upstream = self.upstreams[server]
        client = upstream.client
        # resources/subscribe is the handshake era's; a 2026-07-28 server's `subscribe` means
        # resourceSubscriptions on a listen stream, which this table does not open.
        if client is None or client.protocol_version >= "2026":
            return
        if not client.server_capabilities.get("resources", {}).get("subscribe"):
            return
        with contextlib.suppress(MCPError):
            await upstream.call(lambda c: c.subscribe_resource(uri))
            self.subscribed[uri], self._made_on[uri] = server, client

    async def _unsubscribe(self, uri: str) -> None:
        server = self.subscribed.pop(uri)
        self._made_on.pop(uri, None)
        with contextlib.suppress(MCPError):
            await self.upstreams[server].call(lambda c: c.unsubscribe_resource(uri))

    def reconnected(self, key: str) -> None:
        """Server *key*'s lists were read again: if that was on a new connection, subscribe again."""
        upstream = self.upstreams[key]
        client = upstream.client
        if client is None or upstream.status.state != "ready":
            return
        stale = [u for u, s in self.subscribed.items() if s == key and self._made_on.get(u) is not client]
        if not stale:
            return
        self._made_on.update(dict.fromkeys(stale, client))

        async def again() -> None:
            for uri in stale:
                if self.subscribed.get(uri) == key:
                    with contextlib.suppress(MCPError):
                        await upstream.call(lambda c: c.subscribe_resource(uri))  # noqa: B023 (awaited here)

        task = asyncio.ensure_future(again())
        self._again.add(task)
        task.add_done_callback(self._again.discard)

    def close(self) -> None:
        for task in [*self._again, *self._watched.values()]:
            task.cancel()
        self._watched.clear()
