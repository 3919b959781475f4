"""Helpers of the host tests: configs over real server processes, and running a coroutine with a bound."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from mcpkit import Client
from mcpkit.host import HostConfig, parse_config

from ..conftest import EXAMPLES, ROOT, free_port, http_server

T = TypeVar("T")
SERVERS = Path(__file__).parent / "servers"
NPM = Path(__file__).parent / "npm"


def example(name: str, **extra: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry running ``examples/<name>`` over stdio."""
    return {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(EXAMPLES / name)], **extra}


def toolbox(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(SERVERS / "toolbox.py")], **extra}


def config(servers: dict[str, Any], tmp_path: Path, **mcpkit: Any) -> HostConfig:
    """A parsed mcpServers config whose audit log is ``tmp_path/audit.jsonl``."""
    extra = {"audit": {"path": str(tmp_path / "audit.jsonl")}, "policy": {"default": "allow"}, **mcpkit}
    return parse_config({"mcpServers": servers, "mcpkit": extra}, base=tmp_path)


def audit_lines(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run(main: Coroutine[Any, Any, T], seconds: float = 120) -> T:
    """Run *main* with an upper bound, so a hang fails the test instead of the run."""
    return asyncio.run(asyncio.wait_for(main, seconds))


def check_over_http(
    command: list[str], check: Callable[[Client], Awaitable[None]], versions: list[str]
) -> None:
    """Serve *command* (an mcpkit command taking ``--transport http``) on a free port and run
    *check* on a client of it in each of *versions*."""
    port = free_port()
    for url in http_server([*command, "--transport", "http", "--port", str(port)], port, 60):
        for version in versions:
            run(_checked(url, version, check), 240)


async def _checked(url: str, version: str, check: Callable[[Client], Awaitable[None]]) -> None:
    async with Client(url, protocol_version=version, timeout=120) as client:
        await check(client)


def mcpkit_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
        check=False,
    )
