"""A soak of mcpkit's Streamable HTTP server: many sessions, many calls, both eras, a few slow readers.

``python bench/soak.py [--sessions N] [--calls N] [--json]`` starts ``bench/servers/mcpkit_server.py``
over HTTP on 127.0.0.1 and then:

1. opens *sessions* handshake-era sessions (``initialize`` + ``notifications/initialized``);
2. opens a few slow readers that never read what they are sent: GET streams of sessions and
   2026-07-28 ``subscriptions/listen`` streams, held open for the whole run;
3. makes *calls* ``tools/call echo`` calls, half in the handshake era spread over every session,
   half stateless (2026-07-28), from a fixed pool of keep-alive connections, every answer checked;
4. ends every session with DELETE.

It samples the server's resident memory, open descriptors, threads and asyncio tasks (the last
through a ``soak_stats`` tool of ``bench/servers/soak_server.py``) after a warm-up (the first fifth
of the calls), at the end of the calls, and after the DELETEs, and prints them (``--json``: as one
JSON object). All the sessions come from one address, so the per-client session cap is raised. The load generator is the benchmark's (``loadgen.py``): raw HTTP/1.1, no MCP
library. ``tests/e2e/test_soak.py`` runs it in CI and checks the figures stay flat.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))

from loadgen import (
    HANDSHAKE,
    MODERN,
    MODERN_META,
    BenchError,
    HttpClient,
    free_port,
    rss_bytes,
    wait_for_port,
)

BENCH = Path(__file__).parent
SERVER = BENCH / "servers" / "soak_server.py"
CONNECTIONS = 16  # keep-alive connections carrying the calls
SLOW_GET_STREAMS = 2
SLOW_LISTEN_STREAMS = 2
ECHO = {"name": "echo", "arguments": {"text": "soak"}}


async def sample(pid: int, port: int) -> dict[str, float]:
    """The server's resident memory (MB), open descriptors, threads and asyncio tasks now."""
    import psutil

    process = psutil.Process(pid)
    figures: dict[str, float] = {
        "rss_mb": round(rss_bytes(pid) / 1e6, 1),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": process.num_threads(),
    }
    probe = HttpClient("127.0.0.1", port, MODERN)
    await probe.open()
    try:
        stats = await probe.call("tools/call", {"name": "soak_stats", "arguments": {}})
    finally:
        probe.close()
    figures["tasks"] = stats["structuredContent"]["tasks"]
    return figures


async def slow_reader(port: int, head: bytes, body: bytes = b"") -> asyncio.StreamWriter:
    """Open a stream and never read from it (the socket's buffers fill; the server must cope)."""
    _, writer = await asyncio.open_connection("127.0.0.1", port, limit=1024)
    writer.write(head + body)
    await writer.drain()
    return writer


def get_stream(port: int, session: bytes) -> bytes:
    return (
        (
            f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
            f"MCP-Protocol-Version: 2025-11-25\r\n"
        ).encode()
        + b"Mcp-Session-Id: "
        + session
        + b"\r\n\r\n"
    )


def listen_request(port: int) -> tuple[bytes, bytes]:
    params = {"notifications": {"toolsListChanged": True}, "_meta": MODERN_META}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params})
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        f"Mcp-Method: subscriptions/listen\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head, body


async def soak(sessions: int, calls: int, log: Any = print) -> dict[str, Any]:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http", "--port", str(port),
        "--max-sessions-per-client", str(max(sessions, 1000) + 10),
        stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    report: dict[str, Any] = {"sessions": sessions, "calls": calls, "errors": 0}
    slow: list[asyncio.StreamWriter] = []
    try:
        await wait_for_port("127.0.0.1", port, process)
        started = time.perf_counter()
        # 1. The sessions, opened over a few connections (as a gateway or a load balancer would).
        handshake = [HttpClient("127.0.0.1", port, HANDSHAKE) for _ in range(sessions)]
        for chunk in range(0, sessions, CONNECTIONS):
            await asyncio.gather(*(client.open() for client in handshake[chunk : chunk + CONNECTIONS]))
            for client in handshake[chunk : chunk + CONNECTIONS]:
                client.close()  # the session stays; its connection is not needed
        report["sessions_opened_s"] = round(time.perf_counter() - started, 2)
        # 2. Slow readers, held for the whole run.
        for client in handshake[:SLOW_GET_STREAMS]:
            assert client.session is not None
            slow.append(await slow_reader(port, get_stream(port, client.session)))
        for _ in range(SLOW_LISTEN_STREAMS):
            slow.append(await slow_reader(port, *listen_request(port)))
        # 3. The calls: every connection alternates between the eras; handshake calls rotate
        #    through the sessions.
        stateless = [HttpClient("127.0.0.1", port, MODERN) for _ in range(CONNECTIONS)]
        for client in stateless:
            await client.open()
        carriers = [HttpClient("127.0.0.1", port, HANDSHAKE) for _ in range(CONNECTIONS)]
        warm = calls // 5
        done = 0

        async def worker(index: int, count: int) -> None:
            nonlocal done
            carrier, modern = carriers[index], stateless[index]
            for n in range(count):
                try:
                    if n % 2:
                        answer = await modern.call("tools/call", ECHO)
                    else:
                        carrier.session = handshake[(index + n * CONNECTIONS) % sessions].session
                        answer = await carrier.call("tools/call", ECHO)
                    if answer.get("content", [{}])[0].get("text") != "soak":
                        raise BenchError(f"a wrong answer: {answer!r}")
                except (BenchError, OSError, asyncio.IncompleteReadError) as exc:
                    report["errors"] += 1
                    if report["errors"] <= 5:
                        log(f"error: {exc!r}")
                done += 1

        async def run_calls(total: int) -> None:
            per = [total // CONNECTIONS + (1 if i < total % CONNECTIONS else 0) for i in range(CONNECTIONS)]
            await asyncio.gather(*(worker(i, n) for i, n in enumerate(per)))

        t0 = time.perf_counter()
        await run_calls(warm)
        report["after_warmup"] = await sample(process.pid, port)
        await run_calls(calls - warm)
        elapsed = time.perf_counter() - t0
        report["after_calls"] = await sample(process.pid, port)
        report["calls_per_s"] = round(calls / elapsed)
        log(f"{done} calls in {elapsed:.1f} s ({report['calls_per_s']} calls/s)")
        # 4. Every session ended.
        for chunk in range(0, sessions, CONNECTIONS):
            await asyncio.gather(*(_delete(carriers[i % CONNECTIONS], c) for i, c in enumerate(handshake[chunk : chunk + CONNECTIONS])))  # fmt: skip
        for writer in slow:
            writer.close()
        slow.clear()
        await asyncio.sleep(0.5)
        report["after_delete"] = await sample(process.pid, port)
        for client in stateless + carriers:
            client.close()
    finally:
        for writer in slow:
            writer.close()
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await process.wait()
    return report


async def _delete(carrier: HttpClient, client: HttpClient) -> None:
    assert client.session is not None
    head = (
        (
            f"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{carrier.port}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
            "Content-Length: 0\r\n"
        ).encode()
        + b"Mcp-Session-Id: "
        + client.session
        + b"\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", carrier.port)
    try:
        writer.write(head)
        status = (await reader.readline()).split(b" ")[1]
        if status != b"200":
            raise BenchError(f"DELETE answered {status!r}")
    finally:
        writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    quiet = (lambda *_: None) if args.json else print
    report = asyncio.run(soak(args.sessions, args.calls, quiet))
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
