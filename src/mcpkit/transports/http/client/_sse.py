"""An event stream (``text/event-stream``) read a piece at a time, never holding more than a bound.

:class:`SSEParser` takes the body's bytes as they arrive, in pieces cut anywhere, and returns the
events each piece completes. It does no I/O, so the client's connections feed it straight from the
socket's callback and the bounded async readers (:func:`._bounded.sse_events`) from theirs.

>>> parser = SSEParser(limit=100)
>>> parser.feed(b'id: 7\\ndata: {"a"')
[]
>>> parser.feed(b': 1}\\r\\n\\r\\n')
[SSEEvent(kind='message', data=b'{"a": 1}', id='7', retry=None)]
>>> parser.feed(b"data: " + b"x" * 200)
Traceback (most recent call last):
...
mcpkit.transports.http.client._sse.MessageTooLarge: an event stream line is larger than the limit of 100 bytes
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ...._errors import TransportError

__all__ = ["MessageTooLarge", "SSEEvent", "SSEParser"]

_LINE_END: Final = re.compile(rb"\r\n|\r|\n")


class MessageTooLarge(TransportError):
    """What a peer sent is larger than the limit; nothing more of it was read."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what} is larger than the limit of {limit} bytes")
        self.limit = limit


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One event of a ``text/event-stream``: its type, its data lines joined with ``\\n``, and the
    ``id`` and ``retry`` fields it carried (``None`` where it carried none)."""

    kind: str
    data: bytes
    id: str | None
    retry: int | None


class SSEParser:
    """The events of one stream, each line and each event's data at most *limit* bytes.

    Every event a blank line ends is returned, even one without data (a priming event carries only
    an ``id``), so the reader learns its ``id`` and ``retry``; :meth:`close` returns an event the
    stream ended in the middle of, if it has data.
    """

    __slots__ = ("_after_cr", "_data", "_id", "_kind", "_limit", "_pending", "_retry", "_size")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._pending = bytearray()  # the start of a line whose end has not come
        self._after_cr = False  # the last piece ended in CR: an LF starting the next ends the same line
        self._data: list[bytes] = []
        self._size = 0
        self._kind: str | None = None
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, piece: bytes) -> list[SSEEvent]:
        """The events *piece* completes.

        Raises:
            MessageTooLarge: a line or an event passed the limit; the stream is not to be read on.
        """
        events: list[SSEEvent] = []
        start = 1 if self._after_cr and piece[:1] == b"\n" else 0
        self._after_cr = piece[-1:] == b"\r"
        pending = self._pending
        for end in _LINE_END.finditer(piece, start):
            if pending:
                pending += piece[start : end.start()]
                line = bytes(pending)
                pending.clear()
            else:
                line = piece[start : end.start()]
            if len(line) > self._limit:
                raise MessageTooLarge("an event stream line", self._limit)
            event = self._line(line)
            if event is not None:
                events.append(event)
            start = end.end()
        pending += piece[start:]
        if len(pending) > self._limit:
            raise MessageTooLarge("an event stream line", self._limit)
        return events

    def close(self) -> SSEEvent | None:
        """The event the stream ended in the middle of, if it carried data."""
        if self._pending:
            self._line(bytes(self._pending))
            self._pending.clear()
        if not self._data:
            return None
        return SSEEvent(self._kind or "message", b"\n".join(self._data), self._id, self._retry)

    def _line(self, line: bytes) -> SSEEvent | None:
        if not line:
            event = None
            if self._data or self._kind is not None or self._id is not None or self._retry is not None:
                event = SSEEvent(self._kind or "message", b"\n".join(self._data), self._id, self._retry)
            self._data, self._size, self._kind, self._id, self._retry = [], 0, None, None, None
            return event
        name, _, value = line.partition(b":")
        value = value[1:] if value[:1] == b" " else value
        if name == b"data":
            self._size += len(value) + 1
            if self._size > self._limit + 1:  # the joining newlines, but not a last one, count
                raise MessageTooLarge("an event", self._limit)
            self._data.append(value)
        elif name == b"event":
            self._kind = value.decode("utf-8", "replace")
        elif name == b"id" and b"\0" not in value:
            self._id = value.decode("utf-8", "replace").strip()
        elif name == b"retry" and value.strip().isdigit():
            self._retry = int(value.strip())
        # a comment (the name is empty) or an unknown field: ignored, as the SSE grammar says
        return None
