"""Shared fixtures: where the spec lives, and how to start servers as real processes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "spec"
EXAMPLES = ROOT / "examples"


def mcpkit_run(example: str, *extra: str) -> list[str]:
    """The command line that serves ``examples/<example>`` over stdio."""
    return [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / example), *extra]


@pytest.fixture
def spec_dir() -> Path:
    if not SPEC.is_dir():
        pytest.fail(f"the spec is expected at {SPEC} (shared/ beside the repository)")
    return SPEC
