"""How the CLI tests run ``mcpkit``: the real command, as a subprocess, on pipes (or a pseudo-terminal
in test_terminal.py), against the bundled examples over stdio and over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import EXAMPLES, ROOT, free_port, http_server, mcpkit_run

#: Generous: a loaded 2-core machine spawns a Python server in well under this.
TIMEOUT = 120

WEATHER = str(EXAMPLES / "weather.py")
NOTES = str(EXAMPLES / "notes.py")
TRAVEL = str(EXAMPLES / "travel.py")
EVERYTHING = str(EXAMPLES / "everything.py")

#: A server for what the examples do not have: a slow tool, the environment, a tool that crashes the
#: process, a long line.
TOOLBOX = textwrap.dedent("""
    import os, sys, time
    from mcpkit import Context, Server

    server = Server("toolbox", "1.0.0")

    @server.tool
    def sleepy(seconds: float) -> str:
        print("sleeping", file=sys.stderr, flush=True)
        time.sleep(seconds)
        return "awake"

    @server.tool
    def env_value(name: str) -> str:
        return os.environ.get(name, "<unset>")

    @server.tool
    def crash() -> str:
        print("about to crash", file=sys.stderr, flush=True)
        os._exit(7)

    @server.tool
    async def sign_in(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in to continue", "https://example.com/sign-in?session=42")
        return f"sign-in: {answer.action}"

    @server.tool
    def long_line(count: int = 40) -> str:
        return "https://example.com/" + "/".join(f"segment{n}" for n in range(count))
""")


def run_mcpkit(*args: str, stdin: int | None = subprocess.DEVNULL, env: dict[str, str] | None = None,
               timeout: float = TIMEOUT, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``mcpkit ARGS`` with stdout and stderr on pipes (not terminals), from the repository root
    (or *cwd*)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def everything_url() -> Iterator[str]:
    """examples/everything.py served over Streamable HTTP for the whole session."""
    port = free_port()
    yield from http_server(mcpkit_run("everything.py", "--transport", "http", "--port", str(port)), port, 60)


@pytest.fixture
def toolbox(tmp_path: Path) -> str:
    path = tmp_path / "toolbox.py"
    path.write_text(TOOLBOX)
    return str(path)
