"""Change notifications the client asked for: :class:`Subscription` and the routing to it.

Both eras end up as one iterator of ``(method, params)`` pairs:

* 2026-07-28: one ``subscriptions/listen`` request per subscription. The server acknowledges it with
  ``notifications/subscriptions/acknowledged`` and stamps every notification of that stream with the
  request's id (``_meta["io.modelcontextprotocol/subscriptionId"]``); cancelling the request ends it,
  and the server ending it (answering the request) ends the iteration. A stream lost without that
  answer is opened again, as a new request (see :mod:`.streams`), and the iteration goes on.
* handshake era: list changes arrive unasked, and ``resources/subscribe`` is sent for each URI; the
  one subscription of the connection filters what it was asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from .._connection import META_SUBSCRIPTION_ID
from .._errors import MCPError, RequestTimeout

__all__ = ["Subscription", "Subscriptions"]


class Subscription:
    """Changes the server tells us about; see :meth:`Client.listen`.

    ``async for method, params in subscription`` until :meth:`close`; ``acknowledged`` holds what
    the server agreed to send.
    """

    def __init__(
        self, kinds: set[str], uris: set[str], on_close: Callable[[Subscription], Awaitable[None]]
    ) -> None:
        self._kinds = kinds
        self.uris = uris
        self._on_close = on_close
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
        self._acknowledged = asyncio.Event()
        #: What the server agreed to send (``{"toolsListChanged": true, ...}`` in 2026-07-28).
        self.acknowledged: dict[str, Any] | None = None
        #: The ``subscriptions/listen`` request's id (2026-07-28), ``None`` in the handshake era.
        self.request_id: int | None = None
        #: The future of that request's answer: the server ending the subscription.
        self.answer: asyncio.Future[Any] | None = None
        #: The ``notifications`` filter asked for (2026-07-28), sent again when the stream is reopened.
        self.wanted: dict[str, Any] = {}
        #: What keeps the 2026-07-28 stream open (see :mod:`.streams`).
        self.keeper: asyncio.Task[None] | None = None
        self.closing = False
        self._ended = asyncio.Event()

    def wants(self, method: str, params: dict[str, Any]) -> bool:
        """Whether an unstamped (handshake-era) notification is one this subscription asked for."""
        if method == "notifications/resources/updated":
            return params.get("uri") in self.uris
        kind = method.removeprefix("notifications/").removesuffix("/list_changed")
        return method.endswith("/list_changed") and kind in self._kinds

    def deliver(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/subscriptions/acknowledged":
            notifications = params.get("notifications")
            self.acknowledged = notifications if isinstance(notifications, dict) else {}
            self._acknowledged.set()
            return
        self._queue.put_nowait((method, params))

    def renew(self, request_id: int) -> None:
        """Start over as the ``subscriptions/listen`` request *request_id*, not yet acknowledged."""
        self.request_id = request_id
        self.answer = None
        self._acknowledged.clear()

    def end(self) -> None:
        """The subscription is over for good: the iteration ends once what came before is read."""
        self._ended.set()

    async def wait_acknowledged(self, timeout: float | None, *, close_on_timeout: bool = True) -> None:
        """Wait for the server's acknowledgement of a ``subscriptions/listen`` request.

        Raises:
            RPCError: the server refused the subscription.
            MCPError: the server ended it before acknowledging it.
            RequestTimeout: no acknowledgement within *timeout* seconds (the subscription is closed).
        """
        assert self.answer is not None
        waiter = asyncio.ensure_future(self._acknowledged.wait())
        done, _ = await asyncio.wait(
            {waiter, self.answer}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        waiter.cancel()
        if self.answer in done:
            self.answer.result()  # an error answer raises here
            raise MCPError("the server ended the subscription before acknowledging it")
        if not done:
            if close_on_timeout:
                await self.close()
            raise RequestTimeout("subscriptions/listen was not acknowledged in time")

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[str, dict[str, Any]]:
        if not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None:
                return item
            raise StopAsyncIteration
        getter = asyncio.ensure_future(self._queue.get())
        # The server's graceful close, or a stream that could not be opened again, ends the iteration.
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            done, _ = await asyncio.wait({getter, ended}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The caller gave up waiting (a timeout, say): the read must stop too, or it would take
            # the next notification and nobody would ever see it.
            getter.cancel()
            raise
        finally:
            ended.cancel()
        if getter in done:
            item = getter.result()
            if item is not None:
                return item
        getter.cancel()
        raise StopAsyncIteration

    async def close(self) -> None:
        """End the subscription (``notifications/cancelled`` for a listen request, or
        ``resources/unsubscribe`` for each URI in the handshake era)."""
        self.closing = True
        await self._on_close(self)
        self._queue.put_nowait(None)


class Subscriptions:
    """The open subscriptions of one client, by ``subscriptions/listen`` id (``None``: the
    handshake-era one)."""

    def __init__(self) -> None:
        self._open: dict[int | None, Subscription] = {}

    def add(self, subscription: Subscription) -> None:
        self._open[subscription.request_id] = subscription

    def __iter__(self) -> Iterator[Subscription]:
        return iter(list(self._open.values()))

    def remove(self, subscription: Subscription) -> None:
        if self._open.get(subscription.request_id) is subscription:
            del self._open[subscription.request_id]

    def route(self, method: str, params: dict[str, Any]) -> bool:
        """Hand a notification to the subscriptions that want it. True if it belongs to a
        2026-07-28 subscription stream (stamped with its id) and so to nothing else."""
        meta = params.get("_meta")
        if isinstance(meta, dict) and META_SUBSCRIPTION_ID in meta:
            subscription_id = meta[META_SUBSCRIPTION_ID]
            stamped = self._open.get(subscription_id) if isinstance(subscription_id, int) else None
            if stamped is not None:
                stamped.deliver(method, params)
            return True
        legacy = self._open.get(None)
        if legacy is not None and legacy.wants(method, params):
            legacy.deliver(method, params)
        return False
