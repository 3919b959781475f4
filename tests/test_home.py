"""The suite leaves the user's home alone: tests run with ``HOME`` and the XDG folders in a temporary
folder (tests/_home.py), the processes they start included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcpkit.host.audit import default_audit_path

from . import _home
from .conftest import EXAMPLES, ROOT


def test_a_gateway_without_an_audit_path_writes_its_line_in_the_tests_home(tmp_path: Path) -> None:
    """What tests/auth/test_passthrough.py did: a host with no audit path configured, in a process of
    its own, logs its call under the test's home; the user's audit log is not touched."""
    real = _home.real_env()
    real_folders = _home.mcpkit_folders(real)
    before = _home.snapshot(real_folders)
    landed = default_audit_path()
    assert not any(landed.is_relative_to(folder) for folder in real_folders), landed
    assert landed.is_relative_to(os.environ["XDG_STATE_HOME"])
    assert Path(os.environ["HOME"]) != Path(real["HOME"])
    lines_before = landed.read_text().splitlines() if landed.exists() else []

    server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(EXAMPLES / "weather.py")]}
    config = tmp_path / "host.json"
    config.write_text(
        json.dumps({"mcpServers": {"weather": server}, "mcpkit": {"policy": {"default": "allow"}}})
    )
    called = subprocess.run(
        [sys.executable, "-m", "mcpkit", "host", str(config), "--call", "weather__get_weather", "location=Oslo"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    assert called.returncode == 0, called.stderr

    new = [json.loads(line) for line in landed.read_text().splitlines()[len(lines_before) :]]
    assert [(line["name"], line["decision"]) for line in new] == [("weather__get_weather", "allow")]
    assert _home.snapshot(real_folders) == before


def test_the_tools_keep_their_real_caches() -> None:
    """uv and npm find what they downloaded before: their caches stay in the real home."""
    real_home = Path(_home.real_env()["HOME"])
    assert Path(os.environ["HOME"]) != real_home
    for name in ("UV_CACHE_DIR", "npm_config_cache"):
        assert not Path(os.environ[name]).is_relative_to(os.environ["HOME"]), name
