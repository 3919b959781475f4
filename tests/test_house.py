"""The house rules that keep the tree small as it grows: every module of ``src/`` and ``bench/``
is at most :data:`MAX_LINES` long and opens with a docstring whose first line says its one job.

A module about to pass the limit is split, by job, in the change that grows it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

from .conftest import ROOT

MAX_LINES: Final = 500
MODULES: Final = sorted(
    path
    for folder in ("src", "bench")
    for path in (ROOT / folder).rglob("*.py")
    if not {".venv", "node_modules"} & set(path.parts)
)


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_tree_has_modules_to_check() -> None:
    assert len(MODULES) > 100  # a wrong ROOT would check nothing and pass


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_a_module_stays_small(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{_name(path)} has {lines} lines: split it by job"


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_a_module_says_its_job_first(path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert docstring and docstring.splitlines()[0].strip(), f"{_name(path)} opens with no docstring"
