"""The servers the benchmark measures, its settings (full and short), and where their logs go."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadgen import BenchError, StdioServer

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SERVERS = BENCH / "servers"
TS = BENCH / "ts"
LOGS = ROOT / ".cache" / "bench-logs"
HOST = "127.0.0.1"
BASELINE = "sdk-lowlevel"
SUBJECT = "mcpkit"


@dataclass(frozen=True)
class Settings:
    cold_runs: int  # extra spawns to time cold start (besides the one measured)
    import_runs: int
    seq_calls: int
    seq_seconds: float
    pipe_seconds: float
    rss_calls: int  # calls made before "RSS after N calls"
    http_seconds: float
    sessions: int
    client_seconds: float
    rounds: int  # how many turns each server takes at the headline figures (see side_by_side)
    pairs: int  # paired windows of mcpkit and the ceiling over HTTP (see paired_http)
    pair_seconds: float
    in_flight: tuple[int, ...] = (1, 16)  # besides HEADLINE_IN_FLIGHT, measured in the rounds
    http_clients: tuple[int, ...] = (1, 32)  # besides HEADLINE_CLIENTS, measured in the rounds


FULL = Settings(cold_runs=2, import_runs=3, seq_calls=3000, seq_seconds=1.0, pipe_seconds=1.5,
                rss_calls=10_000, http_seconds=1.5, sessions=1000, client_seconds=1.5, rounds=3,
                pairs=6, pair_seconds=1.0)  # fmt: skip
SHORT = Settings(cold_runs=0, import_runs=1, seq_calls=20, seq_seconds=0.2, pipe_seconds=0.1,
                 rss_calls=200, http_seconds=0.1, sessions=10, client_seconds=0.1, rounds=1,
                 pairs=1, pair_seconds=0.1)  # fmt: skip

#: The figures the targets are judged on are measured in rounds, the servers taking turns:
#: stdio with this many calls in flight (and one at a time, on two cores) ...
HEADLINE_IN_FLIGHT = 64
#: ... and HTTP with this many clients.
HEADLINE_CLIENTS = 8


@dataclass
class Peer:
    key: str
    label: str
    stdio: list[str]
    http: Callable[[int], list[str]]
    imports: list[str]  # a command that only imports what the server needs
    bare: list[str]  # the same interpreter doing nothing (subtracted from the import time)
    cwd: Path = ROOT
    def_tool: str | None = None  # the same echo written as a sync ``def`` tool, where the server has one
    results: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # Kept running from a peer's own steps to the rounds (side_by_side):
    stdio_server: StdioServer | None = None
    stdio_calls: int = 0  # calls it has answered (for "RSS after N calls")
    http_port: int | None = None
    http_pid: int | None = None
    http_eras: list[str] = field(default_factory=list)
    turns: int = 0  # rounds taken so far (side_by_side): the order of its HTTP eras alternates


def peers() -> list[Peer]:
    py = sys.executable

    def script(name: str) -> Callable[[int], list[str]]:
        return lambda port: [py, str(SERVERS / name), "--http", str(port)]

    mcpkit_file = str(SERVERS / "mcpkit_server.py")
    node = shutil.which("node") or "node"
    return [
        Peer("raw", "hand-written loop (uvloop, orjson; raw ASGI on uvicorn)", [py, str(SERVERS / "raw_server.py")],
             script("raw_server.py"), [py, "-c", "import asyncio, uvloop, orjson, uvicorn"], [py, "-c", "pass"]),
        Peer("mcpkit", "mcpkit `Server` (high-level)", [py, "-m", "mcpkit", "run", mcpkit_file],
             # Every session of the benchmark comes from 127.0.0.1: lift the per-address cap (1,000).
             lambda port: [py, "-m", "mcpkit", "run", mcpkit_file, "--transport", "http", "--port", str(port),
                           "--max-sessions-per-client", "100000"],
             [py, "-c", "import mcpkit.cli, mcpkit"], [py, "-c", "pass"], def_tool="echo_sync"),
        Peer("ts", "TypeScript SDK 1.32 low-level `Server`", [node, str(TS / "server.mjs")],
             lambda port: [node, str(TS / "server.mjs"), "--http", str(port)],
             [node, "--input-type=module", "-e",
              "await import('@modelcontextprotocol/sdk/server/index.js');"
              "await import('@modelcontextprotocol/sdk/server/stdio.js')"],
             [node, "--input-type=module", "-e", "0"], cwd=TS),
        Peer(BASELINE, "`mcp` 2.3.0 low-level `Server`", [py, str(SERVERS / "sdk_lowlevel.py")],
             script("sdk_lowlevel.py"), [py, "-c", "import mcp.server.lowlevel, mcp.server.stdio"],
             [py, "-c", "pass"]),
        Peer("sdk-mcpserver", "`mcp` 2.3.0 `MCPServer`", [py, str(SERVERS / "sdk_mcpserver.py")],
             script("sdk_mcpserver.py"), [py, "-c", "import mcp.server.mcpserver"], [py, "-c", "pass"]),
        Peer("fastmcp", "`fastmcp` 4.1.2", [py, str(SERVERS / "fastmcp_server.py")], script("fastmcp_server.py"),
             [py, "-c", "import fastmcp"], [py, "-c", "pass"]),
    ]  # fmt: skip


def ensure_ts() -> None:
    """Install the TypeScript SDK into bench/ts/node_modules from the committed lock file."""
    if (TS / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise BenchError("npm is not installed; the TypeScript SDK peer needs Node.js and npm")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=TS, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


def log_file(peer: Peer, what: str) -> Any:
    LOGS.mkdir(parents=True, exist_ok=True)
    return open(LOGS / f"{peer.key}-{what}.log", "wb")
