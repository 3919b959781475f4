"""What the server sends us unasked: its requests answered through the callbacks, its notifications
routed to progress, subscriptions, the cache and the user.

:class:`Inbound` is a base of :class:`~mcpkit.client.core.ClientCore`, which sets what it reads;
:class:`~mcpkit.client.streams.Streams` catches the HTTP transport's own notices before it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .._jsonrpc import Notification, Request
from . import callbacks
from .cache import ResultCache
from .callbacks import LogCallback, RequestCallback, RootsSource
from .exchange import Progress
from .subscriptions import Subscriptions

__all__ = ["Inbound", "NotificationCallback"]

#: ``async fn(method, params)`` for server notifications.
NotificationCallback = Callable[[str, dict[str, Any]], Awaitable[None]]


class Inbound:
    """The client's side of what the server sends it (see the module docstring)."""

    # Set by ClientCore.__init__.
    sampling: RequestCallback | None
    elicitation: RequestCallback | None
    roots: RootsSource | None
    on_notification: NotificationCallback | None
    on_log: LogCallback
    _cache: ResultCache
    _subscriptions: Subscriptions
    _progress: dict[Any, Progress]

    async def _on_request(self, request: Request) -> Any:
        if request.method == "ping":
            return {}
        return await self._answer(request.method, request.params if isinstance(request.params, dict) else {})

    async def _answer(self, method: Any, params: dict[str, Any]) -> Any:
        """What we say to a server's request: in the handshake era a real request, in 2026-07-28 one
        entry of an ``input_required`` result. The callbacks answer; a missing one is -32601."""
        return await callbacks.answer(
            method, params, sampling=self.sampling, elicitation=self.elicitation, roots=self.roots
        )

    async def _answer_inputs(self, requests: Any, answered: set[str]) -> dict[str, Any]:
        return await callbacks.answer_inputs(requests, answered, self._answer)

    async def _on_notification(self, notification: Notification) -> None:
        params = notification.params if isinstance(notification.params, dict) else {}
        method = notification.method
        self._cache.forget_for(method, params)
        if self._subscriptions.route(method, params):
            return  # a 2026-07-28 subscription stream's own notification
        if method == "notifications/progress":
            progress = self._progress.get(params.get("progressToken"))
            if progress is not None:
                await progress.update(params)
            return
        if method == "notifications/message":
            await self.on_log(params)
        if self.on_notification is not None:
            await self.on_notification(method, params)
