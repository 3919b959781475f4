"""Streams that come back: what the server says unasked keeps reaching us after its stream is lost.

Two streams carry it, one per era, and both are opened again for as long as the client is open:

* a handshake-era session's GET stream is the HTTP transport's to reopen (see
  :meth:`HTTPClientTransport._standalone_stream <mcpkit.transports.http.client.streamable.HTTPClientTransport>`);
  it tells us with a notice in its inbox, read here in order with the rest;
* a 2026-07-28 ``subscriptions/listen`` stream is a request, and cannot be resumed ("Resumable SSE
  streams via Last-Event-ID are not supported"); the spec leaves the rest to us: "a transport that
  closes without [the server's answer] indicates an unexpected disconnect, which the client MAY
  treat as a trigger to reconnect". :meth:`Streams._keep_listening` sends ``subscriptions/listen``
  again with the same filter (its resource subscriptions included) under a new id, and the
  :class:`~.subscriptions.Subscription` goes on yielding as if nothing happened.

Each try waits as :attr:`Streams.reconnect` says (:class:`~mcpkit.transports.http.client._reopen.Backoff`). What
the server said while the stream was away may be lost, so once it is back the application is told
as if every list it hears about had changed (``notifications/tools/list_changed``... and
``notifications/resources/updated`` for each subscribed resource), each marked with
``_meta[MAY_HAVE_MISSED]``, and the list caches are dropped. The loss is logged as a warning on the
``mcpkit.client`` logger, the reopening as info. A session the server no longer knows (404 on its
stream) is started again, as a request meeting 404 would.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Final

from .._connection import META_SUBSCRIPTION_ID
from .._errors import SERVER_BUSY, ConnectionClosed, MCPError, RequestTimeout, RPCError
from .._jsonrpc import Notification
from .._transport import Transport
from .._versions import Era
from ..transports.http.client._reopen import SESSION_LOST, STREAM_REOPENED, Backoff, worth_retrying
from .connect import ProbeAnswers
from .core import ClientCore
from .subscriptions import Subscription

__all__ = ["MAY_HAVE_MISSED", "Streams"]

logger = logging.getLogger("mcpkit.client")

#: The ``_meta`` key (true) of a change the client tells of because its stream was lost for a
#: while, not because the server said so: the list may or may not have changed.
MAY_HAVE_MISSED: Final = "mcpkit/mayHaveMissed"

_KINDS: Final = ("tools", "resources", "prompts")


def missed(
    kinds: Sequence[str], uris: Sequence[str], meta: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """The notifications that say "this may have changed" of each list kind and resource."""
    marked = {**meta, MAY_HAVE_MISSED: True}
    told = [(f"notifications/{kind}/list_changed", {"_meta": marked}) for kind in kinds]
    return told + [("notifications/resources/updated", {"uri": uri, "_meta": marked}) for uri in uris]


def _worth_retrying(exc: BaseException) -> bool:
    """Whether a listen stream that ended with *exc* may open again: lost on the way (no answer, a
    broken stream, 409, 429, 5xx, a busy server), not refused by the server nor closed by us."""
    if isinstance(exc, RequestTimeout):
        return True  # the reopened stream was not acknowledged in time
    if isinstance(exc, ConnectionClosed) or not isinstance(exc, RPCError):
        return False
    data = exc.data
    if isinstance(data, dict) and "httpStatus" in data:
        status = data["httpStatus"]
        return worth_retrying(status if isinstance(status, int) else None)
    return exc.code == SERVER_BUSY


class Streams(ClientCore):
    """``listen``, and the streams of change notifications kept open."""

    #: The pauses between tries to open a lost stream again: give your own before connecting
    #: (``Backoff(initial=..., cap=...)``; its ``sleep`` decides how a pause is waited).
    reconnect: Backoff = Backoff()

    def _attach(self, transport: Transport) -> ProbeAnswers:
        if hasattr(transport, "reconnect"):  # the HTTP transport keeps the session's GET stream
            setattr(transport, "reconnect", self.reconnect)  # noqa: B010 (not every Transport has it)
        return super()._attach(transport)

    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Sequence[str] = (),
    ) -> Subscription:
        """Ask to be told about changes; iterate the returned :class:`Subscription` for them.

        In 2026-07-28 this is one ``subscriptions/listen`` request, sent again should its stream be
        lost; in the handshake era list changes arrive unasked and ``resources/subscribe`` is sent
        for each of *uris*. Either way the subscription yields ``(method, params)`` pairs and ends
        with ``close()``.
        """
        self._live_peer()
        kinds = {
            k for k, wanted in (("tools", tools), ("prompts", prompts), ("resources", resources)) if wanted
        }
        subscription = Subscription(kinds, set(uris), self._end_subscription)
        if self.era is Era.HANDSHAKE:
            for uri in uris:
                await self.request("resources/subscribe", {"uri": uri})
            subscription.acknowledged = {"kinds": sorted(kinds), "uris": list(uris)}
            self._subscriptions.add(subscription)
            return subscription
        subscription.wanted = {f"{k}ListChanged": True for k in sorted(kinds)}
        if uris:
            subscription.wanted["resourceSubscriptions"] = list(uris)
        await self._open_listen(subscription, first=True)
        subscription.keeper = asyncio.ensure_future(self._keep_listening(subscription))
        return subscription

    async def _open_listen(self, subscription: Subscription, *, first: bool) -> None:
        """Send ``subscriptions/listen`` for *subscription* and wait for its acknowledgement."""
        peer = self._live_peer()
        self._subscriptions.remove(subscription)
        subscription.renew(peer.next_id())
        self._subscriptions.add(subscription)
        params = {"notifications": subscription.wanted, "_meta": self._meta(self.protocol_version)}
        assert subscription.request_id is not None
        subscription.answer = await peer.send_request(subscription.request_id, "subscriptions/listen", params)
        # The answer may end in an error nobody awaits (the connection closing before the stream is
        # acknowledged, or after its reader stopped): take it, so it is not reported as never retrieved.
        subscription.answer.add_done_callback(_retrieve)
        try:
            await subscription.wait_acknowledged(self.timeout, close_on_timeout=first)
        except RequestTimeout:
            if not first:
                await peer.cancel(subscription.request_id, "not acknowledged in time")
            raise

    async def _keep_listening(self, subscription: Subscription) -> None:
        """Open *subscription*'s stream again each time it is lost, until it ends for good."""
        try:
            while True:
                error = await _loss(subscription)
                if error is None or not _worth_retrying(error) or not self._still_wanted(subscription):
                    return
                logger.warning("the subscriptions/listen stream was lost (%s); opening it again", error)
                tries = 0
                while True:
                    hint = error.data.get("retryAfter") if isinstance(error, RPCError) else None
                    await self.reconnect.wait(tries, hint if isinstance(hint, int | float) else None)
                    tries += 1
                    if not self._still_wanted(subscription):
                        return
                    try:
                        await self._open_listen(subscription, first=False)
                        break
                    except MCPError as exc:
                        if not _worth_retrying(exc) or not self._still_wanted(subscription):
                            logger.warning(
                                "the subscriptions/listen stream could not be opened again: %s", exc
                            )
                            return
                        error = exc
                logger.info("the subscriptions/listen stream is open again; changes may have been missed")
                told = subscription.acknowledged or {}
                kinds = [k for k in _KINDS if told.get(f"{k}ListChanged") is True]
                uris = told.get("resourceSubscriptions")
                meta = {META_SUBSCRIPTION_ID: subscription.request_id}
                for method, params in missed(kinds, uris if isinstance(uris, list) else [], meta):
                    self._cache.forget_for(method, params)
                    subscription.deliver(method, params)
        finally:
            subscription.end()

    def _still_wanted(self, subscription: Subscription) -> bool:
        return not (subscription.closing or self.closed)

    async def _end_subscription(self, subscription: Subscription) -> None:
        self._subscriptions.remove(subscription)
        if subscription.keeper is not None:
            subscription.keeper.cancel()
        if subscription.request_id is not None and self._peer is not None:
            await self._peer.cancel(subscription.request_id, "subscription closed")
        elif self.era is Era.HANDSHAKE:
            for uri in subscription.uris:
                try:
                    await self.request("resources/unsubscribe", {"uri": uri})
                except MCPError:
                    continue

    # -- the HTTP transport's notices ---------------------------------------------------------------

    async def _on_notification(self, notification: Notification) -> None:
        if notification.method == STREAM_REOPENED:
            await self._tell_missed()
        elif notification.method == SESSION_LOST:
            # Not awaited here: the new session's initialize is answered through the reader that
            # is waiting for this to return.
            lost = notification.params.get("sessionId") if isinstance(notification.params, dict) else None
            renewal = asyncio.ensure_future(self._start_again(lost if isinstance(lost, str) else None))
            self._background.add(renewal)
            renewal.add_done_callback(self._background.discard)
        else:
            await super()._on_notification(notification)

    async def _start_again(self, lost: str | None) -> None:
        try:
            await self._renew_session(lost)
        except MCPError as exc:
            logger.warning("could not start a new session after the server forgot ours: %s", exc)
            return
        await self._tell_missed()

    async def _tell_missed(self) -> None:
        """Tell the application every list it hears about may have changed (handshake era)."""
        caps = self.server_capabilities
        kinds = [k for k in _KINDS if isinstance(caps.get(k), dict) and caps[k].get("listChanged")]
        uris = sorted({uri for s in self._subscriptions if s.request_id is None for uri in s.uris})
        for method, params in missed(kinds, uris, {}):
            await super()._on_notification(Notification(method=method, params=params))

    async def aclose(self) -> None:
        for subscription in self._subscriptions:
            if subscription.keeper is not None:
                subscription.keeper.cancel()
        await super().aclose()


async def _loss(subscription: Subscription) -> BaseException | None:
    """Wait for *subscription*'s stream to end: the error it ended with, or ``None`` for a graceful
    end (the server's answer) or none to wait for."""
    answer = subscription.answer
    if answer is None:
        return None
    await asyncio.wait((answer,))  # not `await answer`: cancelling this must not cancel the request
    if answer.cancelled():
        return None
    return answer.exception()


def _retrieve(done: asyncio.Future[Any]) -> None:
    if not done.cancelled():
        done.exception()
