"""The client's HTTP/1.1 connections: a request in one write, its answer parsed as it arrives.

A :class:`Connection` is an :class:`asyncio.BufferedProtocol`: the loop reads the socket into the
connection's own buffer (asyncio's plain protocols get a fresh 256 KiB bytes object per read, which
costs an mmap, an mremap and a munmap each time: three system calls per answer) and calls it with
what arrived; httptools' parser (the server side's parser too) cuts the answer into its status,
headers and body, and the connection passes them to the :class:`Receiver` of the request it
carries, all in that callback. Nothing waits: no task, no future, no context manager per request.
A receiver that wants to await the answer (:class:`._pool.StreamedResponse`) makes its own future.

One connection carries one request at a time (no pipelining); once an answer is complete and the
server keeps the connection, it goes back to its :class:`._pool.Pool` for the next request.
"""

from __future__ import annotations

import asyncio
from typing import Final, Protocol, cast

import httptools

__all__ = ["ConnectError", "ConnectTimeout", "Connection", "ConnectionLost", "Owner", "ReadError", "Receiver"]


class ConnectionLost(ConnectionError):
    """A request got no whole answer: no connection, or one that ended or broke the HTTP grammar.

    The subclasses are named as httpx names the same failures, which is what the inspector's
    explanations (and people reading ``data["cause"]``) know.
    """


class ConnectError(ConnectionLost):
    """No connection could be opened (refused, unreachable, a failed TLS handshake)."""


class ConnectTimeout(ConnectError):
    """No connection within the time allowed."""


class ReadError(ConnectionLost):
    """The connection ended, or broke the HTTP grammar, before its answer was complete."""


class Receiver(Protocol):
    """What a request's answer goes to, piece by piece, in the socket's callback."""

    def head(self, status: int, headers: dict[str, str]) -> None:
        """The status line and headers have arrived (names in lower case)."""

    def body(self, data: bytes) -> None:
        """A piece of the body (chunked framing undone, content codings not)."""

    def end(self) -> None:
        """The answer is complete."""

    def lost(self, exc: BaseException) -> None:
        """The connection ended first (before :meth:`head`, or in the body)."""


class Owner(Protocol):
    """What a connection tells its pool (:class:`._pool.Pool`)."""

    def release(self, connection: Connection) -> None:
        """The answer is complete and the connection kept: it may take the next request."""

    def discard(self, connection: Connection) -> None:
        """The connection is closed (by either side; its transport may still be shutting down)."""

    def gone(self, connection: Connection) -> None:
        """The connection's transport is done (after a TLS connection's closing exchange, say)."""


#: Bytes the loop reads from a connection's socket at once (an answer larger takes several reads).
READ_SIZE: Final = 65536


class Connection(asyncio.BufferedProtocol):
    """One keep-alive HTTP/1.1 connection to the origin of its *pool*."""

    __slots__ = (
        "_buffer",
        "_framed",
        "_headers",
        "_parser",
        "_pool",
        "_status",
        "closed",
        "idle_since",
        "keep",
        "lost",
        "receiver",
        "reused",
        "transport",
    )

    def __init__(self, pool: Owner) -> None:
        self._pool = pool
        self._parser = httptools.HttpResponseParser(self)
        self._buffer = memoryview(bytearray(READ_SIZE))
        self.transport: asyncio.Transport | None = None
        #: Where the answer being read goes; ``None`` between requests.
        self.receiver: Receiver | None = None
        self.closed = False
        #: Whether the transport is done (``connection_lost`` has come).
        self.lost = False
        #: Whether this connection has carried a request before the current one (a server may have
        #: closed a kept-alive connection just as the request went out: such a request is resent).
        self.reused = False
        self.idle_since = 0.0
        #: Whether the connection goes back to its pool after this answer (if the server keeps it).
        self.keep = True
        self._headers: dict[str, str] = {}
        self._status = 0
        self._framed = False  # the answer says where its body ends (else it ends with the connection)

    # -- the client's side -------------------------------------------------------------------------

    def send(self, request: bytes, receiver: Receiver) -> None:
        """Write *request* (head and body, whole) and have its answer go to *receiver*."""
        self.receiver = receiver
        assert self.transport is not None
        self.transport.write(request)

    def close(self) -> None:
        """Close the connection; a request it carries is abandoned (its receiver is not told)."""
        self.receiver = None
        if not self.closed:
            self.closed = True
            self._pool.discard(self)
            if self.transport is not None:
                self.transport.close()

    def pause_reading(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    # -- asyncio's side ----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)  # uvloop's is one, not a subclass

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer

    def buffer_updated(self, nbytes: int) -> None:
        # The parser hands on copies (headers, body pieces), so the buffer is free again after.
        self.data_received(self._buffer[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            # The receiver's own failures (a body over its limit, say) are its to report; the
            # parser wraps them, and they are unwrapped here so that what it raised is what is said.
            cause = exc.__context__ if isinstance(exc, httptools.HttpParserCallbackError) else None
            self._lose(cause if cause is not None else ReadError(f"the answer broke HTTP/1.1: {exc}"))

    def eof_received(self) -> bool | None:
        receiver = self.receiver
        if receiver is not None and self._status >= 200 and not self._framed:
            # An answer with neither a length nor chunks ends where the connection does.
            self.receiver = None
            receiver.end()
        return None  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._lose(ReadError(str(exc) if exc else "the server closed the connection"))
        self._pool.gone(self)

    def _lose(self, exc: BaseException) -> None:
        receiver = self.receiver
        self.close()
        if receiver is not None:
            receiver.lost(exc)

    # -- httptools' callbacks ----------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._headers = {}

    def on_header(self, name: bytes, value: bytes) -> None:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        seen = self._headers.get(key)
        self._headers[key] = text if seen is None else f"{seen}, {text}"

    def on_headers_complete(self) -> None:
        self._status = status = self._parser.get_status_code()
        if status < 200:
            return  # an interim answer (100 Continue, 103 Early Hints): the real one follows
        headers = self._headers
        self._framed = "content-length" in headers or "chunked" in headers.get("transfer-encoding", "")
        receiver = self.receiver
        if receiver is not None:
            receiver.head(status, headers)

    def on_body(self, body: bytes) -> None:
        receiver = self.receiver
        if receiver is not None:
            receiver.body(body)

    def on_message_complete(self) -> None:
        if self._status < 200:
            return
        receiver = self.receiver
        if receiver is None:
            return  # abandoned meanwhile (the connection is closed)
        self.receiver = None
        if self.keep and self._parser.should_keep_alive():
            self.reused = True
            self._pool.release(self)
        else:
            self.close()
        receiver.end()
