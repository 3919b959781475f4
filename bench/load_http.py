"""A minimal HTTP/1.1 MCP client for the load: keep-alive connections, sessions, load and its figures."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from load_messages import (
    ECHO_TEXT,
    HANDSHAKE,
    INITIALIZED,
    MODERN,
    BenchError,
    CallTemplate,
    check_answers,
    initialize,
    request,
    result_of,
)
from load_procs import cpu_seconds, percentile


@dataclass
class HttpResponse:
    status: int
    headers: dict[bytes, bytes]
    body: bytes

    def json_messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages of the body: one JSON object, or the ``data:`` of SSE events."""
        kind = self.headers.get(b"content-type", b"")
        if kind.startswith(b"text/event-stream"):
            messages = []
            for event in self.body.replace(b"\r\n", b"\n").split(b"\n\n"):
                data = b"\n".join(
                    line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")
                )
                if data.strip():
                    messages.append(orjson.loads(data))
            return messages
        return [orjson.loads(self.body)] if self.body.strip() else []

    def answer(self, rid: int) -> dict[str, Any]:
        for message in self.json_messages():
            if message.get("id") == rid and ("result" in message or "error" in message):
                return message
        raise BenchError(f"HTTP {self.status} with no answer to request {rid}: {self.body[:300]!r}")


class HttpConnection:
    """One keep-alive HTTP/1.1 connection to ``http://host:port/mcp``."""

    def __init__(self, host: str, port: int, path: str = "/mcp") -> None:
        self.host, self.port, self.path = host, port, path
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._prefix = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n".encode()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port, limit=1 << 22)
        return self._reader, self._writer

    async def post(self, body: bytes, headers: bytes = b"") -> HttpResponse:
        head = (
            self._prefix
            + b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            + headers
            + b"Content-Length: %d\r\n\r\n" % len(body)
        )
        for attempt in (1, 2):
            reader, writer = await self._connect()
            writer.write(head + body)
            try:
                return await self._read(reader)
            except (asyncio.IncompleteReadError, ConnectionResetError):
                self.close()  # a kept-alive connection closed by the server: retry once on a new one
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _read(self, reader: asyncio.StreamReader) -> HttpResponse:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            if line:
                key, _, value = line.partition(b":")
                headers[key.strip().lower()] = value.strip()
        if b"content-length" in headers:
            body = await reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    break
                parts.append((await reader.readexactly(size + 2))[:-2])
            body = b"".join(parts)
        elif status in (202, 204, 304) or 100 <= status < 200:
            body = b""
        else:
            body = await reader.read()
            self.close()
        if headers.get(b"connection", b"").lower() == b"close":
            self.close()
        return HttpResponse(status, headers, body)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


@dataclass
class HttpClient:
    """One MCP client over HTTP: its own connection and, in the handshake era, its own session."""

    host: str
    port: int
    era: str
    session: bytes | None = None
    #: The ``_meta`` of its 2026-07-28 echo calls (None: :data:`MODERN_META`).
    meta: dict[str, Any] | None = None
    conn: HttpConnection = field(init=False)
    _next: int = 0

    def __post_init__(self) -> None:
        self.conn = HttpConnection(self.host, self.port)
        self._call_fmt = CallTemplate(self.era, meta=self.meta)
        self._headers = b""

    def _session_headers(self) -> bytes:
        headers = b""
        if self.session is not None:
            headers += b"Mcp-Session-Id: " + self.session + b"\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        return headers

    async def open(self) -> None:
        """The handshake (initialize, initialized) in the handshake era; nothing in the modern era."""
        if self.era == MODERN:
            self._headers = (
                b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"
            )
            return
        response = await self.conn.post(orjson.dumps(initialize(0)))
        result_of(response.answer(0), "initialize")
        session = response.headers.get(b"mcp-session-id")
        if session is None:
            raise BenchError("initialize over HTTP returned no Mcp-Session-Id")
        self.session = session
        self._headers = self._session_headers()
        response = await self.conn.post(INITIALIZED, self._headers)
        if response.status not in (200, 202, 204):
            raise BenchError(f"notifications/initialized got HTTP {response.status}: {response.body[:200]!r}")

    async def call(self, method: str, params: dict[str, Any] | None) -> Any:
        self._next += 1
        rid = self._next
        headers = self._session_headers()
        if self.era == MODERN:
            headers += b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: " + method.encode() + b"\r\n"
            if method == "tools/call" and params is not None:
                headers += b"Mcp-Name: " + params["name"].encode() + b"\r\n"
        response = await self.conn.post(orjson.dumps(request(rid, method, params, self.era)), headers)
        return result_of(response.answer(rid), method)

    async def check(self) -> None:
        check_answers({
            "tools/list": await self.call("tools/list", {}),
            "echo": await self.call("tools/call", {"name": "echo", "arguments": {"text": ECHO_TEXT}}),
            "add": await self.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}),
        })  # fmt: skip

    async def echo_until(self, deadline: float, latencies: list[float]) -> None:
        """Call echo back to back until *deadline*, appending each latency (µs)."""
        post, encode, headers = self.conn.post, self._call_fmt.encode, self._headers
        while True:
            self._next += 1
            rid = self._next
            t0 = time.perf_counter()
            response = await post(encode(rid), headers)
            now = time.perf_counter()
            if response.status != 200 or b'"error"' in response.body or b'"result"' not in response.body:
                raise BenchError(f"HTTP {response.status}: {response.body[:300]!r}")
            latencies.append((now - t0) * 1e6)
            if now > deadline:
                return

    def close(self) -> None:
        self.conn.close()


async def check_http(host: str, port: int, era: str) -> None:
    """Before any timing: the server at *port* answers every benchmark request correctly in *era*."""
    client = HttpClient(host, port, era)
    try:
        await client.open()
        await client.check()
    finally:
        client.close()


async def http_load(
    host: str, port: int, era: str, clients: int, seconds: float, meta: dict[str, Any] | None = None
) -> tuple[int, float, list[float]]:
    """*clients* concurrent clients calling echo for *seconds*: (calls, elapsed s, latencies µs).
    *meta*: the ``_meta`` of 2026-07-28 calls (None: :data:`MODERN_META`)."""
    pool = [HttpClient(host, port, era, meta=meta) for _ in range(clients)]
    try:
        await asyncio.gather(*(client.open() for client in pool))
        latencies: list[float] = []
        t0 = time.perf_counter()
        await asyncio.gather(*(client.echo_until(t0 + seconds, latencies) for client in pool))
        elapsed = time.perf_counter() - t0
    finally:
        for client in pool:
            client.close()
    return len(latencies), elapsed, latencies


async def http_figures(
    host: str, port: int, era: str, clients: int, seconds: float, pids: Sequence[int]
) -> dict[str, float]:
    """:func:`http_load`, reported: ``per_s``, ``p50_us``, ``p99_us``, and ``cpu_us``, the CPU per
    call of the processes *pids* (with their children) over the load."""
    cpu0 = sum(cpu_seconds(pid) for pid in pids)
    calls, elapsed, latencies = await http_load(host, port, era, clients, seconds)
    cpu = sum(cpu_seconds(pid) for pid in pids) - cpu0
    return {
        "per_s": calls / elapsed,
        "p50_us": percentile(latencies, 0.5),
        "p99_us": percentile(latencies, 0.99),
        "cpu_us": cpu / calls * 1e6,
    }


async def open_idle_sessions(host: str, port: int, count: int, connections: int = 4) -> list[bytes]:
    """Open *count* handshake-era sessions (initialize + initialized) and leave them idle."""
    sessions: list[bytes] = []
    per = [count // connections + (1 if i < count % connections else 0) for i in range(connections)]

    async def worker(n: int) -> None:
        conn = HttpConnection(host, port)
        try:
            for _ in range(n):
                client = HttpClient(host, port, HANDSHAKE)
                client.conn = conn
                await client.open()
                assert client.session is not None
                sessions.append(client.session)
        finally:
            conn.close()

    await asyncio.gather(*(worker(n) for n in per if n))
    return sessions


async def wait_for_port(
    host: str, port: int, process: asyncio.subprocess.Process, timeout: float = 60
) -> None:
    """Wait until something accepts connections on *port* (or the process dies)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if process.returncode is not None:
            raise BenchError(f"the server exited with code {process.returncode} before listening")
        try:
            _, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.02)
            continue
        writer.close()
        return
    raise BenchError(f"nothing listens on {host}:{port} after {timeout} s")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
