"""Resumable event streams (2025-03-26 and later): event ids, the priming event, ``Last-Event-ID``.

A POST's response becomes resumable when it turns into an event stream: each event is kept in the
:class:`~mcpkit.transports.http.server.event_store.EventStore` under the stream's id before it is sent, so a
client whose stream dropped can come back with GET and ``Last-Event-ID`` and receive the rest ("on
the stream that was disconnected"), and then follow the stream live until the answer. From
2025-11-25 the stream opens with a priming event (an id, empty data and ``retry``), which also lets
the server end the stream on purpose and have the client poll (``ctx.close_response_stream()``).

In a fleet the store is shared (a :class:`~mcpkit.transports.http.server.event_store.FollowedEventStore`): a
reconnection that reaches a process other than the one writing the stream is replayed from the
store, then follows it there until its end mark.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from ...._errors import INVALID_REQUEST
from ._asgi import SSE_HEADERS, Receive, Send, end_body, error, event, send_body, wait_disconnect
from .event_store import EventStore, FollowedEventStore, stream_of

__all__ = ["FINISHED_STREAMS_KEPT", "LiveStream", "ResumableStream", "replay"]

FINISHED_STREAMS_KEPT: Final = 32  # per session, for late reconnections


class LiveStream:
    """What a reconnecting GET follows while a POST's work goes on without a listener."""

    def __init__(self) -> None:
        self.done = False
        self._changed = asyncio.Event()

    def waiter(self) -> asyncio.Event:
        return self._changed

    def touch(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


class ResumableStream:
    """One POST's event stream, kept in the event store as it is written."""

    def __init__(
        self,
        store: EventStore,
        stream_id: str,
        live: LiveStream,
        retry_ms: int | None,
        chore: Callable[[Awaitable[None]], None] | None = None,
    ) -> None:
        self.store = store
        self._chore = chore
        self.stream_id = stream_id
        self.live = live
        self.retry_ms = retry_ms  # None: no priming event (before 2025-11-25)

    @property
    def can_poll(self) -> bool:
        """Whether the server may end the stream early: the client was told when to come back."""
        return self.retry_ms is not None

    async def prime(self, send: Send) -> None:
        # "the server SHOULD immediately send an SSE event consisting of an event ID and an empty
        # data field in order to prime the client to reconnect"
        if self.retry_ms is not None:
            event_id = await self.store.append(self.stream_id, b"")
            await send_body(send, f"id: {event_id}\nretry: {self.retry_ms}\ndata: \n\n".encode())

    async def append(self, data: bytes) -> str:
        event_id = await self.store.append(self.stream_id, data)
        self.live.touch()
        return event_id

    def finish(self) -> None:
        self.live.done = True
        self.live.touch()
        if self._chore is not None and isinstance(self.store, FollowedEventStore):
            self._chore(self.store.end(self.stream_id))  # for followers in other processes


def new_resumable(
    streams: dict[str, LiveStream],
    stream_id: str,
    store: EventStore,
    retry_ms: int | None,
    forget: Callable[[Awaitable[None]], None],
) -> ResumableStream:
    """Start keeping a stream of a session whose resumable streams are *streams*; forget the
    oldest finished ones beyond :data:`FINISHED_STREAMS_KEPT`."""
    streams[stream_id] = live = LiveStream()
    finished = [key for key, stream in streams.items() if stream.done]
    for old in finished[: max(0, len(finished) - FINISHED_STREAMS_KEPT)]:
        del streams[old]
        forget(store.forget(old))
    return ResumableStream(store, stream_id, live, retry_ms, forget)


async def replay(
    streams: dict[str, LiveStream],
    store: EventStore,
    last_event_id: str,
    receive: Receive,
    send: Send,
    session_id: str | None = None,
    stalled: Callable[[str], Awaitable[None]] | None = None,
) -> None:
    """GET with ``Last-Event-ID``: replay the rest of that stream, then follow it to its end (in a
    fleet, a stream of session *session_id* written by another process, from the shared store;
    *stalled* is told the stream's id each time nothing came for a while)."""
    live = streams.get(stream_of(last_event_id))
    if (
        live is None
        and session_id is not None
        and isinstance(store, FollowedEventStore)
        and stream_of(last_event_id).startswith(session_id + "-")
    ):
        await _follow_shared(store, last_event_id, receive, send, stalled)
        return
    events = await store.after(last_event_id) if live is not None else None
    if live is None or events is None:
        await error(send, 400, None, INVALID_REQUEST,
                    "Bad Request: Last-Event-ID names no stream of this session that can be resumed")  # fmt: skip
        return
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    disconnected = asyncio.ensure_future(wait_disconnect(receive))
    try:
        while True:
            finished, changed = live.done, live.waiter()
            for event_id, data in events or []:
                if data:  # not a priming event
                    await event(send, data, event_id)
                last_event_id = event_id
            if finished:
                return
            waiting = asyncio.ensure_future(changed.wait())
            done, _ = await asyncio.wait({waiting, disconnected}, return_when=asyncio.FIRST_COMPLETED)
            if disconnected in done:
                waiting.cancel()
                return
            events = await store.after(last_event_id)
    finally:
        disconnected.cancel()
        await end_body(send)


#: Seconds one wait for a stream written elsewhere lasts before the client is checked on again.
_FOLLOW_WAIT: Final = 2.0


async def _follow_shared(
    store: FollowedEventStore,
    last_event_id: str,
    receive: Receive,
    send: Send,
    stalled: Callable[[str], Awaitable[None]] | None,
) -> None:
    followed = await store.follow(last_event_id, 0.0)
    if followed is None:
        await error(send, 400, None, INVALID_REQUEST,
                    "Bad Request: Last-Event-ID names no stream of this session that can be resumed")  # fmt: skip
        return
    events, finished = followed
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    disconnected = asyncio.ensure_future(wait_disconnect(receive))
    try:
        while True:
            for event_id, data in events:
                if data:  # not a priming event
                    await event(send, data, event_id)
                last_event_id = event_id
            if finished:
                return
            following = asyncio.ensure_future(store.follow(last_event_id, _FOLLOW_WAIT))
            done, _ = await asyncio.wait({following, disconnected}, return_when=asyncio.FIRST_COMPLETED)
            if following not in done:
                following.cancel()
                return
            followed = following.result()
            if followed is None:
                return
            events, finished = followed
            if not events and not finished and stalled is not None:
                await stalled(stream_of(last_event_id))
    finally:
        disconnected.cancel()
        await end_body(send)
