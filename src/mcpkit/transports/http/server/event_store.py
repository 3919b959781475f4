"""Where a handshake-era session's SSE events wait to be replayed (resumability).

"Servers MAY attach an ``id`` field to their SSE events ... If present, the ID MUST be globally unique
across all streams within that session"; a client that lost the stream reconnects with GET and
``Last-Event-ID``, and the server "MAY use this header to replay messages that would have been sent
after the last event ID, *on the stream that was disconnected*".

An event id here is ``<stream id>/<sequence>``, and a stream id starts with its session's id, so
the id alone says which stream (and session) to replay. :class:`EventStore` is the interface a
shared store (Redis, say) implements when several server processes serve one session's
reconnections; :class:`MemoryEventStore` is the default, bounded per stream.

A store shared by several processes (:class:`FollowedEventStore`) also says when a stream ended and
lets a process follow a stream that another one writes: a client that reconnects to a process other
than the one doing the work is replayed to and then kept up to date from the store.
"""

from __future__ import annotations

from collections import deque
from typing import Final, Protocol, runtime_checkable

__all__ = ["EventStore", "FollowedEventStore", "MemoryEventStore", "stream_of"]

_SEPARATOR: Final = "/"


def stream_of(event_id: str) -> str:
    """The stream an event id belongs to."""
    return event_id.rpartition(_SEPARATOR)[0]


class EventStore(Protocol):
    """Keeps the events of resumable streams until their session ends."""

    async def append(self, stream_id: str, data: bytes) -> str:
        """Keep *data* as the next event of *stream_id* and return its event id."""
        ...

    async def after(self, event_id: str) -> list[tuple[str, bytes]] | None:
        """The events of *event_id*'s stream that came after it, oldest first; ``None`` if that
        event is unknown (never issued, or no longer kept)."""
        ...

    async def forget(self, stream_id: str) -> None:
        """Drop a stream's events (its session ended)."""
        ...


@runtime_checkable
class FollowedEventStore(EventStore, Protocol):
    """An :class:`EventStore` that several processes share, where one follows what another writes."""

    async def end(self, stream_id: str) -> None:
        """Mark *stream_id* finished: its followers stop after its last event."""
        ...

    async def count(self, stream_id: str) -> int:
        """How many events of *stream_id* carry data (priming events do not)."""
        ...

    async def follow(self, event_id: str, wait: float) -> tuple[list[tuple[str, bytes]], bool] | None:
        """The events after *event_id* (waiting up to *wait* seconds for one if there is none yet)
        and whether the stream has finished; ``None`` if *event_id* is unknown."""
        ...


class MemoryEventStore:
    """An in-process :class:`EventStore` keeping the last *per_stream* events of each stream."""

    def __init__(self, per_stream: int = 1024) -> None:
        self.per_stream = per_stream
        self._streams: dict[str, tuple[list[int], deque[tuple[int, bytes]]]] = {}

    async def append(self, stream_id: str, data: bytes) -> str:
        counter, events = self._streams.setdefault(stream_id, ([0], deque(maxlen=self.per_stream)))
        counter[0] += 1
        events.append((counter[0], data))
        return f"{stream_id}{_SEPARATOR}{counter[0]}"

    async def after(self, event_id: str) -> list[tuple[str, bytes]] | None:
        stream_id, _, number = event_id.rpartition(_SEPARATOR)
        entry = self._streams.get(stream_id)
        if entry is None or not number.isdigit():
            return None
        counter, events = entry
        seq = int(number)
        oldest = events[0][0] if events else counter[0] + 1
        if seq > counter[0] or seq < oldest - 1:
            return None  # not issued yet, or replay would have a gap
        return [(f"{stream_id}{_SEPARATOR}{n}", data) for n, data in events if n > seq]

    async def forget(self, stream_id: str) -> None:
        self._streams.pop(stream_id, None)
