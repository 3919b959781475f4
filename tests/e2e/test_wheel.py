"""The package as a user gets it: build the wheel and sdist, install the wheel into a fresh venv, and
run ``mcpkit demo`` and a user's own server from there (outside the repository)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e

USER_SERVER = '''
from mcpkit import Server

server = Server("mine")


@server.tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper() + "!"
'''


def uv(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "uv", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_wheel_installs_and_runs_the_demo_and_a_user_server(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    uv("build", "--quiet", "-o", str(dist), cwd=ROOT)
    wheels, sdists = list(dist.glob("mcpkit-*.whl")), list(dist.glob("mcpkit-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "mcpkit/py.typed" in names and "mcpkit/_examples/weather.py" in names

    venv = tmp_path / "venv"
    uv("venv", "--quiet", "--python", sys.executable, str(venv))
    uv("pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheels[0]))
    mcpkit = venv / "bin" / "mcpkit"
    home = tmp_path / "project"  # the user's folder: nothing of the repository around
    home.mkdir()

    demo = subprocess.run([str(mcpkit), "demo"], cwd=home, capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "get_weather" in demo.stdout and "done" in demo.stdout

    (home / "myserver.py").write_text(USER_SERVER)
    called = subprocess.run(
        [str(mcpkit), "call", "myserver.py", "shout", '{"text": "hi"}'],
        cwd=home,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert called.returncode == 0 and "HI!" in called.stdout, called.stdout + called.stderr
