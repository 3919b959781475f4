"""The package surface: what it exports, what importing it costs, and that the code stays clean."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import mcpkit

from .conftest import ROOT


def test_all_is_sorted_and_complete() -> None:
    assert mcpkit.__all__ == sorted(mcpkit.__all__, key=lambda n: (not n.isupper(), n))
    for name in mcpkit.__all__:
        assert hasattr(mcpkit, name), name
    public = {n for n, v in vars(mcpkit).items() if not n.startswith("_") and isinstance(v, type)}
    assert public <= set(mcpkit.__all__)


def test_the_package_is_marked_typed() -> None:
    # PEP 561: without the marker, type checkers ignore mcpkit's annotations in a user's project.
    marker = Path(mcpkit.__file__).parent / "py.typed"
    assert marker.is_file()
    assert marker.read_bytes() == b""
    # The wheel ships the package folder whole (hatch's `packages`), so the marker goes with it.
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel == {"packages": ["src/mcpkit"]}


def test_version_matches_the_project() -> None:
    assert f'version = "{mcpkit.__version__}"' in (ROOT / "pyproject.toml").read_text()


HEAVY = ("httpx", "starlette", "uvicorn", "h11", "anyio", "pydantic", "rich", "aiohttp", "yaml")


@pytest.mark.parametrize("module", ["mcpkit", "mcpkit.cli"])
def test_import_loads_no_http_stack_and_no_pydantic(module: str) -> None:
    code = f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    assert [m for m in loaded if m.split(".")[0] in HEAVY] == []


def test_ruff_is_clean() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "src", "tests", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "src", "tests", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_is_clean() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
