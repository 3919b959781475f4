"""Hostile and careless HTTP clients against a real ``mcpkit run --transport http`` on 127.0.0.1.

Each test names the bound or the defect of issue 12 it proves. Slow readers are raw sockets with a
small receive buffer that never call ``recv``; every wait is bounded by a deadline.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import STARTUP_SECONDS, free_port, initialize_request

pytestmark = pytest.mark.e2e

SERVER = '''
import asyncio

from mcpkit import Context, Server

server = Server("hardening")
LONG = "x" * 900


@server.resource("note://{name}")
def note(name: str) -> str:
    return name


@server.tool
async def grow(times: int) -> str:
    """Change the tool list 2 * times times."""
    for _ in range(times):
        server.add_tool(lambda: "spare", name="spare")
        server.remove_tool("spare")
    return f"changed {2 * times} times"


@server.tool
async def touch(rounds: int, count: int) -> str:
    """Announce rounds * count updates of count distinct (long) resource URIs."""
    for _ in range(rounds):
        for i in range(count):
            await server.notify_resource_updated(f"note://{LONG}{i}")
            await asyncio.sleep(0)  # as a real producer would: each listener's writer keeps up
    return "touched"


@server.tool
async def nap(seconds: float, ctx: Context) -> str:
    await ctx.info("napping")
    await ctx.report_progress(0.5, 1.0)
    await asyncio.sleep(seconds)
    return "rested"


@server.tool
async def chatter(count: int, ctx: Context) -> str:
    """Log count messages of about 1 kB each on the request's own stream."""
    for i in range(count):
        await ctx.info(f"{i:06d} " + "y" * 1000)
    return f"said {count}"


@server.tool
async def ask(ctx: Context) -> str:
    await ctx.ping()  # a request to the client, answered by a POST of its own
    return "pinged"
'''

LONG = "x" * 900
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACCEPT = "application/json, text/event-stream"


@dataclass
class Served:
    url: str
    port: int
    pid: int
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def serve(folder: Path, *flags: str) -> Iterator[Served]:
    """The test server as a process, its stderr in a file (for what it logged)."""
    script = folder / "hardening_server.py"
    script.write_text(SERVER)
    port = free_port()
    log = folder / f"server-{port}.log"
    command = [sys.executable, "-m", "mcpkit", "run", str(script), "--transport", "http", "--port", str(port)]
    with log.open("wb") as sink:
        proc = subprocess.Popen([*command, *flags], stdout=subprocess.DEVNULL, stderr=sink)
    deadline = time.monotonic() + STARTUP_SECONDS  # start-up is not what is tested: generous
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            proc.kill()
            proc.wait()
            pytest.fail(
                f"the test server did not listen on 127.0.0.1:{port}: {log.read_text(errors='replace')}"
            )
    try:
        yield Served(f"http://127.0.0.1:{port}/mcp", port, proc.pid, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=60)
            raise AssertionError("the server did not stop within 60 s of SIGTERM") from None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("hardening")) as it:
        yield it


# -- clients ---------------------------------------------------------------------------------------


def stateless(
    method: str, params: dict[str, Any] | None = None, request_id: int = 1
) -> tuple[bytes, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"_meta": META, **(params or {})}}
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": method}  # fmt: skip
    if method == "tools/call" and params is not None:
        headers["Mcp-Name"] = params["name"]
    return json.dumps(body).encode(), headers


def call_2026(url: str, tool: str, timeout: float = 60, **arguments: Any) -> httpx.Response:
    body, headers = stateless("tools/call", {"name": tool, "arguments": arguments})
    return httpx.post(url, content=body, headers=headers, timeout=timeout)


def listen_body(notifications: dict[str, Any], request_id: int = 1) -> tuple[bytes, dict[str, str]]:
    return stateless("subscriptions/listen", {"notifications": notifications}, request_id)


def never_read(
    port: int, body: bytes, headers: dict[str, str], method: str = "POST", small_buffer: bool = True
) -> socket.socket:
    """A request from a client that will never read the answer (a small receive buffer, no recv)."""
    sock = socket.socket()
    if small_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    lines = [f"{method} /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    return sock


def wait_closed(sock: socket.socket, seconds: float) -> bool:
    """Read *sock* to its end; whether the server closed it within *seconds*."""
    sock.settimeout(0.5)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if not sock.recv(1 << 20):
                return True
        except TimeoutError:
            continue
        except OSError:
            return True
    return False


class EventReader:
    """An event stream read in a thread: every JSON-RPC message it carried, as it comes."""

    def __init__(self, method: str, url: str, headers: dict[str, str], body: bytes | None = None) -> None:
        self.messages: list[dict[str, Any]] = []
        self.opened = threading.Event()
        self.status = 0
        self._client = httpx.Client(timeout=httpx.Timeout(10, read=None))
        self._thread = threading.Thread(target=self._run, args=(method, url, headers, body), daemon=True)
        self._thread.start()
        assert self.opened.wait(10)

    def _run(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> None:
        try:
            with self._client.stream(method, url, headers=headers, content=body) as response:
                self.status = response.status_code
                self.opened.set()
                for line in response.iter_lines():
                    if line.startswith("data: {"):
                        self.messages.append(json.loads(line[6:]))
        except (httpx.HTTPError, RuntimeError):
            pass
        finally:
            self.opened.set()

    def methods(self) -> list[str]:
        return [m.get("method", "") for m in list(self.messages)]

    def wait_for(self, method: str, seconds: float = 60) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if method in self.methods():
                return True
            time.sleep(0.02)
        return False

    def close(self) -> None:
        self._client.close()


def initialize(url: str, version: str = "2025-11-25") -> dict[str, str]:
    """A handshake-era session; the headers its requests carry."""
    answer = httpx.post(url, json=initialize_request(version), headers={"Accept": ACCEPT}, timeout=60)
    assert answer.status_code == 200, answer.text
    headers = {"Mcp-Session-Id": answer.headers["mcp-session-id"], "Accept": ACCEPT}
    if version >= "2025-06-18":
        headers["MCP-Protocol-Version"] = version
    httpx.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=60
    )
    return headers


def session_post(url: str, headers: dict[str, str], message: Any, timeout: float = 60) -> httpx.Response:
    return httpx.post(url, json=message, headers=headers, timeout=timeout)


def final(answer: httpx.Response) -> Any:
    """The last JSON-RPC message of an answer, JSON or an event stream (None if it has none)."""
    if answer.headers.get("content-type") == "application/json":
        return answer.json() if answer.content else None
    data = [
        json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ") and line[6:]
    ]
    return data[-1] if data else None


def tool_call(request_id: int | str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


# -- 1. one slow reader stalls nobody --------------------------------------------------------------


def test_an_unread_listen_stream_stalls_no_call_and_no_other_listener(served: Served) -> None:
    """Issue 12 #1: 30,000 list changes while one listen stream is never read."""
    body, headers = listen_body({"toolsListChanged": True})
    slow = never_read(served.port, body, headers)
    reader = EventReader("POST", served.url, headers, listen_body({"toolsListChanged": True}, 2)[0])
    try:
        assert reader.wait_for("notifications/subscriptions/acknowledged")
        for _ in range(3):
            # A stalled call would hang until the slow reader left: the timeout is the check
            # (no bound on the time it takes, which a loaded machine stretches).
            answer = call_2026(served.url, "grow", timeout=60, times=5000)
            assert answer.status_code == 200 and "changed 10000 times" in answer.text
        assert reader.wait_for("notifications/tools/list_changed")
        before = len(reader.messages)
        call_2026(served.url, "grow", times=1)
        deadline = time.monotonic() + 60
        while len(reader.messages) == before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(reader.messages) > before  # still hearing of changes after 30,000 of them
        assert call_2026(served.url, "nap", seconds=0, timeout=30).status_code == 200
    finally:
        reader.close()
        slow.close()


def test_an_unread_listen_stream_that_overflows_is_ended(tmp_path: Path) -> None:
    """stream_queue_limit: distinct updates pile up for a client that does not read; its listen
    request is ended and logged, the connection closed, and the other listener keeps hearing."""
    with serve(tmp_path, "--stream-queue-limit", "16") as served:
        uris = [f"note://{LONG}{i}" for i in range(64)]
        slow = never_read(served.port, *listen_body({"resourceSubscriptions": uris}))
        reader = EventReader("POST", served.url, listen_body({"resourceSubscriptions": uris[:4]}, 2)[1],
                             listen_body({"resourceSubscriptions": uris[:4]}, 2)[0])  # fmt: skip
        try:
            assert reader.wait_for("notifications/subscriptions/acknowledged")
            answer = call_2026(served.url, "touch", timeout=60, rounds=300, count=64)
            assert answer.status_code == 200  # not held up by the unread stream (else: timeout)
            deadline = time.monotonic() + 60
            while (
                "closing a subscriptions/listen stream" not in served.log_text()
                and time.monotonic() < deadline
            ):
                time.sleep(0.05)
            assert "closing a subscriptions/listen stream" in served.log_text()
            assert wait_closed(slow, 15)  # ended: what was written, then the end of the connection
            assert reader.wait_for("notifications/resources/updated")
            before = len(reader.messages)
            call_2026(served.url, "touch", rounds=1, count=4)
            deadline = time.monotonic() + 60
            while len(reader.messages) == before and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(reader.messages) > before
            assert "Traceback" not in served.log_text()
        finally:
            reader.close()
            slow.close()


def test_an_unread_get_stream_stalls_no_session_and_overflows_alone(tmp_path: Path) -> None:
    """Handshake era: session A never reads its GET stream; B's list changes and updates return at
    once, B's own GET stream keeps receiving, and A's stream is ended when its queue overflows."""
    with serve(tmp_path, "--stream-queue-limit", "16") as served:
        a, b = initialize(served.url), initialize(served.url)
        uris = [f"note://{LONG}{i}" for i in range(64)]
        for index, uri in enumerate(uris):
            subscribe = {
                "jsonrpc": "2.0",
                "id": 100 + index,
                "method": "resources/subscribe",
                "params": {"uri": uri},
            }
            assert session_post(served.url, a, subscribe).status_code == 200
        slow = never_read(served.port, b"", a, method="GET")
        reader = EventReader("GET", served.url, b)
        try:
            assert reader.status == 200
            # Not held up by A's unread stream: a stall would run into the timeout.
            assert (
                session_post(served.url, b, tool_call(1, "grow", times=15000), timeout=60).status_code == 200
            )
            assert reader.wait_for("notifications/tools/list_changed")
            answer = session_post(served.url, b, tool_call(2, "touch", rounds=300, count=64), timeout=60)
            assert answer.status_code == 200
            deadline = time.monotonic() + 60
            while "closing its event stream" not in served.log_text() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert "closing its event stream" in served.log_text()
            assert wait_closed(slow, 15)
            # A is still a session: it can call, and open its GET stream again.
            assert final(session_post(served.url, a, tool_call(3, "nap", seconds=0)))["result"]["content"]
            again = EventReader("GET", served.url, a)
            assert again.status == 200
            again.close()
            assert "Traceback" not in served.log_text()
        finally:
            reader.close()
            slow.close()


# -- 2. bounded buffers ----------------------------------------------------------------------------


def test_an_unterminated_50_mb_header_line_costs_no_memory(served: Served) -> None:
    """max_header_bytes (64 KiB): the connection gets 431 and is closed after the first 64 KiB
    (httptools alone grew the process by 86 MB for this header)."""
    before = rss_mb(served.pid)
    sock = socket.create_connection(("127.0.0.1", served.port))
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
    sent, chunk, refused = 0, b"a" * 65536, False
    sock.settimeout(5)
    try:
        while sent < 50 * 1024 * 1024:
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        refused = True
    grown = rss_mb(served.pid) - before
    reply = b""
    with contextlib.suppress(OSError):
        reply = sock.recv(1024)
    sock.close()
    assert refused and sent < 8 * 1024 * 1024, sent
    assert grown < 5, f"the server grew by {grown:.1f} MB"
    assert reply == b"" or reply.startswith(b"HTTP/1.1 431")
    assert call_2026(served.url, "nap", seconds=0).status_code == 200


def test_a_request_with_too_many_headers_gets_431(served: Served) -> None:
    """max_header_count (100): 431 and the connection closed; 90 headers are served as usual."""

    def post_with(count: int) -> bytes:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nap", "arguments": {}}}
        ).encode()
        extra = b"".join(b"X-Filler-%d: x\r\n" % n for n in range(count))
        head = (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n" % len(body)
        )
        with socket.create_connection(("127.0.0.1", served.port), timeout=60) as sock:
            sock.sendall(head + extra + b"\r\n" + body)
            reply = b""
            with contextlib.suppress(OSError):
                while chunk := sock.recv(65536):
                    reply += chunk
        return reply

    refused = post_with(101)
    assert refused.startswith(b"HTTP/1.1 431"), refused[:200]
    served_reply = post_with(90)
    assert served_reply.startswith(b"HTTP/1.1 "), served_reply[:200]
    assert not served_reply.startswith(b"HTTP/1.1 431"), served_reply[:200]
    assert call_2026(served.url, "nap", seconds=0).status_code == 200


def read_until(sock: socket.socket, done: Any, seconds: float = 10) -> bytes:
    """What *sock* receives until ``done(received)`` holds (or the server closes it)."""
    sock.settimeout(seconds)
    received = b""
    while not done(received):
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        received += chunk
    return received


def test_pipelined_requests_get_whole_answers_in_order(served: Served) -> None:
    """Each response's head and body leave in one write (_uvicorn_cycle.Cycle): three requests sent
    at once on one connection still get three whole answers, in their order."""
    requests = [stateless("tools/call", {"name": "nap", "arguments": {"seconds": 0}}, i) for i in (1, 2, 3)]
    raw = b""
    for body, headers in requests:
        headers = {**headers, "Accept": "application/json"}  # plain JSON answers, no event stream
        lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{served.port}", f"Content-Length: {len(body)}"]
        raw += ("\r\n".join(lines + [f"{k}: {v}" for k, v in headers.items()]) + "\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", served.port), timeout=60) as sock:
        sock.sendall(raw)
        received = read_until(sock, lambda got: got.count(b'"rested"') == 3)
    answers = []
    for part in received.split(b"HTTP/1.1 ")[1:]:
        head, _, body = part.partition(b"\r\n\r\n")
        assert head.startswith(b"200 "), head
        length = int(
            next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))[15:]
        )
        assert len(body) == length, (head, body)
        answers.append(json.loads(body))
    assert [answer["id"] for answer in answers] == [1, 2, 3]


def test_an_event_stream_head_leaves_while_its_handler_runs(served: Served) -> None:
    """A response's head is held only until its body's first write or the end of the loop's turn:
    a handler that says something and then waits has its stream's head and first event delivered
    before it is done."""
    body, headers = stateless("tools/call", {"name": "nap", "arguments": {"seconds": 60}})
    request = json.loads(body)
    request["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "info"  # or ctx.info says nothing
    body = json.dumps(request).encode()
    with contextlib.closing(never_read(served.port, body, headers, small_buffer=False)) as sock:
        received = read_until(sock, lambda got: b"napping" in got)
    assert received.startswith(b"HTTP/1.1 200 "), received[:200]
    assert b"text/event-stream" in received and b"napping" in received and b"rested" not in received


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_an_unread_post_stream_holds_its_own_handler_only_and_loses_nothing(served: Served, era: str) -> None:
    """A POST whose event stream is not read: its handler waits once stream_queue_limit messages
    are queued (handshake era) or on the socket itself (2026-07-28), so the server does not grow
    with what it would say; other sessions are served meanwhile; when the client reads, every
    message arrives."""
    count = 40_000  # 40 MB of log messages
    if era == "2026-07-28":
        body, headers = stateless("tools/call", {"name": "chatter", "arguments": {"count": count}})
        request = json.loads(body)
        request["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "info"
        body = json.dumps(request).encode()
    else:
        headers = {**initialize(served.url), "Content-Type": "application/json"}
        body = json.dumps(tool_call(1, "chatter", count=count)).encode()
    before = rss_mb(served.pid)
    # The kernel's buffers take a few MB; a small one would make reading it all back take minutes.
    sock = never_read(served.port, body, headers, small_buffer=False)
    try:
        time.sleep(3)  # time for an unbounded server to say it all
        grown = rss_mb(served.pid) - before
        print(f"{era}: the server grew by {grown:.1f} MB")  # the figure SECURITY.md quotes (pytest -s)
        other = initialize(served.url)
        answer = session_post(served.url, other, tool_call(2, "nap", seconds=0), timeout=60)
        assert answer.status_code == 200 and final(answer)["result"]["content"][0]["text"] == "rested"
        assert grown < 15, f"the server grew by {grown:.1f} MB for a stream nobody reads"
        received = b""
        sock.settimeout(30)
        while b'"said ' not in received[-4096:]:
            chunk = sock.recv(1 << 20)
            assert chunk, "the stream ended before the answer"
            received += chunk
    finally:
        sock.close()
    logged = received.count(b'"notifications/message"')
    assert logged == count, f"{logged} of {count} log messages arrived"


def test_sessions_are_capped_and_the_open_ones_unaffected(tmp_path: Path) -> None:
    """max_sessions: initialize beyond the cap gets 503, Retry-After and a JSON-RPC error."""
    with serve(tmp_path, "--max-sessions", "3") as served:
        sessions = [initialize(served.url) for _ in range(3)]
        refused = httpx.post(
            served.url, json=initialize_request("2025-11-25", 7), headers={"Accept": ACCEPT}, timeout=60
        )
        assert refused.status_code == 503 and refused.headers["retry-after"].isdigit()
        assert refused.json()["id"] == 7 and refused.json()["error"]["code"] == -32000
        sse = httpx.get(f"http://127.0.0.1:{served.port}/sse", timeout=60)
        assert sse.status_code == 503
        for index, headers in enumerate(sessions):
            assert session_post(served.url, headers, tool_call(index, "nap", seconds=0)).status_code == 200
        assert httpx.delete(served.url, headers=sessions[0], timeout=60).status_code == 200
        assert (
            httpx.post(
                served.url, json=initialize_request("2025-11-25", 7), headers={"Accept": ACCEPT}, timeout=60
            ).status_code
            == 200
        )


def from_address(address: str) -> httpx.Client:
    """An HTTP client whose connections leave from *address* (any of 127.0.0.0/8 reaches the
    server on 127.0.0.1): a second client, as far as the server can tell."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=60)


def test_sessions_per_client_are_capped_and_other_clients_unaffected(tmp_path: Path) -> None:
    """max_sessions_per_client: one address may not take every session of the server."""
    with serve(tmp_path, "--max-sessions-per-client", "2") as served:
        mine = [initialize(served.url) for _ in range(2)]
        refused = httpx.post(
            served.url, json=initialize_request("2025-11-25", 9), headers={"Accept": ACCEPT}, timeout=60
        )
        assert refused.status_code == 503 and refused.headers["retry-after"].isdigit()
        assert refused.json()["id"] == 9 and refused.json()["error"]["code"] == -32000
        assert httpx.get(f"http://127.0.0.1:{served.port}/sse", timeout=60).status_code == 503
        with from_address("127.0.0.2") as other:
            theirs = other.post(served.url, json=initialize_request("2025-11-25"), headers={"Accept": ACCEPT})
            assert theirs.status_code == 200 and "mcp-session-id" in theirs.headers
        assert session_post(served.url, mine[1], tool_call(1, "nap", seconds=0)).status_code == 200
        assert httpx.delete(served.url, headers=mine[0], timeout=60).status_code == 200
        initialize(served.url)  # ending one makes room for one more


@pytest.mark.parametrize("trusted", [True, False], ids=["proxy-trusted", "proxy-not-trusted"])
def test_per_client_limits_count_the_clients_behind_a_trusted_proxy(tmp_path: Path, trusted: bool) -> None:
    """--trusted-proxy: X-Forwarded-For names the client, so two users behind one proxy each get
    their share; from a proxy not named, the header is ignored (anyone could claim any address)."""
    flags = ["--max-sessions-per-client", "1"] + (["--trusted-proxy", "127.0.0.1"] if trusted else [])
    with serve(tmp_path, *flags) as served:

        def initialize_for(user: str) -> int:
            headers = {"Accept": ACCEPT, "X-Forwarded-For": user}
            answer = httpx.post(
                served.url, json=initialize_request("2025-11-25"), headers=headers, timeout=60
            )
            return answer.status_code

        assert initialize_for("10.0.0.1") == 200
        assert initialize_for("10.0.0.2") == (200 if trusted else 503)
        assert initialize_for("10.0.0.1") == 503


def test_rate_limit_per_client_address_answers_429(tmp_path: Path) -> None:
    """--rate-limit: a token bucket per client address, every request counted, both eras."""
    with serve(tmp_path, "--rate-limit", "4/60s") as served:
        headers = initialize(served.url)  # 2 requests: initialize, notifications/initialized
        assert session_post(served.url, headers, tool_call(1, "nap", seconds=0)).status_code == 200
        assert call_2026(served.url, "nap", seconds=0).status_code == 200
        over = call_2026(served.url, "nap", seconds=0)
        assert over.status_code == 429, over.text
        assert 1 <= int(over.headers["retry-after"]) <= 15
        assert over.json()["error"]["code"] == -32000 and "4/60s" in over.json()["error"]["message"]
        assert session_post(served.url, headers, tool_call(2, "nap", seconds=0)).status_code == 429
        with from_address("127.0.0.2") as other:  # another client has its own bucket
            body, stateless_headers = stateless("tools/call", {"name": "nap", "arguments": {"seconds": 0}})
            assert other.post(served.url, content=body, headers=stateless_headers).status_code == 200


def test_requests_in_flight_per_session_are_capped_without_deadlock(tmp_path: Path) -> None:
    """max_requests_per_session: one more request is answered with -32000 at once; answers to the
    server's own requests never count, so a handler waiting on the client finishes."""
    with serve(tmp_path, "--max-requests-per-session", "2") as served:
        headers = initialize(served.url)
        begun = [threading.Event(), threading.Event()]

        def nap(index: int) -> Any:
            # Streamed, to see the nap begin (its progress): the third request must come while both
            # run, not race them to the cap (then a nap is the one refused).
            call = tool_call(index + 1, "nap", seconds=15)  # long past the third's refusal, however slow
            call["params"]["_meta"] = {"progressToken": f"nap-{index}"}
            with httpx.stream("POST", served.url, json=call, headers=headers, timeout=60) as stream:
                for line in stream.iter_lines():
                    message = json.loads(line[6:]) if line.startswith("data: {") else {}
                    if message.get("method") == "notifications/progress":
                        begun[index].set()
                    if "result" in message or "error" in message:
                        return message
            return None

        with ThreadPoolExecutor(2) as pool:
            naps = [pool.submit(nap, index) for index in (0, 1)]
            assert all(event.wait(60) for event in begun), [f.result() for f in naps if f.done()]
            extra = session_post(served.url, headers, tool_call(3, "nap", seconds=0), timeout=60)
            # Refused at once: while the two requests at the cap still run (not queued behind them).
            assert final(extra)["error"]["code"] == -32000 and not any(f.done() for f in naps)
            assert all(f.result()["result"]["content"][0]["text"] == "rested" for f in naps)
        # At the cap, a tool that asks the client (ping) still gets its answer.
        limited = initialize(served.url)
        with httpx.stream(
            "POST", served.url, json=tool_call(9, "ask"), headers=limited, timeout=60
        ) as stream:
            seen: list[dict[str, Any]] = []
            for line in stream.iter_lines():
                if not line.startswith("data: {"):
                    continue
                message = json.loads(line[6:])
                seen.append(message)
                if message.get("method") == "ping":
                    second = session_post(served.url, limited, tool_call(10, "nap", seconds=0))
                    assert second.status_code == 200  # one in flight + this one: within the cap
                    answer = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
                    assert session_post(served.url, limited, answer).status_code == 202
                if "result" in message:
                    break
        assert seen[-1]["result"]["content"][0]["text"] == "pinged"


def test_a_batch_past_the_in_flight_cap_is_answered_member_by_member(tmp_path: Path) -> None:
    """A 2025-03-26 batch of 10,000 requests with room for 3 more in the session: the 3 that fit are
    served (two tool calls and a ping), each of the 9,997 others is answered -32000 with its own id
    in the same array (JSON-RPC owes a response per request), the POST says when to retry, the call
    already in flight finishes, and the session and the server go on serving."""
    with serve(tmp_path, "--max-requests-per-session", "4") as served:
        headers = initialize(served.url, "2025-03-26")
        begun = threading.Event()

        def long_nap() -> Any:
            call = tool_call("long", "nap", seconds=3)
            call["params"]["_meta"] = {"progressToken": "long"}
            with httpx.stream("POST", served.url, json=call, headers=headers, timeout=60) as stream:
                for line in stream.iter_lines():
                    message = json.loads(line[6:]) if line.startswith("data: {") else {}
                    if message.get("method") == "notifications/progress":
                        begun.set()
                    if "result" in message or "error" in message:
                        return message
            return None

        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(long_nap)
            assert begun.wait(10), running.result() if running.done() else "the nap did not begin"
            batch: list[dict[str, Any]] = [tool_call(f"nap-{i}", "nap", seconds=0) for i in (0, 1)]
            batch += [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(9_998)]
            batch.insert(1, {"jsonrpc": "2.0", "method": "notifications/progress-less"})
            answer = session_post(served.url, headers, batch)
            assert answer.status_code == 200 and answer.headers["retry-after"] == "1"
            members = final(answer)
            assert isinstance(members, list) and len(members) == 10_000
            by_id = {m["id"]: m for m in members}
            assert len(by_id) == 10_000  # one answer per request, each with its own id
            assert [by_id[f"nap-{i}"]["result"]["content"][0]["text"] for i in (0, 1)] == ["rested"] * 2
            assert by_id[0] == {"jsonrpc": "2.0", "id": 0, "result": {}}
            refused = [by_id[i]["error"] for i in range(1, 9_998)]
            assert {e["code"] for e in refused} == {-32000}
            assert "4 requests of this session are in flight" in refused[0]["message"]
            assert running.result()["result"]["content"][0]["text"] == "rested"
        again = session_post(served.url, headers, [{"jsonrpc": "2.0", "id": "after", "method": "ping"}])
        assert (again.status_code, final(again)) == (200, [{"jsonrpc": "2.0", "id": "after", "result": {}}])
        assert "retry-after" not in again.headers
        assert "Traceback" not in served.log_text()


# -- 3. protocol edges -----------------------------------------------------------------------------


def test_a_post_that_is_not_json_gets_415_in_every_era(served: Served) -> None:
    body, headers = stateless("tools/list")
    assert (
        httpx.post(served.url, content=body, headers={**headers, "Content-Type": "text/plain"}).status_code
        == 415
    )
    no_type = {k: v for k, v in headers.items() if k != "Content-Type"}
    assert httpx.post(served.url, content=body, headers=no_type).status_code == 415
    assert (
        httpx.post(
            served.url, content=body, headers={**headers, "Content-Type": "application/json; charset=utf-8"}
        ).status_code
        == 200
    )
    session = initialize(served.url)
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    typed = {**session, "Content-Type": "text/plain"}
    assert httpx.post(served.url, content=message, headers=typed).status_code == 415
    with httpx.stream("GET", f"http://127.0.0.1:{served.port}/sse", timeout=60) as sse:
        endpoint = next(line[6:] for line in sse.iter_lines() if line.startswith("data: "))
        posted = httpx.post(f"http://127.0.0.1:{served.port}{endpoint}", content=message,
                            headers={"Content-Type": "text/plain"})  # fmt: skip
        assert posted.status_code == 415


def test_stalled_connections_time_out(tmp_path: Path) -> None:
    """header_timeout, body_timeout and keep_alive_timeout: a connection that sends nothing, half
    a head, half a body, or stays idle after an answer is closed."""
    flags = ("--header-timeout", "0.5", "--body-timeout", "0.5", "--keep-alive-timeout", "1")
    with serve(tmp_path, *flags) as served:
        silent = socket.create_connection(("127.0.0.1", served.port))
        half_head = socket.create_connection(("127.0.0.1", served.port))
        half_head.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        body, headers = stateless("tools/list")
        half_body = socket.create_connection(("127.0.0.1", served.port))
        head = [f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"]
        head += [f"{k}: {v}\r\n" for k, v in headers.items()]
        half_body.sendall(("".join(head) + "\r\n").encode() + body[:10])
        idle = socket.create_connection(("127.0.0.1", served.port))
        idle.sendall(("".join(head) + "\r\n").encode() + body)
        # Each must end by its setting, not by the default (keep-alive 5 s, header 10 s, body 30 s):
        # each bound lies below that default, leaving a busy machine as much room as it can.
        started = time.monotonic()
        assert wait_closed(idle, 4.5)
        for sock in (silent, half_head):
            assert wait_closed(sock, 9.5 - (time.monotonic() - started))
        half_body.settimeout(25)
        assert half_body.recv(1024).startswith(b"HTTP/1.1 408")
        for sock in (silent, half_head, half_body, idle):
            sock.close()
        assert call_2026(served.url, "nap", seconds=0).status_code == 200


def test_keep_alive_closes_only_an_idle_connection(tmp_path: Path) -> None:
    """The keep-alive timeout (one timer per connection, _uvicorn._BoundedHttpTools) counts from the
    end of the last answer: a connection used more often than that stays open for as long as it is
    used, a request that runs past it is answered, and once idle the connection is closed."""
    with serve(tmp_path, "--keep-alive-timeout", "1") as served:
        sock = socket.create_connection(("127.0.0.1", served.port))
        with contextlib.closing(sock):
            calls = [("nap", 0.0)] * 5 + [("nap", 1.5), ("nap", 0.0)]
            for request_id, (tool, seconds) in enumerate(calls, 1):
                body, headers = stateless(
                    "tools/call", {"name": tool, "arguments": {"seconds": seconds}}, request_id
                )
                headers = {**headers, "Accept": "application/json"}
                lines = [
                    "POST /mcp HTTP/1.1",
                    f"Host: 127.0.0.1:{served.port}",
                    f"Content-Length: {len(body)}",
                ]
                sock.sendall(
                    ("\r\n".join(lines + [f"{k}: {v}" for k, v in headers.items()]) + "\r\n\r\n").encode()
                    + body
                )
                received = read_until(sock, lambda got: b"rested" in got or b"error" in got)
                assert received.startswith(b"HTTP/1.1 200 ") and b"rested" in received, received[:300]
                time.sleep(0.4)  # 7 requests 0.4 s apart: past the 1 s timeout in all
            assert wait_closed(sock, 10)


def test_an_out_of_range_port_is_a_clear_cli_error(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    done = subprocess.run([sys.executable, "-m", "mcpkit", "run", str(script), "--transport", "http", "--port", "80000"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "port 80000 is out of range (1-65535)" in done.stderr
    assert "Traceback" not in done.stderr


# -- 4. issue 12's defects that the one path removed, proved over the real transport -------------


def test_a_change_in_one_session_reaches_the_others_get_stream_not_its_own_answer(served: Served) -> None:
    """Issue 12 #3: B's change went into B's POST response, once per other session."""
    a, b = initialize(served.url), initialize(served.url)
    stream_a = EventReader("GET", served.url, a)
    try:
        answer = session_post(served.url, b, tool_call(1, "grow", times=1))
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["result"]["content"][0]["text"] == "changed 2 times"
        assert "list_changed" not in answer.text
        assert stream_a.wait_for("notifications/tools/list_changed")
    finally:
        stream_a.close()


def test_cancellation_racing_completion_answers_cleanly(served: Served) -> None:
    """Issue 12 #4: 30 races of notifications/cancelled against the end of the call; each POST is
    answered (200; an event stream, once the tool has logged, which ends without the answer if the
    cancellation won) or accepted (202), never 500, and nothing is logged with a traceback."""
    headers = initialize(served.url)
    outcomes: set[int | str] = set()
    with ThreadPoolExecutor(2) as pool:
        for index in range(30):
            call = pool.submit(
                session_post, served.url, headers, tool_call(1000 + index, "nap", seconds=(index % 5) / 500)
            )
            time.sleep((index % 7) / 1000)
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1000 + index},
            }
            assert session_post(served.url, headers, cancel).status_code == 202
            answer = call.result(timeout=60)
            assert answer.status_code in (200, 202), answer.status_code
            assert answer.text.count(f'"id":{1000 + index}') <= 1
            if answer.headers.get("content-type") == "application/json" and answer.status_code == 200:
                assert final(answer)["result"]["content"][0]["text"] == "rested"
            outcomes.add(answer.status_code if final(answer) is None else "answered")
    assert outcomes  # (which outcomes occur depends on timing; every one of them is clean)
    assert "Traceback" not in served.log_text() and "500" not in served.log_text()


def test_2025_03_26_batch_members_log_report_progress_run_concurrently_and_cancel(served: Served) -> None:
    """Issue 12 #5: members that log and report progress work, run at once, and can be cancelled.
    At once: the second member starts (and is answered) while the first still naps for 30 s, which
    members run one after the other could not do, however fast or slow the machine."""
    headers = initialize(served.url, "2025-03-26")
    level = {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}}
    assert session_post(served.url, headers, level).status_code == 200
    batch = [tool_call(2, "nap", seconds=1.5), tool_call(3, "nap", seconds=1.5)]
    batch[0]["params"]["_meta"] = {"progressToken": "p2"}
    answer = session_post(served.url, headers, batch)
    assert answer.status_code == 200
    messages = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]
    if answer.headers["content-type"] == "application/json":
        messages = [answer.json()]
    methods = [m.get("method") for m in messages if isinstance(m, dict)]
    assert "notifications/message" in methods and "notifications/progress" in methods
    answers = next(m for m in messages if isinstance(m, list))
    assert sorted(a["id"] for a in answers) == [2, 3]
    assert all(a["result"]["content"][0]["text"] == "rested" for a in answers)
    # Cancelling one member: the batch is answered without it, at once. The cancellation goes once
    # both members are seen running (each logs as it starts): one sent earlier names a request the
    # server has not met yet, which it may ignore.
    batch = [tool_call(4, "nap", seconds=30), tool_call(5, "nap", seconds=0.2)]
    seen: list[Any] = []
    started = time.monotonic()
    # Each read waits less than member 4's nap: run after it, member 5 would never be seen starting.
    with httpx.stream("POST", served.url, json=batch, headers=headers, timeout=25) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        while sum(1 for m in seen if isinstance(m, dict) and m.get("method") == "notifications/message") < 2:
            line = next(lines)
            if line.startswith("data: ") and line[6:]:
                seen.append(json.loads(line[6:]))
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}
        assert session_post(served.url, headers, cancel).status_code == 202
        seen += [json.loads(line[6:]) for line in lines if line.startswith("data: ") and line[6:]]
    assert time.monotonic() - started < 25  # not after member 4's 30 s nap
    final = next(m for m in seen if isinstance(m, list))
    assert [a["id"] for a in final] == [5]


def test_a_2026_client_going_away_racing_completion_is_clean(served: Served) -> None:
    """The 2026-07-28 form of the race: the client drops its POST just before, at or just after the
    answer is ready (30 races). The server never fails, logs no traceback, and serves the next call."""
    for index in range(30):
        body, headers = stateless(
            "tools/call", {"name": "nap", "arguments": {"seconds": (index % 5) / 500}}, index
        )
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        with socket.create_connection(("127.0.0.1", served.port), timeout=60) as sock:
            sock.sendall(head.encode() + body)
            time.sleep((index % 7) / 1000)
    answer = call_2026(served.url, "nap", seconds=0)
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "rested"
    assert "Traceback" not in served.log_text()


def test_http_sse_cancellation_racing_completion_is_clean(served: Served) -> None:
    """The HTTP+SSE form: notifications/cancelled POSTed just before, at or just after the end of the
    call (30 races). Each request gets one answer or none on the stream, and the stream goes on."""
    base = served.url.rsplit("/", 1)[0]
    with httpx.Client(timeout=60) as client, client.stream("GET", f"{base}/sse") as stream:
        lines = stream.iter_lines()
        endpoint = next(line[6:] for line in lines if line.startswith("data: "))
        post = f"{base}{endpoint}"
        init = initialize_request("2024-11-05")
        assert client.post(post, json=init).status_code == 202
        client.post(post, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        for index in range(30):
            client.post(post, json=tool_call(100 + index, "nap", seconds=(index % 5) / 500))
            time.sleep((index % 7) / 1000)
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 100 + index},
            }
            assert client.post(post, json=cancel).status_code == 202
        assert client.post(post, json=tool_call(999, "nap", seconds=0)).status_code == 202
        seen: list[Any] = []
        for line in lines:
            if line.startswith("data: {"):
                message = json.loads(line[6:])
                seen.append(message.get("id"))
                if message.get("id") == 999:
                    break
    answered = [i for i in seen if isinstance(i, int) and 100 <= i < 130]
    assert len(answered) == len(set(answered))  # never two answers to one request
    assert seen[-1] == 999
    assert "Traceback" not in served.log_text()
