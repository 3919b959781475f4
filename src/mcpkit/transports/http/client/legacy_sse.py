"""The 2024-11-05 HTTP+SSE transport, client side: the fallback for servers that predate Streamable HTTP.

"Clients wanting to support older servers should: attempt to POST an InitializeRequest to the server
URL ... If it fails with an HTTP 4xx status code (e.g., 405 Method Not Allowed or 404 Not Found):
issue a GET request to the server URL, expecting that this will open an SSE stream and return an
``endpoint`` event as the first event." (2025-03-26, basic/transports, backwards compatibility)

Everything the server says arrives on that one stream; the client POSTs each message to the endpoint,
on the same kept-alive connections as Streamable HTTP (:mod:`._requests`). No event or line of it is held past ``max_message_bytes`` (see :mod:`._bounded`): one larger ends
the stream, and with it this transport (logged), for nothing else can carry the server's messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from ...._errors import ConnectionClosed, TransportError
from ...stdio import DEFAULT_MAX_MESSAGE_BYTES
from ._bounded import ACCEPT_ENCODING, read_body, sse_events
from ._requests import Requests, merged_headers

if TYPE_CHECKING:
    import httpx

__all__ = ["SSEClientTransport"]

logger = logging.getLogger("mcpkit.client")


class SSEClientTransport:
    """Talks to an HTTP+SSE server whose event stream is at *url*."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        endpoint_timeout: float = 10.0,
        auth: httpx.Auth | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.url = url
        self.endpoint_timeout = endpoint_timeout
        self.max_message_bytes = max_message_bytes
        given = merged_headers(headers, {"Accept-Encoding": ACCEPT_ENCODING, "User-Agent": "mcpkit"})
        given = {k: v for k, v in given.items() if k.lower() not in ("accept", "content-type")}
        self._requests = Requests(url, given, auth=auth, max_body=max_message_bytes)
        # What ends the stream's reading.
        self._ended_by: tuple[type[BaseException], ...] = (*self._requests.errors, ConnectionClosed)
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._endpoint: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._stream: asyncio.Task[None] | None = None
        self._closed = False

    async def open(self) -> None:
        """Open the event stream and wait for the ``endpoint`` event."""
        self._stream = asyncio.ensure_future(self._listen())
        try:
            await asyncio.wait_for(asyncio.shield(self._endpoint), self.endpoint_timeout)
        except (TimeoutError, ConnectionClosed):
            await self.aclose()
            raise ConnectionClosed(f"{self.url} opened no HTTP+SSE stream with an endpoint event") from None

    async def _listen(self) -> None:
        try:
            reply = await self._requests.open("GET", {"Accept": "text/event-stream"}, keep=False)
            try:
                if reply.status_code != 200:
                    raise ConnectionClosed(f"HTTP {reply.status_code} from {self.url}")
                async for event in sse_events(reply, self.max_message_bytes):
                    if event.kind == "endpoint" and event.data and not self._endpoint.done():
                        endpoint = event.data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
                        self._endpoint.set_result(urljoin(self.url, endpoint))
                    elif event.kind == "message" and event.data:
                        self._inbox.put_nowait(event.data)
            finally:
                await reply.aclose()
        except self._ended_by as exc:
            if not self._endpoint.done():
                self._endpoint.set_exception(ConnectionClosed(str(exc)))
        except TransportError as exc:  # too large (MessageTooLarge), or undecodable
            logger.warning("dropping the HTTP+SSE stream of %s: %s (max_message_bytes)", self.url, exc)
            if not self._endpoint.done():
                self._endpoint.set_exception(ConnectionClosed(str(exc)))
        finally:
            self._inbox.put_nowait(None)

    async def receive(self) -> bytes:
        message = await self._inbox.get()
        if message is None:
            self._inbox.put_nowait(None)
            raise EOFError
        return message

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise ConnectionClosed("the HTTP+SSE transport is closed")
        endpoint = await self._endpoint
        try:
            reply = await self._requests.open("POST", {"Content-Type": "application/json"}, message, endpoint)
            try:
                # Nothing of the body is used ("Accepted"), but read, bounded, the connection is kept.
                await read_body(reply, self.max_message_bytes)
            finally:
                await reply.aclose()
        except self._requests.errors as exc:
            raise ConnectionClosed(f"HTTP request to {endpoint} failed: {type(exc).__name__}: {exc}") from exc
        if reply.status_code >= 400:
            data: dict[str, Any] = json.loads(message)
            if "id" in data and "method" in data:  # the request will never be answered: say so
                error = {"code": -32600, "message": f"HTTP {reply.status_code} from the server",
                         "data": {"httpStatus": reply.status_code}}  # fmt: skip
                self._inbox.put_nowait(
                    json.dumps({"jsonrpc": "2.0", "id": data["id"], "error": error}).encode()
                )

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._stream is not None:
            self._stream.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._stream
        await self._requests.aclose()
        self._inbox.put_nowait(None)
