"""Serving the app with uvicorn, with the bounds uvicorn does not set by itself.

uvicorn's fast HTTP parser (httptools) accumulates a request head for as long as it keeps coming: an
unterminated 50 MB header line grows the process by more than that, and a connection that never
finishes its head (or never sends one) is never timed out (``timeout_keep_alive`` only runs between
requests). uvicorn's pure-Python ``h11`` parser does cap the head (``h11_max_incomplete_event_size``)
but costs a third or more of the throughput and still has no head timeout. So the protocol below
is httptools with two checks of its own, made per chunk read, outside the per-request path:

* the head (request line and headers) of each request may be at most *max_header_bytes*; beyond
  that the client gets 431 and the connection is closed, having cost at most that plus one read;
* a head may carry at most *max_header_count* header fields (431 beyond): many tiny headers cost a
  tuple each and a pass over them in every layer that reads headers;
* a head must be complete within *header_timeout* seconds of its first byte (or of the connection
  opening); otherwise the connection is closed (408). Bodies have their own timeout in the app
  (``body_timeout``), idle keep-alive connections uvicorn's ``timeout_keep_alive``.

The header count is checked once the head is parsed, not per header field: the head's size bounds
what that parse can hold, and a call per field would cost every request.

A response leaves in one write where uvicorn makes two (its head, then its body): the head is held
until the body comes, or the loop's turn ends, so a JSON answer costs one ``send`` system call and
an event stream's head still leaves at once. Anything the protocol writes itself (a 400, a 431)
goes after what is held.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_KEEP_ALIVE",
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_MAX_HEADER_COUNT",
    "bounded_protocol",
    "serve",
]

logger = logging.getLogger("mcpkit.http")

DEFAULT_MAX_HEADER_BYTES: Final = 64 * 1024
DEFAULT_MAX_HEADER_COUNT: Final = 100
DEFAULT_HEADER_TIMEOUT: Final = 10.0
DEFAULT_KEEP_ALIVE: Final = 5
DEFAULT_SHUTDOWN_TIMEOUT: Final = 5


def _reply(status: bytes) -> bytes:
    return b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class _TooManyHeaders(Exception):
    """Raised from the parser's header callback to stop parsing a head over the count."""


class _OneWrite(asyncio.Transport):
    """The transport a response is written through: its first write (the head) is held until the
    next one (the body, or a stream's first event), which takes it along, or until the loop's turn
    ends. Only one write is ever held, so the real transport's flow control sees every byte at
    most one write late (a handler streaming without pause still waits on the socket)."""

    __slots__ = ("_flushing", "_held", "_loop", "_transport", "hold_next")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held = b""
        self._flushing: asyncio.Handle | None = None
        #: Whether the next write is a response's first (set again by the protocol as each ends).
        self.hold_next = True

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.hold_next:
            self.hold_next = False
            self._held = bytes(data)
            self._flushing = self._loop.call_soon(self.flush)
            return
        if self._held:
            self.flush(self._held + data)
            return
        if not self._transport.is_closing():
            self._transport.write(data)

    def flush(self, data: bytes = b"") -> None:
        """Write what is held (and *data* instead, which includes it, if given)."""
        if self._flushing is not None:
            self._flushing.cancel()
            self._flushing = None
        data, self._held = data or self._held, b""
        if data and not self._transport.is_closing():
            self._transport.write(data)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def close(self) -> None:
        self.flush()
        self._transport.close()


class _BoundedHttpTools(HttpToolsProtocol):
    """httptools with a cap on the request head and a deadline for it (see the module docstring)."""

    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    max_header_count: int = DEFAULT_MAX_HEADER_COUNT
    header_timeout: float = DEFAULT_HEADER_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_bytes = 0
        self._refused = False
        self._in_head = True  # waiting for (the rest of) a request head
        self._writer = _OneWrite(transport, self.loop)
        self._head_timer: asyncio.TimerHandle | None = self.loop.call_later(
            self.header_timeout, self._head_late
        )

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # Counted after parsing: a chunk that completes the head (with a body behind it) is fine.
        if self._in_head and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > self.max_header_bytes:
                logger.warning(
                    "closing a connection whose request head exceeds %d bytes", self.max_header_bytes
                )
                self._refuse(b"431 Request Header Fields Too Large")
            elif self._head_timer is None:
                self._head_timer = self.loop.call_later(self.header_timeout, self._head_late)

    def send_400_response(self, msg: str) -> None:
        if not self._refused:  # a parse error of ours has been answered already
            self._writer.flush()
            super().send_400_response(msg)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        self._stop_head_timer()
        if len(self.headers) > self.max_header_count:
            logger.warning("closing a connection whose request has over %d headers", self.max_header_count)
            self._refuse(b"431 Request Header Fields Too Large")
            raise _TooManyHeaders  # httptools stops parsing; uvicorn's own 400 is skipped above
        cycle = self.cycle
        super().on_headers_complete()
        if self.cycle is not cycle:  # a request to answer (not an upgrade): written through _OneWrite
            self.cycle.transport = self._writer

    def on_response_complete(self) -> None:
        self._in_head = True  # the next request's head, if any, starts now
        self._writer.flush()
        self._writer.hold_next = True
        super().on_response_complete()

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self._in_head and not self.transport.is_closing():
            logger.info("closing a connection whose request head took over %g s", self.header_timeout)
            self._refuse(b"408 Request Timeout")

    def _refuse(self, status: bytes) -> None:
        self._refused = True
        self._stop_head_timer()
        self._writer.flush()
        self.transport.write(_reply(status))
        self.transport.close()


def bounded_protocol(
    max_header_bytes: int, header_timeout: float, max_header_count: int = DEFAULT_MAX_HEADER_COUNT
) -> type[asyncio.Protocol]:
    """The httptools protocol class with these bounds."""
    return type(
        "BoundedHttpTools",
        (_BoundedHttpTools,),
        {
            "max_header_bytes": max_header_bytes,
            "max_header_count": max_header_count,
            "header_timeout": header_timeout,
        },
    )


def serve(
    app: Any,
    *,
    host: str,
    port: int,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    max_header_count: int = DEFAULT_MAX_HEADER_COUNT,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    keep_alive_timeout: int = DEFAULT_KEEP_ALIVE,
    shutdown_timeout: int = DEFAULT_SHUTDOWN_TIMEOUT,
    trusted_proxies: Sequence[str] = (),
    sock: socket.socket | None = None,
    drain: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Serve *app* with uvicorn until interrupted (blocking); on SIGTERM or SIGINT, new
    connections are refused, *drain* ends the long-lived streams (GET and listen streams, whose
    clients reconnect), and requests still running get *shutdown_timeout* seconds before they are
    cancelled. *sock*: serve this listening socket (shared by worker processes) instead of
    binding *host* and *port*."""
    import uvicorn

    class DrainingServer(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            for server in self.servers:
                server.close()  # refuse new connections first, then end the streams
            if drain is not None:
                try:
                    await drain()
                except Exception:
                    logger.exception("draining the app failed")
            await super().shutdown(sockets)

    # Proxy headers only from the proxies named: believed from anyone, X-Forwarded-For would let
    # every caller pick its own address (and so its own share of the per-client limits). Off, it
    # costs nothing; no Server header either (it only advertises the stack).
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=bounded_protocol(max_header_bytes, header_timeout, max_header_count),
        timeout_keep_alive=keep_alive_timeout,
        timeout_graceful_shutdown=shutdown_timeout,
        log_level="warning",
        lifespan="on",
        proxy_headers=bool(trusted_proxies),
        forwarded_allow_ips=list(trusted_proxies) or None,
        server_header=False,
        access_log=False,  # never shown at this log level, but uvicorn formats each line first
    )
    DrainingServer(config).run(sockets=[sock] if sock is not None else None)
