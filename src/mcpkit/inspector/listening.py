"""The page's one change subscription: 2026-07-28 ``subscriptions/listen`` through the client.

In 2026-07-28 a server tells a client about list changes and resource updates only on a
``subscriptions/listen`` stream the client opened for them; the page asks for the kinds and URIs it
wants, and each notification of the stream reaches it as a ``listened`` event. Asking again
replaces the subscription (the old stream is cancelled), and asking for nothing ends it.
(In the handshake era list changes arrive unasked and ``resources/subscribe`` is a plain request.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from ..client import Client
from ..client.subscriptions import Subscription

__all__ = ["Listener"]

KINDS = ("tools", "prompts", "resources")


class Listener:
    """Holds the subscription; *emit* is the session's ``emit(kind, **data)``."""

    def __init__(self, emit: Callable[..., None]) -> None:
        self._emit = emit
        self._subscription: Subscription | None = None
        self._reader: asyncio.Task[None] | None = None

    async def listen(self, client: Client, params: dict[str, Any]) -> dict[str, Any]:
        """Listen for ``params``' kinds (``tools``, ``prompts``, ``resources``: booleans) and
        ``uris``; returns what the server acknowledged (``{}`` when nothing was asked)."""
        wanted = {kind: bool(params.get(kind)) for kind in KINDS}
        raw = params.get("uris")
        uris = [str(uri) for uri in raw if str(uri).strip()] if isinstance(raw, list) else []
        await self.stop()
        if not any(wanted.values()) and not uris:
            self._emit("listening", acknowledged=None)
            return {}
        subscription = await client.listen(**wanted, uris=uris)
        self._subscription = subscription
        self._reader = asyncio.ensure_future(self._read(subscription))
        acknowledged = subscription.acknowledged or {}
        self._emit("listening", acknowledged=acknowledged)
        return acknowledged

    async def _read(self, subscription: Subscription) -> None:
        async for method, params in subscription:
            self._emit("listened", method=method, params=params)
        if self._subscription is subscription:  # ended by the server, not replaced
            self._subscription = None
            self._emit("listening", acknowledged=None, reason="the server ended the subscription")

    async def stop(self) -> None:
        """End the current subscription, if any."""
        subscription, self._subscription = self._subscription, None
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
        if subscription is not None:
            with contextlib.suppress(Exception):  # the connection may be gone already
                await subscription.close()
