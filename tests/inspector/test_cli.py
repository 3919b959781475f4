"""``mcpkit dev`` as a command: the browser it opens, and the mistakes it reports."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import ROOT
from .conftest import start_dev, stop

pytestmark = pytest.mark.e2e


def _dev(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "dev", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_a_missing_file_or_watch_path_is_reported() -> None:
    missing = _dev("no_such_server.py", "--no-browser")
    assert missing.returncode == 2  # a usage error, as from every command
    assert "mcpkit: no such file: no_such_server.py" in missing.stderr
    nothing = _dev("examples/weather.py", "--watch", "/no/such/folder", "--no-browser")
    assert nothing.returncode == 2
    assert "nothing to watch at /no/such/folder" in nothing.stderr


def test_a_port_in_use_is_reported() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _dev("examples/weather.py", "--no-browser", "--port", str(port))
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


def test_the_browser_is_opened_on_the_tokened_address(tmp_path: Path) -> None:
    # Python's webbrowser module runs $BROWSER with the address: a script that writes it down.
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{opened}"\n')
    browser.chmod(0o755)
    inspector = start_dev("examples/weather.py", env={"BROWSER": str(browser)}, browser=True)
    try:
        deadline = time.monotonic() + 90
        while not (opened.exists() and opened.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert opened.exists(), "mcpkit dev opened no browser within 90 s"
        url = opened.read_text()
        assert url == inspector.url  # the address printed is the one opened
        assert url.startswith(f"http://127.0.0.1:{inspector.port}/?token=")
        assert len(inspector.token) >= 32  # 24 random bytes, base64url
    finally:
        stop(inspector)
