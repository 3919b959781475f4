"""Servers no restart can help: given up on, with the reason and the count, not "restarting" for ever.

A configured stdio server whose command does not exist fails at once (nothing to retry until the
config changes); one that keeps going away is given up on after ``max_restarts`` restarts in a row.
The backoff between restarts is waited out by a fake clock that records each wait: no test waits on
real backoff.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, TextContent
from mcpkit.host import Host, Unavailable

from ..conftest import ROOT
from ._util import config, example, run

pytestmark = pytest.mark.e2e

MISSING = "no-such-binary-xyz"
REASON = f"command not found: {MISSING} (not retried)"
CRASHING = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}


class FakeSleep:
    """Stands in for asyncio.sleep between restarts: records each wait, and waits for none."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def test_a_missing_command_fails_at_once_with_the_reason(tmp_path: Path) -> None:
    servers = {"ghost": {"command": MISSING}, "weather": example("weather.py")}

    async def main() -> None:
        host = Host(config(servers, tmp_path))
        sleep = host.upstreams["ghost"].sleep = FakeSleep()
        async with host:
            ghost = host.status()["ghost"]
            assert (ghost.state, ghost.error, ghost.restarts) == ("failed", REASON, 0)
            assert sleep.waits == []  # not retried: no backoff was even begun
            with pytest.raises(
                Unavailable, match=r"server 'ghost' is failed: command not found: no-such-binary-xyz"
            ):
                await host.call_tool("ghost__anything")
            assert host.status()["weather"].state == "ready"  # the others are served as ever
            for _ in range(20):  # and it stays failed: no supervisor is left to try again
                await asyncio.sleep(0)
            assert host.status()["ghost"].state == "failed" and sleep.waits == []

    run(main())


def test_a_stdio_server_that_keeps_going_away_is_given_up_on_after_the_cap(tmp_path: Path) -> None:
    async def main() -> None:
        host = Host(config({"crash": CRASHING}, tmp_path), max_restarts=3, connect_timeout=60)
        sleep = host.upstreams["crash"].sleep = FakeSleep()
        async with host:
            for _ in range(600):  # each restart starts a process: bounded by run()'s deadline
                if host.status()["crash"].state == "failed":
                    break
                await asyncio.sleep(0.05)
            crash = host.status()["crash"]
            assert crash.state == "failed", crash
            assert crash.restarts == 3
            assert crash.error == "the server closed the connection (exit code 3); gave up after 3 restarts"
            assert sleep.waits == [0.25, 0.5, 1.0]  # the backoff, doubling, then no more

    run(main(), 120)


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / ".config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


def _write(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "host.json"
    audit = {"path": str(tmp_path / "audit.jsonl")}
    path.write_text(
        json.dumps({"mcpServers": servers, "mcpkit": {"audit": audit, "policy": {"default": "allow"}}})
    )
    return path


def test_host_list_shows_a_missing_command_as_failed_with_the_reason(tmp_path: Path) -> None:
    cfg = _write(tmp_path, {"ghost": {"command": MISSING}, "weather": example("weather.py")})
    listed = subprocess.run(
        [sys.executable, "-m", "mcpkit", "host", str(cfg), "--list"],
        capture_output=True, text=True, timeout=90, env=_env(tmp_path), cwd=ROOT, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert f"ghost: failed  ({REASON})" in listed.stdout.splitlines()
    assert "weather: ready 2026-07-28" in listed.stdout
    assert "weather__get_weather" in listed.stdout


def test_the_gateway_says_why_a_server_with_a_missing_command_is_down(tmp_path: Path) -> None:
    cfg = _write(tmp_path, {"ghost": {"command": MISSING}, "weather": example("weather.py")})

    async def main() -> None:
        command = [sys.executable, "-m", "mcpkit", "gateway", str(cfg)]
        async with Client(command, env=_env(tmp_path)) as client:
            names = [tool.name for tool in await client.list_tools()]
            assert "weather__get_weather" in names and not any(n.startswith("ghost__") for n in names)
            result = await client.call_tool("ghost__anything", {})
            text = " ".join(b.text for b in result.content if isinstance(b, TextContent))
            assert result.is_error and text == f"server 'ghost' is failed: {REASON}"

    run(main(), 90)
