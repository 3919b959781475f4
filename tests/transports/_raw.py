"""A bare HTTP/1.1 MCP server on 127.0.0.1 whose every answer a test writes byte by byte.

It speaks just enough of both eras for a :class:`mcpkit.Client` to connect (``server/discover`` for
2026-07-28, ``initialize`` with a session id for 2025-11-25, 405 for the session's GET stream), and
hands each ``tools/call`` to the test's :data:`Answer`, which returns the pieces to write (each
written, and flushed, on its own, so the client reads them as separate socket reads) or ``None`` to
close the connection without answering. It counts connections, and keeps every request it read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
ERAS = [HANDSHAKE, MODERN]

DISCOVERED = {
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "1"}},
}
INITIALIZED = {
    "protocolVersion": HANDSHAKE,
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "raw", "version": "1"},
}


@dataclass
class Request:
    """One request as the server read it."""

    verb: str
    target: str
    headers: dict[str, str]
    message: dict[str, Any]
    connection: int  # which connection (1, 2, ...) it came on


#: What a test answers a ``tools/call`` with: the pieces to write, or ``None`` to hang up.
Answer = Callable[[Request], Awaitable[list[bytes] | None]]


def result_of(request: Request, text: str) -> bytes:
    """The JSON-RPC result of an echo-like tool answering *text*."""
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return json.dumps({"jsonrpc": "2.0", "id": request.message["id"], "result": result}).encode()


def json_answer(body: bytes, extra: str = "") -> list[bytes]:
    """A whole ``application/json`` answer with its Content-Length, in one piece."""
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n{extra}\r\n"
    return [head.encode() + body]


def chunked(content_type: str, pieces: list[bytes], extra: str = "") -> list[bytes]:
    """An answer in chunked framing, one chunk per piece (each written on its own), then the last."""
    head = f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n{extra}\r\n"
    return [head.encode(), *(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces), b"0\r\n\r\n"]


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    verb, target, _ = head[0].split(" ", 2)
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in head[1:] if h)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return verb, target, headers, body


@dataclass
class RawServer:
    """``async with RawServer(answer).running() as server``: ``server.url`` is its endpoint."""

    answer: Answer
    url: str = ""
    requests: list[Request] = field(default_factory=list)
    connections: int = 0
    #: Connections open right now, and the most ever open at once.
    open_now: int = 0
    most_open: int = 0
    #: Set when a connection the client closed ends (the client gave up an answer).
    hung_up: asyncio.Event = field(default_factory=asyncio.Event)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[RawServer]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp"
        try:
            yield self
        finally:
            server.close()

    def calls(self) -> list[Request]:
        return [r for r in self.requests if r.message.get("method") == "tools/call"]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            while True:
                verb, target, headers, body = await read_request(reader)
                if verb != "POST":
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                    continue
                request = Request(verb, target, headers, json.loads(body), number)
                self.requests.append(request)
                pieces = await self._answer(request)
                if pieces is None:
                    return  # hang up without a word
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.005)  # each piece a read of its own on the client's side
        except (asyncio.IncompleteReadError, ConnectionError):
            self.hung_up.set()
        finally:
            self.open_now -= 1
            writer.close()

    async def _answer(self, request: Request) -> list[bytes] | None:
        method = request.message.get("method")
        reply: Any
        if method == "server/discover":
            reply = {"jsonrpc": "2.0", "id": request.message["id"], "result": DISCOVERED}
        elif method == "initialize":
            reply = {"jsonrpc": "2.0", "id": request.message["id"], "result": INITIALIZED}
            return json_answer(json.dumps(reply).encode(), "mcp-session-id: s-1\r\n")
        elif method == "tools/call":
            return await self.answer(request)
        elif "id" not in request.message:
            return [b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"]
        else:
            reply = {"jsonrpc": "2.0", "id": request.message["id"], "result": {}}
        return json_answer(json.dumps(reply).encode())
