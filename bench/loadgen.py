"""The load generator: raw JSON-RPC over stdio and HTTP, no MCP library on the client side.

Every server is driven by the same code and the same bytes, so what differs between two rows of
the report is the server alone. The requests are pre-encoded templates with only the id changing;
answers are counted by their newline (stdio) or read as one HTTP response each, and checked for
errors, and fully parsed only where the result is compared (:func:`check_answers`).

Two eras of the protocol are spoken:

* ``handshake``: ``initialize`` (protocolVersion 2025-11-25), ``notifications/initialized``, then calls;
  over HTTP the ``Mcp-Session-Id`` it returns is sent back on every POST;
* ``modern``: 2026-07-28, no handshake, every request carries ``_meta`` with the protocol version, the
  client capabilities and info; over HTTP also the ``MCP-Protocol-Version``, ``Mcp-Method`` and
  ``Mcp-Name`` headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

HANDSHAKE = "handshake"
MODERN = "modern"
HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
T = TypeVar("T")
CLIENT_INFO = {"name": "mcpkit-bench", "version": "1.0.0"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}
ECHO_TEXT = "hello, benchmark"


class BenchError(Exception):
    """A server answered wrongly, or not at all."""


def request(
    rid: int, method: str, params: dict[str, Any] | None, era: str, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A request of *era*; in 2026-07-28 its ``_meta`` is *meta*, or else :data:`MODERN_META`."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if era == MODERN:
        params = {**(params or {}), "_meta": MODERN_META if meta is None else meta}
    if params is not None:
        message["params"] = params
    return message


def initialize(rid: int = 0) -> dict[str, Any]:
    params = {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


INITIALIZED = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


class CallTemplate:
    """Pre-encoded ``tools/call echo`` requests (or another tool taking ``text``): only the id changes."""

    def __init__(self, era: str, tool: str = "echo", meta: dict[str, Any] | None = None) -> None:
        sample = request(1234567, "tools/call", {"name": tool, "arguments": {"text": ECHO_TEXT}}, era, meta)
        head, tail = orjson.dumps(sample).split(b"1234567", 1)
        self._fmt = head.replace(b"%", b"%%") + b"%d" + tail.replace(b"%", b"%%")

    def encode(self, rid: int) -> bytes:
        return self._fmt % rid


def check_answers(answers: dict[str, Any]) -> None:
    """The answers to ``tools/list``, ``echo`` and ``add`` are those the benchmark expects."""
    names = sorted(tool["name"] for tool in answers["tools/list"]["tools"])
    if not {"add", "echo"} <= set(names):
        raise BenchError(f"tools/list lacks echo or add: {names}")
    echo = answers["echo"]
    if echo.get("isError") or echo["content"][0]["text"] != ECHO_TEXT:
        raise BenchError(f"echo answered {echo!r}")
    add = answers["add"]
    if add.get("isError") or add["content"][0]["text"] not in ("5", "5.0"):
        raise BenchError(f"add(2, 3) answered {add!r}")


def _result(answer: dict[str, Any], what: str) -> Any:
    if "result" not in answer:
        raise BenchError(f"{what}: {answer.get('error', answer)!r}")
    return answer["result"]


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- stdio -----------------------------------------------------------------------------------------


class StdioServer:
    """A server process spoken to over its stdin and stdout."""

    def __init__(self, process: asyncio.subprocess.Process, started: float) -> None:
        self.process = process
        self.started = started
        assert process.stdin is not None and process.stdout is not None
        self._in = process.stdin
        self._out = process.stdout
        self._next = 1

    @classmethod
    async def spawn(cls, command: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None,
                    stderr: Any = asyncio.subprocess.DEVNULL) -> StdioServer:  # fmt: skip
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
            cwd=cwd, env=env, limit=1 << 24,
        )  # fmt: skip
        return cls(process, started)

    @property
    def pid(self) -> int:
        return self.process.pid

    def next_id(self) -> int:
        self._next += 1
        return self._next

    async def roundtrip(self, message: dict[str, Any] | bytes, timeout: float = 30.0) -> dict[str, Any]:
        """Send one request and read lines until its answer (notifications are skipped)."""
        data = message if isinstance(message, bytes) else orjson.dumps(message)
        rid = orjson.loads(data)["id"]
        self._in.write(data + b"\n")
        async with asyncio.timeout(timeout):
            while True:
                line = await self._out.readline()
                if not line:
                    raise BenchError(f"the server closed stdout (exit code {self.process.returncode})")
                answer = orjson.loads(line)
                if answer.get("id") == rid and ("result" in answer or "error" in answer):
                    return answer

    async def handshake(self, era: str) -> dict[str, Any]:
        """Open the conversation: ``initialize`` + ``initialized``, or a ``server/discover`` probe."""
        if era == HANDSHAKE:
            answer = _result(await self.roundtrip(initialize(self.next_id()), timeout=60), "initialize")
            self._in.write(INITIALIZED + b"\n")
            return answer  # type: ignore[no-any-return]
        return await self.call("tools/list", {}, era)

    async def call(self, method: str, params: dict[str, Any] | None, era: str) -> Any:
        return _result(await self.roundtrip(request(self.next_id(), method, params, era)), method)

    async def check(self, era: str) -> None:
        check_answers({
            "tools/list": await self.call("tools/list", {}, era),
            "echo": await self.call("tools/call", {"name": "echo", "arguments": {"text": ECHO_TEXT}}, era),
            "add": await self.call("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, era),
        })  # fmt: skip

    async def sequential(self, era: str, count: int, seconds: float, tool: str = "echo") -> list[float]:
        """Latencies (µs) of calls sent one at a time: *count* of them or for *seconds*."""
        template = CallTemplate(era, tool)
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds
        write, readline = self._in.write, self._out.readline
        for _ in range(count):
            rid = self.next_id()
            t0 = time.perf_counter()
            write(template.encode(rid) + b"\n")
            line = await readline()
            while b'"id":%d' % rid not in line.replace(b" ", b""):
                if not line:
                    raise BenchError("the server closed stdout")
                line = await readline()
            latencies.append((time.perf_counter() - t0) * 1e6)
            if b'"error"' in line:
                raise BenchError(f"error answer: {line[:300]!r}")
            if t0 > deadline:
                break
        return latencies

    async def pipelined(
        self, era: str, in_flight: int, seconds: float, max_calls: int = 10**9, tool: str = "echo"
    ) -> tuple[int, float]:
        """Keep *in_flight* calls outstanding for *seconds*; returns (calls answered, elapsed s)."""
        template = CallTemplate(era, tool)
        encode = template.encode
        first = self._next + 1
        self._next += in_flight
        write, read = self._in.write, self._out.read
        t0 = time.perf_counter()
        deadline = t0 + seconds
        write(b"\n".join(encode(rid) for rid in range(first, first + in_flight)) + b"\n")
        sent, answered = in_flight, 0
        tail = b""
        stop = False
        while answered < sent:
            chunk = await read(1 << 18)
            if not chunk:
                raise BenchError("the server closed stdout")
            lines = chunk.count(b"\n")
            answered += lines
            if b'"error"' in chunk:
                raise BenchError(f"error answer: {chunk[:300]!r}")
            tail = chunk[chunk.rfind(b"\n") + 1 :] if lines else tail + chunk
            if not stop and (time.perf_counter() > deadline or sent >= max_calls):
                stop = True
            if not stop and lines:
                start = self._next + 1
                self._next += lines
                sent += lines
                write(b"\n".join(encode(rid) for rid in range(start, start + lines)) + b"\n")
        del tail
        return answered, time.perf_counter() - t0

    async def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self._in.close()
        try:
            await asyncio.wait_for(self.process.wait(), 3)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()


# -- HTTP ------------------------------------------------------------------------------------------


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
        _result(response.answer(0), "initialize")
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
        return _result(response.answer(rid), method)

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


def in_turn(entrants: Sequence[T], index: int) -> list[T]:
    """*entrants* in round *index*'s order, which rotates from round to round: measured always in
    one order, a later place met what the earlier ones left, and was favoured on this VM (identical
    code read 13 µs of p50 apart)."""
    shift = index % len(entrants) if entrants else 0
    return [*entrants[shift:], *entrants[:shift]]


def medians(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The median of each column of *rows* (one row a round: calls/s, CPU µs/call, p50 µs)."""
    return (
        statistics.median(row[0] for row in rows),
        statistics.median(row[1] for row in rows),
        statistics.median(row[2] for row in rows),
    )


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


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children, from /proc (Linux)."""
    import psutil

    total = 0.0
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(pid)
        for proc in [process, *process.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                total += times.user + times.system
    return total


def pin(pid: int, cpus: set[int]) -> None:
    """Restrict every thread of process *pid* (0: this one) to *cpus*."""
    pid = pid or os.getpid()
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(task), cpus)


@contextlib.contextmanager
def placed(server_pid: int, same_core: bool) -> Iterator[None]:
    """Pin this process and the server to one core, or to two different ones, for a while.

    Unpinned, a sequential round trip on a small VM is bimodal: fast when the scheduler happens to
    put both processes on one core, slower by the cost of waking another core when not. Pinning
    makes each placement repeatable, and the report shows both.
    """
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 and not same_core:
        yield
        return
    mine, theirs = cpus[0], cpus[0] if same_core else cpus[1]
    pin(0, {mine})
    pin(server_pid, {theirs})
    try:
        yield
    finally:
        pin(0, set(cpus))
        pin(server_pid, set(cpus))


def rss_bytes(pid: int) -> int:
    """Resident memory of a process and its children."""
    import psutil

    total = 0
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(pid)
        for proc in [process, *process.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
    return total


__all__ = [
    "HANDSHAKE",
    "MODERN",
    "BenchError",
    "HttpClient",
    "StdioServer",
    "cpu_seconds",
    "free_port",
    "http_load",
    "in_turn",
    "open_idle_sessions",
    "percentile",
    "placed",
    "rss_bytes",
    "wait_for_port",
]

if os.name != "posix":  # pragma: no cover
    raise ImportError("the benchmark runs on POSIX systems")
