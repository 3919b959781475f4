"""The response of each request served by :mod:`._uvicorn`'s protocol: uvicorn's cycle, written cheaper.

A response with a Content-Length leaves in one write where uvicorn makes two (its head, then its
body): the head is held until the body comes (which, from this app, is at once), so a JSON answer
costs one ``send`` system call. An event stream's head (chunked) leaves at once. The protocol
writes a held head before anything of its own (a 400, a 431).

A response head is also written more cheaply than uvicorn writes it: the same fields, the same
checks, but a field already checked once (``content-type: application/json``, the ``date``
uvicorn adds) is not run through uvicorn's two regular expressions again, nor is a
``content-length`` of digits. That was a tenth of the server's CPU per request.

Parts are copies of uvicorn 0.54's cycle; the protocol uses this one only with the uvicorn
releases it was written against (see :mod:`._uvicorn`).
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from uvicorn.protocols.http.httptools_impl import (
    HEADER_RE,
    HEADER_VALUE_RE,
    STATUS_LINE,
    RequestResponseCycle,
)

__all__ = ["Cycle"]


class _Holder(Protocol):
    """The connection's protocol, as far as a cycle sees it: which cycle's head it holds."""

    holding: Cycle | None


#: Response header fields checked once, by their pair as the app (or uvicorn: ``date``) gives them,
#: to the line they are written as. Only fields that mean nothing to the framing (not
#: content-length, transfer-encoding nor connection, which the cycle reads); bounded in entries
#: and in the size of each, as the request headers' cache is.
_FIELD_LINES: dict[tuple[bytes, bytes], bytes] = {}
_FIELD_LINES_ENTRIES: Final = 256
_FIELD_LINE_BYTES: Final = 256
_FRAMING: Final = frozenset({b"content-length", b"transfer-encoding", b"connection"})


class Cycle(RequestResponseCycle):
    """uvicorn's request/response cycle, writing the response head with fewer checks repeated,
    and a Content-Length response's head together with its body.

    Everything else is uvicorn's own: a stream's body, a second body write, and the head itself
    when the writer is paused, the client gone or an access log on (it is then written exactly as
    uvicorn writes it, at once).
    """

    #: The head of a response with a Content-Length, until its body goes with it; and the
    #: protocol (which writes a held head before anything of its own).
    _head = b""
    protocol: _Holder | None = None

    async def send(self, message: Any) -> None:
        head = self._head
        if head:
            # What uvicorn's send does with a body once the head is written, with the head in the
            # same write; anything else goes to uvicorn with the head written first.
            if message["type"] != "http.response.body" or self.flow.write_paused or self.disconnected:
                if not self.disconnected:
                    self.write_head()
                await super().send(message)
                return
            self._head = b""
            if self.protocol is not None:
                self.protocol.holding = None
            body = message.get("body", b"")
            if self.scope["method"] == "HEAD":
                self.expected_content_length = 0
                data = head
            elif len(body) > self.expected_content_length:
                self.transport.write(head)
                raise RuntimeError("Response content longer than Content-Length")
            else:
                self.expected_content_length -= len(body)
                data = head + body
            self.transport.write(data)
            if not message.get("more_body", False):
                if self.expected_content_length != 0:
                    raise RuntimeError("Response content shorter than Content-Length")
                self.response_complete = True
                self.message_event.set()
                if not self.keep_alive:
                    self.transport.close()
                self.on_response()
            return
        # A response's head: written now, or held for its body.
        if (
            self.response_started
            or self.flow.write_paused
            or self.disconnected
            or self.access_log
            or message["type"] != "http.response.start"
        ):
            await super().send(message)
            return
        self.response_started = True
        self.waiting_for_100_continue = False
        status = message["status"]
        content = [STATUS_LINE[status]]
        closes = False
        lines = _FIELD_LINES
        for fields in (self.default_headers, message.get("headers", ())):
            for name, value in fields:
                line = lines.get((name, value))
                if line is not None:
                    content.append(line)
                    continue
                if name == b"content-length" and value.isdigit():  # digits: nothing to check
                    if self.chunked_encoding is None:
                        self.expected_content_length = int(value)
                        self.chunked_encoding = False
                    content.append(b"content-length: " + value + b"\r\n")
                    continue
                # The rest as uvicorn does it (RequestResponseCycle.send).
                if HEADER_RE.search(name):
                    raise RuntimeError("Invalid HTTP header name.")
                if HEADER_VALUE_RE.search(value):
                    raise RuntimeError("Invalid HTTP header value.")
                lower = name.lower()
                line = lower + b": " + value + b"\r\n"
                if lower == b"content-length" and self.chunked_encoding is None:
                    self.expected_content_length = int(value.decode())
                    self.chunked_encoding = False
                elif lower == b"transfer-encoding" and value.lower() == b"chunked":
                    self.expected_content_length = 0
                    self.chunked_encoding = True
                elif lower == b"connection":
                    if b"close" in [token.lower().strip() for token in value.split(b",")]:
                        self.keep_alive = False
                        closes = True
                elif lower not in _FRAMING and len(line) <= _FIELD_LINE_BYTES:
                    if len(lines) >= _FIELD_LINES_ENTRIES:
                        lines.clear()  # whatever is sent now gets cached anew
                    lines[(name, value)] = line
                content.append(line)
        if not self.keep_alive and not closes:
            content.append(b"connection: close\r\n")
        if self.chunked_encoding is None and self.scope["method"] != "HEAD" and status not in (204, 304):
            # Neither content-length nor transfer-encoding given.
            self.chunked_encoding = True
            content.append(b"transfer-encoding: chunked\r\n")
        content.append(b"\r\n")
        if self.chunked_encoding or self.protocol is None:
            self.transport.write(b"".join(content))  # a stream: its head leaves now
        else:
            self._head = b"".join(content)
            self.protocol.holding = self

    async def receive(self) -> Any:
        # uvicorn's receive when the request's body is there already (one read brings a whole
        # small request): the same steps and message, without awaiting an Event that is set.
        event = self.message_event
        if event.is_set() and not (
            self.waiting_for_100_continue or self.disconnected or self.response_complete
        ):
            if self.flow.read_paused:
                self.flow.resume_reading()
            event.clear()
            message = {"type": "http.request", "body": bytes(self.body), "more_body": self.more_body}
            self.body = bytearray()
            return message
        return await super().receive()

    def write_head(self) -> None:
        """Write the head held (if any) on its own."""
        head, self._head = self._head, b""
        if self.protocol is not None and self.protocol.holding is self:
            self.protocol.holding = None
        if head and not self.transport.is_closing():
            self.transport.write(head)
