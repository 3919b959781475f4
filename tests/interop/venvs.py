"""Side environments for peers that cannot share the project's venv (``mcp`` 1.x vs 2.x).

Built once with uv under ``.cache/venvs/<name>`` and reused while the requirement is unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _uv() -> list[str]:
    # uv is a test dependency, so the project's own interpreter can always run it.
    return [sys.executable, "-m", "uv"]


def ensure_venv(name: str, requirement: str) -> Path:
    """The python executable of a venv holding *requirement*, created if missing or stale."""
    home = ROOT / ".cache" / "venvs" / name
    python = home / "bin" / "python"
    marker = home / ".requirement"
    if python.exists() and marker.exists() and marker.read_text() == requirement:
        return python
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}
    subprocess.run(
        [*_uv(), "venv", "--quiet", "--clear", "--python", sys.executable, str(home)], check=True, env=env
    )
    subprocess.run(
        [*_uv(), "pip", "install", "--quiet", "--python", str(python), requirement], check=True, env=env
    )
    marker.write_text(requirement)
    return python
