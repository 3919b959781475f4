"""The client's kept-alive connections to one origin, and a request's answer to await when it must be.

A :class:`Pool` holds one :class:`~._wire.Connection` per request in flight, up to
*max_connections*; a connection whose answer is complete waits, idle, for the next request (the most
recently used first, so that a client calling one at a time uses one connection), and one idle for
longer than *keepalive* seconds is closed rather than reused (a server closes its idle ones too:
uvicorn after 5 s). :meth:`Pool.idle` is the hot path: a connection at hand, or ``None``, with
no waiting. :meth:`Pool.acquire` opens one (or waits for one) when none is.

:meth:`Pool.open` sends one request and returns its :class:`StreamedResponse` once the head has
come: for the requests that are rare or long (a GET stream, DELETE, an auth flow's tries), read
with ``async for``, as httpx's streaming responses are (``status_code``, ``headers``,
``aiter_raw()``, ``aclose()``), so the bounded readers of :mod:`._bounded` read both.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Final
from urllib.parse import urlsplit

from ._wire import ConnectError, Connection, ConnectionLost, ConnectTimeout

__all__ = ["Origin", "Pool", "StreamedResponse", "request_bytes"]

#: How long a connection is given to open (TCP and TLS), as httpx's ``connect`` timeout was.
CONNECT_TIMEOUT: Final = 10.0
#: A streamed answer buffers at most this much unread before the connection stops reading.
_HIGH_WATER: Final = 256 * 1024


class Origin:
    """Where a URL's requests go: scheme, host and port, and the request target (path and query).

    >>> o = Origin("http://127.0.0.1:8000/mcp?x=1")
    >>> o.host_header, o.target, o.tls
    (b'127.0.0.1:8000', b'/mcp?x=1', False)
    >>> Origin("https://example.com/mcp").port
    443
    """

    __slots__ = ("host", "host_header", "port", "target", "tls")

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL: {url!r}")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        self.host_header = (host if self.port == default else f"{host}:{self.port}").encode("idna")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.target = target.encode("ascii")

    @property
    def key(self) -> tuple[bool, str, int]:
        return (self.tls, self.host, self.port)


def request_bytes(method: bytes, origin: Origin, target: bytes, headers: bytes, body: bytes) -> bytes:
    """A whole request: its head (*headers* already ``Name: value\\r\\n`` lines) and *body*.

    >>> request_bytes(b"POST", Origin("http://h/mcp"), b"/mcp", b"Accept: */*\\r\\n", b"{}")
    b'POST /mcp HTTP/1.1\\r\\nHost: h\\r\\nAccept: */*\\r\\nContent-Length: 2\\r\\n\\r\\n{}'
    """
    length = b"Content-Length: %d\r\n" % len(body) if body or method == b"POST" else b""
    return b"%s %s HTTP/1.1\r\nHost: %s\r\n%s%s\r\n%s" % (
        method,
        target,
        origin.host_header,
        headers,
        length,
        body,
    )


def header_lines(headers: Mapping[str, str]) -> bytes:
    """*headers* as request header lines.

    Raises:
        ValueError: a name or value a header cannot carry (a line break would start a new header).
    """
    lines = []
    for name, value in headers.items():
        if not name.isascii() or not name.isprintable() or ":" in name or " " in name or not name:
            raise ValueError(f"not a header name: {name!r}")
        if "\r" in value or "\n" in value or "\0" in value:
            raise ValueError(f"header {name} has a line break or NUL in its value")
        lines.append(f"{name}: {value}\r\n".encode("latin-1"))
    return b"".join(lines)


class Pool:
    """The connections to one origin."""

    def __init__(self, origin: Origin, *, max_connections: int = 100, keepalive: float = 4.0) -> None:
        self.origin = origin
        self.max_connections = max_connections
        self.keepalive = keepalive
        self._idle: list[Connection] = []
        self._open: set[Connection] = set()
        #: Closed, their transports not yet done (a TLS one exchanges its closing alerts first).
        self._closing: dict[Connection, asyncio.Future[None]] = {}
        self._count = 0  # open or opening
        self._waiters: collections.deque[asyncio.Future[Connection | None]] = collections.deque()
        self._ssl: ssl.SSLContext | None = None
        self._loop = asyncio.get_running_loop()
        self._closed = False

    def idle(self) -> Connection | None:
        """An open connection no request is using, or ``None``."""
        idle = self._idle
        while idle:
            connection = idle.pop()
            if not connection.closed and self._loop.time() - connection.idle_since < self.keepalive:
                return connection
            connection.close()
        return None

    async def acquire(self) -> Connection:
        """A connection for one request: an idle one, a new one, or the first one freed.

        Raises:
            ConnectionLost: the connection could not be opened (with the reason).
        """
        while True:
            connection = self.idle()
            if connection is not None:
                return connection
            if self._closed:
                raise ConnectError("the client is closed")
            if self._count < self.max_connections:
                return await self._connect()
            waiter: asyncio.Future[Connection | None] = self._loop.create_future()
            self._waiters.append(waiter)
            try:
                handed = await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled() and (given := waiter.result()) is not None:
                    self.release(given)
                raise
            if handed is not None:
                return handed

    async def _connect(self) -> Connection:
        origin = self.origin
        self._count += 1
        try:
            tls = self._context() if origin.tls else None
            async with asyncio.timeout(CONNECT_TIMEOUT):
                _, connection = await self._loop.create_connection(
                    lambda: Connection(self),
                    origin.host,
                    origin.port,
                    ssl=tls,
                    server_hostname=origin.host if tls is not None else None,
                )
        except TimeoutError:
            self._count -= 1
            self._wake()
            raise ConnectTimeout(
                f"no connection to {origin.host}:{origin.port} within {CONNECT_TIMEOUT} s"
            ) from None
        except OSError as exc:  # refused, unreachable, a failed TLS handshake (ssl.SSLError)
            self._count -= 1
            self._wake()
            raise ConnectError(f"no connection to {origin.host}:{origin.port}: {exc}") from exc
        except BaseException:
            self._count -= 1
            self._wake()
            raise
        if self._closed:  # closed while this one was opening: nothing would ever close it
            connection.close()
            raise ConnectError("the client is closed")
        self._open.add(connection)
        return connection

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:  # made on first use: loading the system's certificates takes ~10 ms
            self._ssl = ssl.create_default_context()
            self._ssl.set_alpn_protocols(["http/1.1"])
        return self._ssl

    def release(self, connection: Connection) -> None:
        """*connection*'s answer is complete: it takes the next request."""
        if self._closed:
            connection.close()
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        connection.idle_since = self._loop.time()
        self._idle.append(connection)

    def discard(self, connection: Connection) -> None:
        """*connection* is closed: it no longer counts, and a waiting request may open another."""
        self._count -= 1
        self._open.discard(connection)
        transport = connection.transport
        if transport is not None and not connection.lost:
            self._closing[connection] = self._loop.create_future()
        if connection in self._idle:
            self._idle.remove(connection)
        self._wake()

    def gone(self, connection: Connection) -> None:
        """*connection*'s transport is done."""
        connection.lost = True
        done = self._closing.pop(connection, None)
        if done is not None and not done.done():
            done.set_result(None)

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # "try again": there is room for a connection now
                return

    def close(self) -> None:
        """Close every connection (what they carry is abandoned), and refuse new ones."""
        self._closed = True
        for connection in list(self._open):
            connection.close()
        self._idle.clear()
        self._wake()

    async def aclose(self, grace: float = 1.0) -> None:
        """:meth:`close`, then wait (*grace* seconds at most) for the transports to be done: a TLS
        connection's closing alerts take a round trip, and a loop ended before that leaves its
        socket open. Those still not done then are aborted."""
        self.close()
        closing = dict(self._closing)
        if closing:
            await asyncio.wait(closing.values(), timeout=grace)
        for connection in closing:
            if not connection.lost and connection.transport is not None:
                connection.transport.abort()

    async def open(
        self, method: bytes, target: bytes, headers: bytes, body: bytes = b"", *, keep: bool = True
    ) -> StreamedResponse:
        """Send one request and return its answer once its head has come; *keep* false closes
        the connection after it (a stream's: a server may serve nothing more on it).

        Raises:
            ConnectionLost: no connection, or it ended before the head (a kept-alive connection
                the server had just closed is tried once more on a new one).
        """
        request = request_bytes(method, self.origin, target, headers, body)
        for attempt in (1, 2):
            connection = await self.acquire()
            response = StreamedResponse(connection)
            fresh = not connection.reused
            connection.keep = keep
            connection.send(request, response)
            try:
                await response.started
            except ConnectionLost:
                if fresh or attempt == 2:
                    raise
                continue
            except BaseException:
                connection.close()
                raise
            return response
        raise AssertionError("unreachable")


class StreamedResponse:
    """An answer read as it arrives, holding at most about :data:`_HIGH_WATER` bytes unread."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self.started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.status_code = 0
        self.headers: dict[str, str] = {}
        self._pieces: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._paused = False
        self._ended = False
        self._error: BaseException | None = None
        self._wakeup: asyncio.Future[None] | None = None

    # -- what the connection calls -----------------------------------------------------------------

    def head(self, status: int, headers: dict[str, str]) -> None:
        self.status_code = status
        self.headers = headers
        if not self.started.done():
            self.started.set_result(None)

    def body(self, data: bytes) -> None:
        self._pieces.append(data)
        self._buffered += len(data)
        if self._buffered > _HIGH_WATER and not self._paused:
            self._paused = True
            self._connection.pause_reading()
        self._wake()

    def end(self) -> None:
        self._ended = True
        self._wake()

    def lost(self, exc: BaseException) -> None:
        if not self.started.done():
            self.started.set_exception(exc)
            return
        self._error = exc
        self._wake()

    def _wake(self) -> None:
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    # -- what the reader calls ---------------------------------------------------------------------

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body's pieces as they come (chunked framing undone, content codings not).

        Raises:
            ConnectionLost: the connection ended before the body did.
        """
        while True:
            while self._pieces:
                piece = self._pieces.popleft()
                self._buffered -= len(piece)
                if self._paused and self._buffered <= _HIGH_WATER // 2:
                    self._paused = False
                    self._connection.resume_reading()
                yield piece
            if self._ended:
                return
            if self._error is not None:
                raise self._error
            self._wakeup = asyncio.get_running_loop().create_future()
            try:
                await self._wakeup
            finally:
                self._wakeup = None

    async def aread(self) -> bytes:
        """The whole body (for answers already bounded by whoever asked)."""
        return b"".join([piece async for piece in self.aiter_raw()])

    async def aclose(self) -> None:
        """Done with the answer: one not read to its end closes its connection."""
        if not self._ended:
            self._ended = True
            self._connection.close()

    async def __aenter__(self) -> StreamedResponse:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
