"""HTTP clients side by side: each one, in its own process, calls ``echo`` on one mcpkit server over
Streamable HTTP, first one call at a time, then 16 callers on one client.

    python clients_http.py [--seconds S] [--rounds N] [--only NAME,...] [--json PATH]   # the table
    python clients_http.py --short                                        # a few rows: that they answer
    python clients_http.py --client NAME[@uvloop] URL SECONDS             # one client, one JSON line

The clients: mcpkit's ``Client`` in the handshake era (2025-11-25) and in 2026-07-28, the official
SDK's and fastmcp's ``Client``, the TypeScript SDK's client (``bench/ts/client.mjs``), a raw
``httpx.AsyncClient`` POST loop, a raw ``aiohttp`` one (if installed), and the floor: a plain
asyncio-streams HTTP/1.1 loop with orjson, one connection per caller, no MCP at all beyond the
initialize it needs (``floor``) or the ``_meta`` each 2026-07-28 request carries (``floor-2026``,
the floor for mcpkit's 2026-07-28 row: the server reads that ``_meta`` on every call). The Python
ones run on asyncio's loop and on uvloop. Client CPU is the client process's own ``process_time``
(user and system) over the calls; the server's is not counted. The clients take turns in rounds (the
machine's speed moves), and each row is the median of its rounds.
``./dev bench`` runs this as its ``clients_http`` step (``bench/steps.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# What every 2026-07-28 request carries in its _meta (no session holds it): the load generator's.
from load_messages import MODERN_META

BENCH = Path(__file__).resolve().parent
TEXT = "hello, benchmark"
WIDTH = 16
HANDSHAKE, MODERN = "2025-11-25", "2026-07-28"
ARGS = {"name": "echo", "arguments": {"text": TEXT}}


async def measure(call: Callable[[], Awaitable[str]], seconds: float) -> dict[str, float]:
    """Calls/s, client CPU per call and median latency, one at a time and with WIDTH callers."""
    for _ in range(50):  # warm: connections open, first-call imports done
        if await call() != TEXT:
            raise AssertionError("echo answered something else")
    figures: dict[str, float] = {}
    for label, width in (("sequential", 1), ("concurrent", WIDTH)):
        count = 0
        latencies: list[float] = []
        cpu0, t0 = time.process_time(), time.perf_counter()
        deadline = t0 + seconds

        async def worker(deadline: float, latencies: list[float]) -> None:
            nonlocal count
            while (now := time.perf_counter()) < deadline:
                await call()
                latencies.append(time.perf_counter() - now)
                count += 1

        await asyncio.gather(*(worker(deadline, latencies) for _ in range(width)))
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        figures[f"{label}_calls_per_s"] = count / elapsed
        figures[f"{label}_cpu_us"] = cpu / count * 1e6
        figures[f"{label}_p50_us"] = statistics.median(latencies) * 1e6
    return figures


def _text(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


async def with_mcpkit(url: str, seconds: float, version: str) -> dict[str, float]:
    from mcpkit import Client

    async with Client(url, protocol_version=version) as client:
        return await measure(lambda: _call_mcpkit(client), seconds)


async def _call_mcpkit(client: Any) -> str:
    return _text(await client.call_tool("echo", {"text": TEXT}))


async def with_official(url: str, seconds: float) -> dict[str, float]:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client  # mcp 2.x's name for it

    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call() -> str:
            return _text(await session.call_tool("echo", {"text": TEXT}))

        return await measure(call, seconds)


async def with_fastmcp(url: str, seconds: float) -> dict[str, float]:
    import fastmcp

    async with fastmcp.Client(url) as client:

        async def call() -> str:
            return _text(await client.call_tool("echo", {"text": TEXT}))

        return await measure(call, seconds)


#: Sends one JSON-RPC body with the session id, if any; returns the answer's body and session id.
Post = Callable[[bytes, str | None], Awaitable[tuple[bytes, str | None]]]


async def _initialized(post: Post) -> str | None:
    """initialize and notifications/initialized; the session id the server gave, if any."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": HANDSHAKE,
            "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}  # fmt: skip
    _, session = await post(json.dumps(init).encode(), None)
    await post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    return session


async def _measure_posts(post: Post, seconds: float, era: str = HANDSHAKE) -> dict[str, float]:
    """Measure echo calls sent with *post* with orjson bodies, in a session opened first (the
    handshake era) or each request carrying the ``_meta`` its revision requires (2026-07-28): the
    part the raw clients share, whatever sends their bytes."""
    import orjson

    session = await _initialized(post) if era == HANDSHAKE else None
    params = ARGS if era == HANDSHAKE else {**ARGS, "_meta": MODERN_META}
    ids = iter(range(1, 1 << 62))

    async def call() -> str:
        body = orjson.dumps({"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params})
        answer, _ = await post(body, session)
        return orjson.loads(answer)["result"]["content"][0]["text"]  # type: ignore[no-any-return]

    return await measure(call, seconds)


def _headers(session: str | None, era: str = HANDSHAKE) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": era, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}  # fmt: skip
    if session:
        headers["Mcp-Session-Id"] = session
    return headers


async def with_httpx(url: str, seconds: float) -> dict[str, float]:
    import httpx

    async with httpx.AsyncClient(timeout=30) as http:

        async def post(body: bytes, session: str | None) -> tuple[bytes, str | None]:
            reply = await http.post(url, content=body, headers=_headers(session))
            return reply.content, reply.headers.get("mcp-session-id")

        return await _measure_posts(post, seconds)


async def with_aiohttp(url: str, seconds: float) -> dict[str, float]:
    import aiohttp  # type: ignore[import-not-found, unused-ignore]  # not a dependency: skipped if absent

    async with aiohttp.ClientSession() as http:

        async def post(body: bytes, session: str | None) -> tuple[bytes, str | None]:
            async with http.post(url, data=body, headers=_headers(session)) as reply:
                return await reply.read(), reply.headers.get("mcp-session-id")

        return await _measure_posts(post, seconds)


async def with_floor(url: str, seconds: float, era: str = HANDSHAKE) -> dict[str, float]:
    """What any client must do at the least: one write per request, the answer read by its
    Content-Length, JSON by orjson, one kept-alive connection per caller (handed out LIFO); in
    *era*'s form (a 2026-07-28 request carries its ``_meta``, and the server reads it each time)."""
    host, _, rest = url.removeprefix("http://").partition("/")
    address, _, port = host.partition(":")
    path = ("/" + rest).encode()
    free: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(body: bytes, session: str | None) -> tuple[bytes, str | None]:
        reader, writer = free.pop() if free else await asyncio.open_connection(address, int(port))
        head = "".join(f"{k}: {v}\r\n" for k, v in _headers(session, era).items())
        writer.write(b"POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n%s"
                     % (path, host.encode(), head.encode(), len(body), body))  # fmt: skip
        lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        fields = {k.lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:] if line)}
        answer = await reader.readexactly(int(fields.get(b"content-length", b"0")))
        free.append((reader, writer))
        sid = fields.get(b"mcp-session-id")
        return answer, sid.decode() if sid else None

    return await _measure_posts(post, seconds, era)


PYTHON: dict[str, Callable[[str, float], Awaitable[dict[str, float]]]] = {
    "mcpkit": lambda url, s: with_mcpkit(url, s, HANDSHAKE),
    "mcpkit-2026": lambda url, s: with_mcpkit(url, s, MODERN),
    "official": with_official,
    "fastmcp": with_fastmcp,
    "httpx": with_httpx,
    "aiohttp": with_aiohttp,
    "floor": with_floor,
    "floor-2026": lambda url, s: with_floor(url, s, MODERN),
}
ROWS = [*(f"{name}@{loop}" for name in PYTHON for loop in ("asyncio", "uvloop")), "typescript"]
#: What ``--short`` runs (``./dev bench --short``): that the script and each kind of client answer.
SHORT_ROWS = ["mcpkit@asyncio", "mcpkit-2026@uvloop", "floor@asyncio", "floor-2026@uvloop", "typescript"]
#: The targets for mcpkit's client: sequential client CPU per call at most, 16 callers' calls/s at least.
TARGET_CPU_US, TARGET_CALLS = 100.0, 15_000.0


def skipped(row: str) -> str | None:
    """Why *row* cannot run here, or ``None``: aiohttp is no dependency of the project's (the locked
    environment that ``./dev bench`` syncs removes it), and the TypeScript row needs Node."""
    name = row.partition("@")[0]
    if name == "aiohttp" and importlib.util.find_spec("aiohttp") is None:
        return "aiohttp is not installed (not in uv.lock)"
    if name == "typescript" and not (BENCH / "ts" / "node_modules" / "@modelcontextprotocol").is_dir():
        return "bench/ts/node_modules is missing (./dev bench installs it)"
    return None


def one_client(which: str, url: str, seconds: float) -> None:
    name, _, loop = which.partition("@")
    run: Callable[[Any], Any] = asyncio.run
    if loop == "uvloop":
        import uvloop

        run = uvloop.run
    try:
        figures = run(PYTHON[name](url, seconds))
    except Exception as exc:  # one JSON line either way: the table says what failed
        figures = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(figures))


def run_row(row: str, url: str, seconds: float) -> dict[str, Any]:
    if row == "typescript":  # the machine's node, as the TypeScript server peer runs on
        node = shutil.which("node") or "node"
        command = [node, str(BENCH / "ts" / "client.mjs"), url, str(seconds), str(WIDTH)]
    else:
        command = [sys.executable, __file__, "--client", row, url, str(seconds)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds * 4 + 120, check=False)
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else {"error": done.stderr.strip()[-300:] or "no output"}
    except ValueError:
        return {"error": lines[-1][:300]}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def table(rows: list[str], url: str, seconds: float, rounds: int) -> dict[str, Any]:
    out: dict[str, Any] = {row: {"skipped": why} for row in rows if (why := skipped(row))}
    rows = [row for row in rows if row not in out]
    taken: dict[str, list[dict[str, Any]]] = {row: [] for row in rows}
    for number in range(rounds):
        for row in rows if number % 2 == 0 else reversed(rows):  # in turns, each round the other way
            taken[row].append(run_row(row, url, seconds))
            print(f"round {number + 1}: {row}: {taken[row][-1]}", file=sys.stderr)
    for row, results in taken.items():
        good = [r for r in results if "error" not in r]
        if not good:
            out[row] = {"error": results[-1].get("error")}
            continue
        out[row] = {key: statistics.median(r[key] for r in good) for key in good[0]}
    return out


def measure_all(rows: list[str], seconds: float, rounds: int) -> dict[str, Any]:
    """The table's rows against one mcpkit echo server over Streamable HTTP, started here."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", str(BENCH / "servers" / "mcpkit_server.py"),
         "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.2)
        results = table(rows, f"http://127.0.0.1:{port}/mcp", seconds, rounds)
    finally:
        server.terminate()
        server.wait()
    return {"cpus": os.cpu_count(), "seconds": seconds, "rounds": rounds, "rows": results,
            "targets": targets(results)}  # fmt: skip


def targets(rows: dict[str, Any]) -> list[str]:
    """Each target for mcpkit's client, per era and loop, with the floor loop's own figure beside it."""
    lines = []
    for loop in ("asyncio", "uvloop"):
        for name, floor_name in (("mcpkit", "floor"), ("mcpkit-2026", "floor-2026")):
            floor = rows.get(f"{floor_name}@{loop}", {})
            r = rows.get(f"{name}@{loop}", {})
            if "sequential_cpu_us" not in r:
                continue
            cpu, calls = r["sequential_cpu_us"], r["concurrent_calls_per_s"]
            cpu_floor = f"{floor['sequential_cpu_us']:.0f}" if "sequential_cpu_us" in floor else "?"
            calls_floor = (
                f"{floor['concurrent_calls_per_s']:,.0f}" if "concurrent_calls_per_s" in floor else "?"
            )
            lines.append(
                f"{name}@{loop}: sequential client CPU {cpu:.0f} us/call (<= {TARGET_CPU_US:.0f}; floor "
                f"{cpu_floor}) {'ok' if cpu <= TARGET_CPU_US else 'MISSED'}; 16 callers {calls:,.0f} calls/s "
                f"(>= {TARGET_CALLS:,.0f}; floor {calls_floor}) {'ok' if calls >= TARGET_CALLS else 'MISSED'}"
            )
    return lines


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| client | seq CPU us/call | seq p50 us | seq calls/s | 16 callers calls/s | 16 callers CPU us/call |",
        "|---|---|---|---|---|---|",
    ]
    for row, r in results["rows"].items():
        if "error" in r or "skipped" in r:
            lines.append(f"| {row} | {r.get('error') or 'skipped: ' + r['skipped']} | | | | |")
            continue
        lines.append(f"| {row} | {r['sequential_cpu_us']:.0f} | {r['sequential_p50_us']:.0f} | "
                     f"{r['sequential_calls_per_s']:,.0f} | {r['concurrent_calls_per_s']:,.0f} | "
                     f"{r['concurrent_cpu_us']:.0f} |")  # fmt: skip
    return "\n".join([*lines, "", *results["targets"]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--client", nargs=3, metavar=("NAME", "URL", "SECONDS"))
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="rows to run, comma-separated (e.g. mcpkit@asyncio,floor@asyncio)")
    parser.add_argument("--short", action="store_true", help="a few rows, briefly: that each answers")
    parser.add_argument("--json", metavar="PATH", help="also write the figures there")
    args = parser.parse_args()
    if args.client:
        one_client(args.client[0], args.client[1], float(args.client[2]))
        return
    rows = args.only.split(",") if args.only else SHORT_ROWS if args.short else ROWS
    results = measure_all(rows, 0.1 if args.short else args.seconds, 1 if args.short else args.rounds)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(markdown(results))


if __name__ == "__main__":
    main()
