"""What a Streamable HTTP client makes of the answer to one POST, as the answer arrives.

:class:`PostAnswer` is the :class:`~._wire.Receiver` of a POST: a JSON body, or the events of an SSE
stream, go to the transport's inbox (or straight to the session, see
:meth:`HTTPClientTransport._put <.streamable.HTTPClientTransport>`) in the socket's callback, with
no task. The transport's slow path (an auth flow, a proxy, a connection to open) feeds the same
receiver from an :class:`~._requests.Answer` it awaits, so both ways read an answer alike:

* every POST that carries a request answers that request: an error body counts whatever its id (a
  legacy server refusing the ``server/discover`` probe may give it a null id or one of its own), and
  a body that is not JSON-RPC (a legacy server's 404 page, an empty 400) becomes a JSON-RPC error
  with ``data["httpStatus"]``, so the era probe sees "any other error" and falls back to
  ``initialize`` at once instead of waiting for an answer that will never come;
* no body, line or event is held past the transport's ``max_message_bytes``: the request fails with
  an error naming the limit, and the connection is closed;
* an event stream that ends (or breaks) before its request's answer is resumed with ``Last-Event-ID``
  where the server gave ids in a session; otherwise the request fails.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ...._errors import TransportError
from ._bounded import decoder_for
from ._reopen import retry_after
from ._sse import MessageTooLarge, SSEEvent, SSEParser

if TYPE_CHECKING:
    from ._bounded import _Decoder

__all__ = ["PostAnswer", "Sink", "StreamState", "answer_to"]


class StreamState:
    """What a client knows of one response stream: where it got to, and whether it is answered."""

    __slots__ = ("answered", "last_event_id", "retry_ms")

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None
        self.answered = False

    def note(self, event: SSEEvent) -> bytes:
        """Remember where *event* leaves the stream (its id, its ``retry``); its data, to pass on."""
        if event.id is not None:
            self.last_event_id = event.id
        if event.retry is not None:
            self.retry_ms = event.retry
        return event.data


class Sink(Protocol):
    """Where an answer goes: the transport (:class:`~.streamable.HTTPClientTransport`)."""

    url: str
    max_message_bytes: int
    session_id: str | None
    protocol_version: str | None

    def put(self, message: bytes) -> None: ...

    def deliver(self, data: bytes, request_id: Any, stream: StreamState) -> None: ...

    def fail(
        self,
        request_id: Any,
        message: str,
        status: int | None,
        cause: BaseException | None = None,
        retry: float | None = None,
    ) -> None: ...

    def failed(self, answer: PostAnswer, exc: BaseException) -> None: ...

    def forget(self, answer: PostAnswer) -> None: ...

    def resume(self, request_id: Any, stream: StreamState) -> None: ...

    def dropped(self, exc: BaseException) -> None: ...


class PostAnswer:
    """The answer to one POST of *data* (the message, decoded), read as it arrives.

    *abandon* closes what carries the answer (its connection) once the answer is of no more use.
    """

    __slots__ = (
        "_abandon",
        "_body",
        "_decoder",
        "_events",
        "_limit",
        "_status",
        "_transport",
        "data",
        "done",
        "headers",
        "message",
        "request_id",
        "retryable",
        "session",
        "stream",
    )

    def __init__(
        self,
        transport: Sink,
        data: dict[str, Any],
        request_id: Any,
        session: str | None,
        abandon: Callable[[], None],
    ) -> None:
        self._transport = transport
        self.data = data
        #: The request the POST carried (``None`` for a notification or an answer).
        self.request_id = request_id
        #: The session the POST goes out in, fixed when it was sent: its headers carry it even if the
        #: session is being renewed by the time a connection is free, and a 404 says it is gone.
        self.session = session
        self._abandon = abandon
        self._limit = transport.max_message_bytes
        self._status = 0
        self.headers: Mapping[str, str] = {}
        self._body: bytearray | None = None
        self._decoder: _Decoder | None = None
        self._events: SSEParser | None = None
        self.stream: StreamState | None = None
        #: Whether the answer is dealt with (or given up): nothing more of it is read.
        self.done = False
        #: The POST's body, and whether a connection lost before the head means it may be sent again
        #: (the connection was kept alive from an earlier request, and the server had just closed it).
        self.message = b""
        self.retryable = False

    @property
    def started(self) -> bool:
        return self._status != 0

    def head(self, status: int, headers: Mapping[str, str]) -> None:
        self._status = status
        self.headers = headers
        transport = self._transport
        if self.data.get("method") == "initialize":
            transport.session_id = headers.get("mcp-session-id")
        try:
            self._decoder = decoder_for(headers.get("content-encoding"))
        except TransportError as exc:
            self._too_large(exc)
            return
        if headers.get("content-type", "").startswith("text/event-stream"):
            self._events = SSEParser(self._limit)
            self.stream = StreamState()
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._limit:
            self._too_large(
                MessageTooLarge(f"the answer ({declared} bytes by its Content-Length)", self._limit)
            )
            return
        self._body = bytearray()

    def body(self, data: bytes) -> None:
        if self.done:
            return
        try:
            # One decoded piece at a time, each checked before the next is made: a few kilobytes of
            # gzip may decode to gigabytes.
            pieces = (data,) if self._decoder is None else self._decoder.feed(data)
            if self._events is not None:
                self._take_events(pieces)
                return
            body = self._body
            if body is None:
                return
            for piece in pieces:
                body += piece
                if len(body) > self._limit:
                    raise MessageTooLarge("the answer", self._limit)
        except zlib.error as exc:
            self._too_large(TransportError(f"undecodable body: {exc}"))
        except TransportError as exc:
            self._too_large(exc)

    def _take_events(self, pieces: Iterable[bytes]) -> None:
        assert self._events is not None and self.stream is not None
        deliver, stream = self._transport.deliver, self.stream
        for piece in pieces:
            for event in self._events.feed(piece):
                if data := stream.note(event):
                    deliver(data, self.request_id, stream)

    def end(self) -> None:
        if self.done:
            return
        self.done = True
        transport = self._transport
        transport.forget(self)
        if self._events is not None:
            last = self._events.close()
            if last is not None and last.data:
                assert self.stream is not None
                transport.deliver(last.data, self.request_id, self.stream)
            self._stream_ended(None)
            return
        request_id = self.request_id
        if request_id is None:
            return  # a notification or an answer: nothing comes back for it but 202
        status = self._status
        if status == 404 and self.session is not None:
            transport.fail(request_id, "the server has ended this session (404)", 404)
            return
        body = bytes(self._body or b"")
        kind = self.headers.get("content-type", "")
        answer = None
        if kind.startswith("application/json"):
            # The usual answer, a result, goes as it is; anything else is looked at (answer_to).
            plain = status == 200 and b'"result"' in body and b'"error"' not in body
            answer = body if plain else answer_to(request_id, body)
        if answer is None:
            # An empty body, HTML, plain text: "not a recognized modern JSON-RPC error", so the era
            # probe falls back at once, and a 4xx at initialize may mean the HTTP+SSE transport.
            wait = retry_after(self.headers.get("retry-after"))
            transport.fail(request_id, f"HTTP {status} from {transport.url}", status, retry=wait)
            return
        transport.put(answer)
        if self.data.get("method") == "initialize" and status == 200:
            transport.protocol_version = json.loads(answer).get("result", {}).get("protocolVersion")

    def lost(self, exc: BaseException) -> None:
        """The connection ended before the answer did."""
        if self.done:
            return
        self.done = True
        transport = self._transport
        transport.forget(self)
        if self._events is not None:
            self._stream_ended(exc)
            return
        transport.failed(self, exc)

    def _stream_ended(self, exc: BaseException | None) -> None:
        """The event stream ended, cleanly or not (*exc*), with or without the request's answer."""
        stream, request_id, transport = self.stream, self.request_id, self._transport
        assert stream is not None
        if request_id is None or stream.answered:
            return
        if stream.last_event_id is not None and transport.session_id is not None:
            transport.resume(request_id, stream)  # "the client reconnects with GET and Last-Event-ID"
        elif exc is not None:
            transport.failed(self, exc)
        else:
            transport.fail(request_id, "the event stream ended before the response", None)

    def _too_large(self, exc: TransportError) -> None:
        """Give up the answer (too large, or undecodable): the request fails, the connection goes."""
        self.done = True
        self._transport.forget(self)
        self._abandon()
        if self.request_id is not None:
            self._transport.fail(
                self.request_id, f"{exc} (max_message_bytes; from {self._transport.url})", None, exc
            )
        else:
            self._transport.dropped(exc)

    def cancel(self) -> None:
        """The request was cancelled: its answer is abandoned (the server sees the disconnect)."""
        if not self.done:
            self.done = True
            self._abandon()


def answer_to(request_id: Any, body: bytes) -> bytes | None:
    """The JSON body of a POST that carried request *request_id*, as that request's answer; ``None``
    if it is not JSON-RPC.

    An error in answer to a POST belongs to the request the POST carried, whatever id the server put
    on it: servers that cannot read the request answer with a null id (the TypeScript SDK's "Server
    not initialized"), or with an id of their own (the official Python SDK 1.x's ``"server-error"``).
    Taken as they are they would answer nothing, and the request would wait out its timeout.

    >>> answer_to(1, b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "no"}}')
    b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "no"}}'
    >>> answer_to(1, b"<h1>Bad Request</h1>") is None
    True
    """
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, list):
        return body  # a batch's answers carry their own ids
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if "error" in message and "method" not in message and message.get("id") != request_id:
        return json.dumps({**message, "id": request_id}).encode()
    return body
