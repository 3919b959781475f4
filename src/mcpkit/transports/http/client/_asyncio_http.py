"""httpx on asyncio's own streams, for the HTTP client's plain-HTTP requests.

The client only ever runs on asyncio, and anyio's layer (httpcore's default under httpx) cost more
CPU than the HTTP itself: cancel scopes around each read and write, and, before every request, a
dict of the socket's attributes built (with a getpeername(2)) and a poll(2) for each idle
connection of the pool. :class:`AsyncioTransport` is httpx's transport with its connection pool on
:class:`_AsyncioNetwork` instead; :data:`POOL_IS_HTTPX_ONLY_STATE` says whether this httpx allows it.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["POOL_IS_HTTPX_ONLY_STATE", "AsyncioTransport"]


class _AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection, on asyncio's streams (what httpcore reads and writes through)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            if timeout is None:
                return await self._reader.read(max_bytes)
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._writer.is_closing():
            raise httpcore.WriteError("the connection is closed")
        try:
            self._writer.write(buffer)
            if timeout is None:
                await self._writer.drain()
                return
            async with asyncio.timeout(timeout):
                await self._writer.drain()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        self._writer.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError as exc:
            self._writer.close()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:  # ssl.SSLError is one
            self._writer.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # Asked of every idle connection before each request ("has the server closed it?"):
            # an end of stream asyncio has already read, rather than a poll(2) of the socket.
            return self._reader.at_eof()
        name = _EXTRA_INFO.get(info)
        return None if name is None else self._writer.get_extra_info(name)


#: httpcore's names for what a connection can tell, and asyncio's.
_EXTRA_INFO = {
    "ssl_object": "ssl_object",
    "client_addr": "sockname",
    "server_addr": "peername",
    "socket": "socket",
}


class _AsyncioNetwork(httpcore.AsyncNetworkBackend):
    """Connections on asyncio's streams instead of anyio's, for the client's plain-HTTP requests.

    The client only ever runs on asyncio, and anyio's layer cost more CPU than the HTTP itself:
    cancel scopes around each read and write, and, before every request, a dict of the socket's
    attributes built (with a getpeername(2)) and a poll(2) for each idle connection of the pool
    (httpcore asks each one whether the server has closed it).
    """

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        local = (local_address, 0) if local_address is not None else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, local_addr=local)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return _AsyncioStream(reader, writer)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_unix_connection(path)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return _AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


#: _AsyncioTransport builds httpx's connection pool itself, which it can only while the pool is all
#: the state httpx's transport keeps (so in the releases it was written against); any other httpx
#: gets httpx's own transport, slower but sure.
POOL_IS_HTTPX_ONLY_STATE: bool = httpx.__version__.startswith(("0.27.", "0.28."))


class AsyncioTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, its connection pool on :class:`_AsyncioNetwork`.

    httpx takes no network backend, so this builds the pool itself (with httpx's default limits)
    where httpx's ``__init__`` would; that would also build an SSL context (~10 ms, certificates
    loaded) which plain HTTP never uses. Every other method is httpx's, and uses only the pool.
    """

    def __init__(self) -> None:  # no super().__init__(): it would build the pool replaced here
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)  # httpx's defaults
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=None,  # plain HTTP only; httpcore makes a default one if TLS is ever asked for
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_AsyncioNetwork(),
        )
