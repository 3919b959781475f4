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

import zlib
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Final, Protocol

from ...._errors import TransportError
from ._sse import MessageTooLarge, SSEEvent, SSEParser

__all__ = [
    "ACCEPT_ENCODING",
    "Answer",
    "MessageTooLarge",
    "SSEEvent",
    "decoder_for",
    "read_body",
    "sse_events",
]

#: The content codings a bounded reader can decode: send as ``Accept-Encoding``.
ACCEPT_ENCODING: Final = "gzip, deflate"


class Answer(Protocol):
    """An HTTP answer whose head has come and whose body is still to read: httpx's streamed
    responses, and the client's own (:class:`~._pool.StreamedResponse`)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def aiter_raw(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


#: The most decoded bytes one step yields (what a socket read gives at most, too).
_PIECE: Final = 64 * 1024


class _Decoder:
    """Undoes one content coding, never yielding more than :data:`_PIECE` bytes at once."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
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


def decoder_for(content_encoding: str | None) -> _Decoder | None:
    """What undoes a body's *content_encoding* (``None``: nothing to undo).

    Raises:
        TransportError: a coding this module cannot decode within a bound.
    """
    if not content_encoding:
        return None
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise TransportError(f"unsupported Content-Encoding {content_encoding!r}")
    return _Decoder(codings[0])


async def _pieces(reply: Answer) -> AsyncIterator[bytes]:
    """The body of *reply*, decoded, in pieces of at most :data:`_PIECE` bytes (raw pieces as the
    connection gives them, 64 KiB at most)."""
    decoder = decoder_for(reply.headers.get("content-encoding"))
    if decoder is None:
        async for raw in reply.aiter_raw():
            yield raw
        return
    try:
        async for raw in reply.aiter_raw():
            for piece in decoder.feed(raw):
                if piece:
                    yield piece
        rest = decoder.flush()
    except zlib.error as exc:
        raise TransportError(f"undecodable {decoder.coding} body: {exc}") from exc
    if rest:
        yield rest


async def read_body(reply: Answer, limit: int, what: str = "the answer") -> bytes:
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


async def sse_events(reply: Answer, limit: int) -> AsyncIterator[SSEEvent]:
    """The events of an SSE response, each line and each event's data at most *limit* bytes (see
    :class:`~._sse.SSEParser`, which reads them).

    Raises:
        MessageTooLarge: a line or an event passed *limit*; nothing more of the stream was read.
    """
    parser = SSEParser(limit)
    async for piece in _pieces(reply):
        for event in parser.feed(piece):
            yield event
    last = parser.close()
    if last is not None:
        yield last
