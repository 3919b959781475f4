"""Reading what an HTTP peer sends, never more than a bound: a whole body, or an SSE stream's events.

httpx's own readers hold whatever the peer sends: ``aread()`` keeps a 400 MB body (and its decoded
copy), and ``aiter_lines()`` grows a line that never ends until the request times out. These read
the raw bytes as they arrive instead, decode them (``gzip``, ``deflate``) a bounded piece at a time,
and raise :class:`MessageTooLarge` as soon as a body, a line or an event passes its limit. What they
hold is then at most the limit plus one piece, whatever the peer sends; a body whose
``Content-Length`` already says it is too large is refused before a byte of it is read.

Only ``gzip`` and ``deflate`` are decoded here (:data:`ACCEPT_ENCODING` is what clients reading
through this module ask for): a decoder that cannot be told "no more than *n* bytes out" would let
a few kilobytes of compressed input become gigabytes.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ...._errors import TransportError

if TYPE_CHECKING:
    import httpx

__all__ = ["ACCEPT_ENCODING", "MessageTooLarge", "SSEEvent", "read_body", "sse_events"]

#: The content codings a bounded reader can decode: send as ``Accept-Encoding``.
ACCEPT_ENCODING: Final = "gzip, deflate"

#: The most decoded bytes one step yields (what a socket read gives at most, too).
_PIECE: Final = 64 * 1024

_LINE_END: Final = re.compile(rb"\r\n|\r|\n")


class MessageTooLarge(TransportError):
    """What a peer sent is larger than the limit; nothing more of it was read."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what} is larger than the limit of {limit} bytes")
        self.limit = limit


class _Decoder:
    """Undoes one content coding, never yielding more than :data:`_PIECE` bytes at once."""

    def __init__(self, coding: str) -> None:
        self._deflate = coding == "deflate"
        # gzip, or deflate as RFC 9110 means it (zlib-wrapped); some servers send raw deflate.
        self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS if not self._deflate else zlib.MAX_WBITS)
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._deflate and not self._started:
            self._started = True
            try:
                first = self._zlib.decompress(data, _PIECE)
            except zlib.error:
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                first = self._zlib.decompress(data, _PIECE)
            yield first
        else:
            yield self._zlib.decompress(data, _PIECE)
        while self._zlib.unconsumed_tail:
            yield self._zlib.decompress(self._zlib.unconsumed_tail, _PIECE)

    def flush(self) -> bytes:
        return self._zlib.flush()


async def _pieces(reply: httpx.Response) -> AsyncIterator[bytes]:
    """The body of *reply*, decoded, in pieces of at most :data:`_PIECE` bytes (raw pieces as the
    connection gives them, which httpcore reads 64 KiB at a time)."""
    codings = [c.strip().lower() for c in reply.headers.get("content-encoding", "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        async for raw in reply.aiter_raw():
            yield raw
        return
    if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise TransportError(f"unsupported Content-Encoding {reply.headers['content-encoding']!r}")
    decoder = _Decoder("deflate" if codings[0] == "deflate" else "gzip")
    try:
        async for raw in reply.aiter_raw():
            for piece in decoder.feed(raw):
                if piece:
                    yield piece
        rest = decoder.flush()
    except zlib.error as exc:
        raise TransportError(f"undecodable {codings[0]} body: {exc}") from exc
    if rest:
        yield rest


async def read_body(reply: httpx.Response, limit: int, what: str = "the answer") -> bytes:
    """The whole body of *reply*, decoded, if it is at most *limit* bytes.

    Raises:
        MessageTooLarge: the body (its ``Content-Length``, or what has arrived) passes *limit*.
        TransportError: a content coding that cannot be decoded within a bound.
    """
    declared = reply.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise MessageTooLarge(f"{what} ({declared} bytes by its Content-Length)", limit)
    body = bytearray()
    async for piece in _pieces(reply):
        body += piece
        if len(body) > limit:
            raise MessageTooLarge(what, limit)
    return bytes(body)


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One event of a ``text/event-stream``: its type, its data lines joined with ``\\n``, and the
    ``id`` and ``retry`` fields it carried (``None`` where it carried none)."""

    kind: str
    data: bytes
    id: str | None
    retry: int | None


async def _lines(reply: httpx.Response, limit: int) -> AsyncIterator[bytes]:
    """The lines of *reply*'s body without their ends (CRLF, LF or CR, as the SSE grammar allows)."""
    pending = bytearray()
    after_cr = False  # the last piece ended in CR: an LF starting the next is the same line end
    async for piece in _pieces(reply):
        start = 1 if after_cr and piece.startswith(b"\n") else 0
        after_cr = piece.endswith(b"\r")
        for end in _LINE_END.finditer(piece, start):
            if pending:
                pending += piece[start : end.start()]
                line = bytes(pending)
                pending.clear()
            else:
                line = piece[start : end.start()]
            if len(line) > limit:
                raise MessageTooLarge("an event stream line", limit)
            yield line
            start = end.end()
        pending += piece[start:]
        if len(pending) > limit:
            raise MessageTooLarge("an event stream line", limit)
    if pending:
        yield bytes(pending)


async def sse_events(reply: httpx.Response, limit: int) -> AsyncIterator[SSEEvent]:
    """The events of an SSE response, each line and each event's data at most *limit* bytes.

    Every event a blank line ends is yielded, even one without data (a priming event carries only
    an ``id``), so the caller learns its ``id`` and ``retry``; an event the stream ends in the
    middle of is yielded if it has data.

    Raises:
        MessageTooLarge: a line or an event passed *limit*; nothing more of the stream was read.
    """
    data: list[bytes] = []
    size = 0
    kind: str | None = None
    event_id: str | None = None
    retry: int | None = None
    async for line in _lines(reply, limit):
        if not line:
            if data or kind is not None or event_id is not None or retry is not None:
                yield SSEEvent(kind or "message", b"\n".join(data), event_id, retry)
            data, size, kind, event_id, retry = [], 0, None, None, None
            continue
        name, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if name == b"data":
            size += len(value) + 1
            if size > limit + 1:  # the joining newlines, but not a last one, count
                raise MessageTooLarge("an event", limit)
            data.append(value)
        elif name == b"event":
            kind = value.decode("utf-8", "replace")
        elif name == b"id" and b"\0" not in value:
            event_id = value.decode("utf-8", "replace").strip()
        elif name == b"retry" and value.strip().isdigit():
            retry = int(value.strip())
        # a comment (the name is empty) or an unknown field: ignored, as the SSE grammar says
    if data:
        yield SSEEvent(kind or "message", b"\n".join(data), event_id, retry)
