"""The host's resource subscriptions on its servers: made once per URI, undone, and made again on a
server that reconnected (a new connection knows nothing of the old one's subscriptions)."""

from __future__ import annotations

import asyncio
import contextlib

from .._errors import MCPError
from .upstream import Upstream

__all__ = ["Subscriptions"]


class Subscriptions:
    """The URIs subscribed to on the servers of *upstreams* (``subscribed``: URI -> server key)."""

    def __init__(self, upstreams: dict[str, Upstream]) -> None:
        self.upstreams = upstreams
        self.subscribed: dict[str, str] = {}
        self._made_on: dict[str, object] = {}  # uri -> the connection it was made on
        self._again: set[asyncio.Task[None]] = set()

    async def subscribe(self, uri: str, server: str) -> bool:
        upstream = self.upstreams[server]
        client = upstream.client
        if client is None or not client.server_capabilities.get("resources", {}).get("subscribe"):
            return False
        with contextlib.suppress(MCPError):
            await upstream.call(lambda c: c.subscribe_resource(uri))
            self.subscribed[uri], self._made_on[uri] = server, client
            return True
        return False

    async def unsubscribe(self, uri: str) -> bool:
        server = self.subscribed.pop(uri, None)
        self._made_on.pop(uri, None)
        if server is None:
            return False
        with contextlib.suppress(MCPError):
            await self.upstreams[server].call(lambda c: c.unsubscribe_resource(uri))
            return True
        return False

    def reconnected(self, key: str) -> None:
        """Server *key*'s lists were read again: if that was on a new connection, subscribe again."""
        upstream = self.upstreams[key]
        client = upstream.client
        if client is None or upstream.status.state != "ready":
            return
        stale = [u for u, s in self.subscribed.items() if s == key and self._made_on.get(u) is not client]
        if not stale:
            return
        for uri in stale:
            self._made_on[uri] = client

        async def again() -> None:
            for uri in stale:
                if self.subscribed.get(uri) == key:
                    with contextlib.suppress(MCPError):
                        await upstream.call(lambda c: c.subscribe_resource(uri))  # noqa: B023 (awaited here)

        task = asyncio.ensure_future(again())
        self._again.add(task)
        task.add_done_callback(self._again.discard)

    def close(self) -> None:
        for task in self._again:
            task.cancel()
