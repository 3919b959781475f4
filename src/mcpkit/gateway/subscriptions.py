"""Who of the gateway's callers is subscribed to which resource, and the upstream subscriptions that follows.

A caller subscribes with ``resources/subscribe`` (handshake era: until ``resources/unsubscribe`` or
the end of its connection) or on a ``subscriptions/listen`` stream (2026-07-28: until the stream
ends). The gateway subscribes upstream once per URI, when its first caller does, and unsubscribes
upstream when its last caller goes; changes are applied one at a time, so a subscribe and an
unsubscribe of the same URI never cross on the way to the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ..host import Host

__all__ = ["Subscribers"]


class Subscribers:
    """The callers subscribed to each URI (any hashable token each: a connection, a listen stream)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.holders: dict[str, set[object]] = {}
        self._applying = asyncio.Lock()
        self._watched: dict[object, asyncio.Task[None]] = {}

    async def add(self, token: object, uris: Iterable[str]) -> None:
        uris = list(uris)
        for uri in uris:
            self.holders.setdefault(uri, set()).add(token)
        await self._apply(uris)

    async def remove(self, token: object, uris: Iterable[str] | None = None) -> None:
        """*token* no longer wants *uris* (default: any)."""
        chosen = list(self.holders) if uris is None else list(uris)
        for uri in chosen:
            holders = self.holders.get(uri)
            if holders is not None:
                holders.discard(token)
                if not holders:
                    del self.holders[uri]
        await self._apply(chosen)

    def until(self, token: object, ends: asyncio.Event) -> None:
        """Drop *token*'s subscriptions when *ends* is set (a handshake-era caller's connection)."""
        if token in self._watched:
            return

        async def watch() -> None:
            await ends.wait()
            self._watched.pop(token, None)
            await self.remove(token)

        self._watched[token] = asyncio.ensure_future(watch())

    async def _apply(self, uris: list[str]) -> None:
        async with self._applying:
            for uri in uris:
                wanted = uri in self.holders
                if wanted and uri not in self.host.subscribed:
                    await self.host.subscribe(uri)  # best effort: a server without them never tells
                elif not wanted and uri in self.host.subscribed:
                    await self.host.unsubscribe(uri)

    def close(self) -> None:
        for task in self._watched.values():
            task.cancel()
        self._watched.clear()
