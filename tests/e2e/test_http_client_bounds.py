"""The HTTP client reads no more than its bound, against a real server on 127.0.0.1 that streams
answers far larger than it (a 400 MB JSON body, an SSE ``data:`` line that never ends, a 300 MB
Protected Resource Metadata document) without ever holding them itself.

Each oversized case runs the client in a subprocess of its own that measures what it allocated
while reading (tracemalloc's peak, and the growth of its peak RSS for the record): the growth must
stay under twice the limit, the error must name the limit, and the same client must answer the
next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import sys
import zlib
from collections.abc import AsyncIterator
from typing import Any, Final

import pytest

from mcpkit import Client, ConnectionClosed
from mcpkit.transports.stdio import DEFAULT_MAX_MESSAGE_BYTES

pytestmark = pytest.mark.e2e

MIB: Final = 1024 * 1024
#: What the server streams, reused for every write: it never builds an answer in memory.
CHUNK: Final = b"x" * (64 * 1024)
HUGE_JSON: Final = 400 * 1000 * 1000
HUGE_METADATA: Final = 300 * 1000 * 1000
ENDLESS: Final = 4 * 1000 * 1000 * 1000  # an SSE line "that never ends" (ends if nothing stops it)

DISCOVERED: Final = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "1"}},
}
SMALL: Final = {"content": [{"type": "text", "text": "fine"}], "isError": False}


class HostileServer:
    """An HTTP/1.1 server on 127.0.0.1 speaking 2026-07-28 (and a 2025-11-25 session at ``/session``)
    whose tools answer with bodies as large as asked, written from one reused 64 KiB chunk."""

    def __init__(self, *, protected: bool = False) -> None:
        self.protected = protected
        self.url = ""
        self.sse_gets = 0

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[HostileServer]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            yield self
        finally:
            server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                verb, path, _ = head[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in head[1:] if h)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not await self._answer(verb, path, headers, body, writer):
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _answer(
        self, verb: str, path: str, headers: dict[str, str], body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; ``False`` once the connection is done with."""
        if verb == "GET" and path == "/.well-known/oauth-protected-resource/mcp":
            prefix = b'{"resource": "' + f"{self.url}/mcp".encode() + b'", "padding": "'
            await stream_chunked(writer, "application/json", prefix, HUGE_METADATA)
            return False
        if verb == "GET" and path == "/session":
            self.sse_gets += 1
            await stream_chunked(writer, "text/event-stream", b"data: ", ENDLESS)
            return False
        if verb == "GET" and path == "/legacy":  # HTTP+SSE: the endpoint event, then a line without end
            endpoint = b"event: endpoint\ndata: /legacy/messages\n\n"
            await stream_chunked(writer, "text/event-stream", endpoint + b"data: ", ENDLESS)
            return False
        if verb != "POST" or path == "/legacy":  # a refused POST: the client falls back to HTTP+SSE
            writer.write(b"HTTP/1.1 405 X\r\ncontent-length: 0\r\n\r\n")
            return True
        if self.protected and "authorization" not in headers:
            challenge = f'Bearer resource_metadata="{self.url}/.well-known/oauth-protected-resource/mcp"'
            writer.write(
                f"HTTP/1.1 401 X\r\nwww-authenticate: {challenge}\r\ncontent-length: 0\r\n\r\n".encode()
            )
            return True
        message = json.loads(body)
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message:
            writer.write(b"HTTP/1.1 202 X\r\ncontent-length: 0\r\n\r\n")
            return True
        if method == "initialize":
            result: Any = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
            extra = "mcp-session-id: s1\r\n"
        else:
            result, extra = (DISCOVERED if method == "server/discover" else SMALL), ""
        prefix = b'{"jsonrpc": "2.0", "id": ' + json.dumps(message["id"]).encode() + b', "result": {"x": "'
        tool = params.get("name") if method == "tools/call" else None
        if tool == "huge_with_length":
            head = f"HTTP/1.1 200 X\r\ncontent-type: application/json\r\ncontent-length: {HUGE_JSON}\r\n\r\n"
            writer.write(head.encode() + prefix)
            await stream(writer, lambda data: data, HUGE_JSON - len(prefix))
            return False
        if tool == "huge":
            await stream_chunked(writer, "application/json", prefix, HUGE_JSON)
            return False
        if tool == "endless_line":
            await stream_chunked(writer, "text/event-stream", b"data: " + prefix, ENDLESS)
            return False
        if tool == "endless_event":  # short lines, but one event that never ends
            writer.write(b"HTTP/1.1 200 X\r\ncontent-type: text/event-stream\r\n\r\n")
            line = b"data: " + CHUNK[:1000] + b"\n"
            await stream(writer, lambda _: line * 64, ENDLESS)
            return False
        if tool == "gzip_bomb":  # 400 MB that arrive as 400 kB of gzip
            head = "HTTP/1.1 200 X\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
            writer.write(head.encode() + f"content-length: {len(gzip_bomb())}\r\n\r\n".encode())
            writer.write(gzip_bomb())
            await writer.drain()
            return False
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        head = f"HTTP/1.1 200 X\r\ncontent-type: application/json\r\n{extra}content-length: {len(answer)}\r\n\r\n"
        writer.write(head.encode() + answer)
        await writer.drain()
        return True


@functools.cache
def gzip_bomb() -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    pieces = [packer.compress(b'{"jsonrpc": "2.0", "id": 2, "result": {"x": "')]
    pieces += [packer.compress(CHUNK) for _ in range(HUGE_JSON // len(CHUNK))]
    return b"".join(pieces) + packer.flush()


async def stream(writer: asyncio.StreamWriter, frame: Any, size: int) -> None:
    """Write *size* bytes of :data:`CHUNK`, each piece framed by *frame*, until the client leaves."""
    sent = 0
    while sent < size:
        piece = CHUNK if size - sent >= len(CHUNK) else CHUNK[: size - sent]
        writer.write(frame(piece))
        await writer.drain()
        sent += len(piece)


async def stream_chunked(writer: asyncio.StreamWriter, kind: str, prefix: bytes, size: int) -> None:
    """A 200 of *kind* without a Content-Length: *prefix*, then *size* bytes, chunked."""
    writer.write(f"HTTP/1.1 200 X\r\ncontent-type: {kind}\r\ntransfer-encoding: chunked\r\n\r\n".encode())
    writer.write(f"{len(prefix):x}\r\n".encode() + prefix + b"\r\n")
    await stream(writer, lambda data: f"{len(data):x}\r\n".encode() + data + b"\r\n", size)


#: The client, in a process of its own: one small call to warm up, then the oversized one measured
#: (tracemalloc's peak and the peak RSS's growth while it runs), then a small call again.
CLIENT: Final = r"""
import asyncio, json, sys, tracemalloc

from mcpkit import Client
import httpx
from mcpkit.client.auth import OAuth
from mcpkit.client.auth.discovery import Challenge, discover


def rss(field):
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) * 1024 for l in status if l.startswith(field + ":"))


async def never(url):
    raise AssertionError("no browser step expected")


async def main(url, tool):
    report = {}
    if tool == "metadata":
        try:  # the whole connection, as a user meets it
            async with Client(url + "/mcp", auth=OAuth(interactive=never)):
                pass
        except Exception as exc:
            report["error"] = f"{type(exc).__name__}: {exc}"
        # Measured: discovery alone, on an HTTP client made beforehand (making one loads the
        # system's CA certificates, megabytes that have nothing to do with what is read).
        async with httpx.AsyncClient() as http:
            tracemalloc.start()
            before = rss("VmRSS")
            try:
                await discover(http, url + "/mcp", Challenge(), None, None)
            except Exception as exc:
                report["measured_error"] = f"{type(exc).__name__}: {exc}"
            report["peak"] = tracemalloc.get_traced_memory()[1]
            report["rss_growth"] = rss("VmHWM") - before
        print(json.dumps(report))
        return
    async with Client(url + "/mcp", timeout=120) as client:
        await client.call_tool("small")
        tracemalloc.start()
        before = rss("VmRSS")
        try:
            await client.call_tool(tool)
        except Exception as exc:
            report["error"] = f"{type(exc).__name__}: {exc}"
        report["peak"] = tracemalloc.get_traced_memory()[1]
        report["rss_growth"] = rss("VmHWM") - before
        tracemalloc.stop()
        report["after"] = (await client.call_tool("small")).content[0].text
    print(json.dumps(report))


asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def measured(server: HostileServer, tool: str) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLIENT, server.url, tool, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), 300)
    assert process.returncode == 0, out
    report: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    print(f"{tool}: {report}")  # the figures, for `pytest -s`
    return report


@pytest.mark.parametrize("tool", ["huge_with_length", "huge", "endless_line", "endless_event", "gzip_bomb"])
def test_an_answer_over_the_limit_fails_its_call_without_being_read_whole(tool: str) -> None:
    async def main() -> dict[str, Any]:
        async with HostileServer().running() as server:
            return await measured(server, tool)

    report = asyncio.run(main())
    assert f"larger than the limit of {DEFAULT_MAX_MESSAGE_BYTES} bytes" in report["error"]
    assert report["after"] == "fine"  # the client goes on
    assert report["peak"] < 2 * DEFAULT_MAX_MESSAGE_BYTES


def test_a_metadata_document_over_a_mebibyte_is_refused_without_being_read_whole() -> None:
    async def main() -> dict[str, Any]:
        async with HostileServer(protected=True).running() as server:
            return await measured(server, "metadata")

    report = asyncio.run(main())
    assert "protected resource metadata" in report["error"]
    assert f"larger than the limit of {MIB} bytes" in report["error"]
    assert report["measured_error"] == report["error"]
    assert report["peak"] < 2 * MIB


def test_a_session_stream_over_the_limit_is_dropped_and_the_session_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> tuple[str, int]:
        async with HostileServer().running() as server:
            client = Client(server.url + "/session", protocol_version="2025-11-25", max_message_bytes=MIB)
            async with client:
                for _ in range(200):  # the stream opens after the handshake, and is dropped
                    if "dropping the session's event stream" in caplog.text:
                        break
                    await asyncio.sleep(0.05)
                result = await client.call_tool("small")
            return result.content[0].text, server.sse_gets  # type: ignore[union-attr]

    with caplog.at_level(logging.WARNING, "mcpkit.client"):
        text, gets = asyncio.run(main())
    assert text == "fine"
    assert f"larger than the limit of {MIB} bytes" in caplog.text
    assert gets == 1  # dropped, not resumed into the same event again


def test_an_http_sse_stream_over_the_limit_is_dropped_with_a_clear_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        async with HostileServer().running() as server:
            client = Client(server.url + "/legacy", max_message_bytes=MIB, timeout=30)
            with pytest.raises(ConnectionClosed):  # the one stream carries every answer
                await client.connect()

    with caplog.at_level(logging.WARNING, "mcpkit.client"):
        asyncio.run(main())
    assert "dropping the HTTP+SSE stream" in caplog.text
    assert f"larger than the limit of {MIB} bytes" in caplog.text
