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

The keep-alive timeout is kept with one timer per connection rather than one per request: uvicorn
arms a timer as each response ends and cancels it when the next request's first bytes come, two
timer operations per request on a busy connection. Here a response's end notes the time, and a
timer already running when it fires looks at how long the connection has been idle: past the
timeout it closes it (as uvicorn would have), otherwise it waits out the rest.

The header count is checked once the head is parsed, not per header field: the head's size bounds
what that parse can hold, and a call per field would cost every request.

Each request's response is written by :class:`~._uvicorn_cycle.Cycle` (a JSON answer in one
write, its head more cheaply than uvicorn writes it). Anything the protocol writes itself (a 400,
a 431) goes after a head that is held.

The client's going away is told to the app as it happens (:data:`._asgi.ON_DISCONNECT`, in each
request's scope): a request that waits registers a callback, which ``connection_lost`` calls, so
noticing a disconnect costs nothing until it happens, where an ASGI app otherwise keeps a task
waiting on ``receive()`` for each such request. The callback is forgotten when the response ends.

The held head, the cheaper head and the keep-alive timer follow uvicorn's own request cycle and
end-of-response step closely (parts are copies of uvicorn 0.54's), so they are used only with the
uvicorn releases they were written against (``_FITS_UVICORN``); with any other, the protocol keeps
its bounds and leaves the cycle, the head and the keep-alive timer to uvicorn as it is.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from collections.abc import Callable
from typing import Final

import httptools
from uvicorn import __version__ as _uvicorn_version
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ._asgi import ON_DISCONNECT
from ._uvicorn_cycle import Cycle

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_KEEP_ALIVE",
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_MAX_HEADER_COUNT",
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "bounded_protocol",
]

logger = logging.getLogger("mcpkit.http")

#: Whether the installed uvicorn is one whose cycle and end-of-response step Cycle and
#: _BoundedHttpTools copy (see the module docstring); otherwise uvicorn's own are used.
_FITS_UVICORN: bool = _uvicorn_version.startswith("0.54.")

DEFAULT_MAX_HEADER_BYTES: Final = 64 * 1024
DEFAULT_MAX_HEADER_COUNT: Final = 100
DEFAULT_HEADER_TIMEOUT: Final = 10.0
DEFAULT_KEEP_ALIVE: Final = 5
DEFAULT_SHUTDOWN_TIMEOUT: Final = 5


def _reply(status: bytes) -> bytes:
    return b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class _TooManyHeaders(Exception):
    """Raised from the parser's header callback to stop parsing a head over the count."""


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
        #: The cycle whose response head is held for its body (see Cycle).
        self.holding: Cycle | None = None
        self._head_timer: asyncio.TimerHandle | None = self.loop.call_later(
            self.header_timeout, self._head_late
        )

        #: When the connection last became idle (its last response ended, nothing since), or None
        #: while a request is coming or being answered; and the timer that checks it.
        self._idle_since: float | None = None
        self._keep_alive_timer: asyncio.TimerHandle | None = None

        #: What the request being answered asked to be called when the client goes away (see
        #: ON_DISCONNECT), whether it has, and the extension offering it (one per connection).
        self._on_lost: Callable[[], None] | None = None
        self._lost = False
        self._disconnect_hook: dict[object, object] = {"register": self._register_on_lost}

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        if self._keep_alive_timer is not None:
            self._keep_alive_timer.cancel()
            self._keep_alive_timer = None
        super().connection_lost(exc)  # the cycle is marked disconnected first: its sends do nothing
        self._lost = True
        callback, self._on_lost = self._on_lost, None
        if callback is not None:
            _call_back(callback)

    def _register_on_lost(self, callback: Callable[[], None]) -> None:
        if self._lost:
            _call_back(callback)
        else:
            self._on_lost = callback

    def data_received(self, data: bytes) -> None:
        self._idle_since = None  # uvicorn cancels its keep-alive timer here
        if _FITS_UVICORN:
            # uvicorn's data_received, but for the keep-alive timer (which this class never arms).
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError:
                msg = "Invalid HTTP request received."
                self.logger.warning(msg)
                self.send_400_response(msg)
                return
            except httptools.HttpParserUpgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                else:
                    self._unsupported_upgrade_warning()
        else:
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
            self._write_held()
            super().send_400_response(msg)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        if self._head_timer is not None:  # (seldom: a head that came in pieces)
            self._stop_head_timer()
        if len(self.headers) > self.max_header_count:
            logger.warning("closing a connection whose request has over %d headers", self.max_header_count)
            self._refuse(b"431 Request Header Fields Too Large")
            raise _TooManyHeaders  # httptools stops parsing; uvicorn's own 400 is skipped above
        # A new dict per request (the app may add to its scope's), sharing the connection's hook.
        self.scope["extensions"] = {ON_DISCONNECT: self._disconnect_hook}
        if not _FITS_UVICORN:
            super().on_headers_complete()
            return
        # The rest is uvicorn's HttpToolsProtocol.on_headers_complete, but for the cycle: ours
        # (made as a Cycle: changing the class of uvicorn's afterwards costs more than it saves).
        http_version = self.parser.get_http_version()
        self.scope["method"] = self.parser.get_method().decode("ascii")
        if http_version != "1.1":
            self.scope["http_version"] = http_version
        if self.parser.should_upgrade() and self._should_upgrade():
            return
        parsed_url = httptools.parse_url(self.url)
        raw_path = parsed_url.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        self.scope["path"] = self.root_path + path
        self.scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        self.scope["query_string"] = parsed_url.query or b""
        app = self.app
        if self.limit_concurrency is not None and (
            len(self.connections) >= self.limit_concurrency or len(self.tasks) >= self.limit_concurrency
        ):
            app = service_unavailable
            self.logger.warning("Exceeded concurrency limit.")
        existing_cycle = self.cycle
        self.cycle = Cycle(
            scope=self.scope,
            transport=self.transport,
            flow=self.flow,
            logger=self.logger,
            access_logger=self.access_logger,
            access_log=self.access_log,
            default_headers=self.server_state.default_headers,
            message_event=asyncio.Event(),
            expect_100_continue=self.expect_100_continue,
            keep_alive=http_version != "1.0" and self.parser.should_keep_alive(),
            on_response=self.on_response_complete,
        )
        self.cycle.protocol = self
        if existing_cycle is None or existing_cycle.response_complete:
            if self.config.reset_contextvars:
                self._start_asgi_task(self.cycle, app)
            else:  # uvicorn's _start_asgi_task, in line
                task = self.loop.create_task(self.cycle.run_asgi(app))
                task.add_done_callback(self.tasks.discard)
                self.tasks.add(task)
        else:  # pipelined: it waits for the one before it
            self.flow.pause_reading()
            self.pipeline.appendleft((self.cycle, app))

    def on_response_complete(self) -> None:
        self._in_head = True  # the next request's head, if any, starts now
        self._on_lost = None  # answered: its request has nothing left to cancel
        if not _FITS_UVICORN:
            super().on_response_complete()
            return
        # uvicorn's HttpToolsProtocol.on_response_complete, but for the keep-alive timer.
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        if self.timeout_keep_alive_task is not None:  # (never armed by this class; a subclass might)
            self._unset_keepalive_if_required()
        if self.flow.read_paused:
            self.flow.resume_reading()
        if self.pipeline:  # a request waiting behind this one starts now
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
            return
        self._idle_since = self.loop.time()
        if self._keep_alive_timer is None:
            self._keep_alive_timer = self.loop.call_later(self.timeout_keep_alive, self._keep_alive_due)

    def _keep_alive_due(self) -> None:
        self._keep_alive_timer = None
        if self._idle_since is None:
            return  # busy: the end of its response arms the timer again
        left = self._idle_since + self.timeout_keep_alive - self.loop.time()
        if left > 0.001:  # not idle long enough yet (a millisecond is the loop's timer resolution)
            self._keep_alive_timer = self.loop.call_later(left, self._keep_alive_due)
        else:
            self.timeout_keep_alive_handler()

    def _write_held(self) -> None:
        if self.holding is not None:
            self.holding.write_head()

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
        self._write_held()
        self.transport.write(_reply(status))
        self.transport.close()


def _call_back(callback: Callable[[], None]) -> None:
    """Call the app's disconnect callback: one that fails is the app's to fix, logged here, and
    must not stop the connection's own ending."""
    try:
        callback()
    except Exception:
        logger.exception("a callback for a lost connection failed")


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
