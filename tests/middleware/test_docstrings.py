"""The examples in the docstrings of mcpkit.middleware run, and a plain server does not load it."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest

MODULES = ["limits", "masking", "ratelimit", "redaction", "timing"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(f"mcpkit.middleware.{name}")
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failed == 0 and attempted > 0


def test_the_core_examples_run() -> None:
    core = importlib.import_module("mcpkit._middleware")
    failed, attempted = doctest.testmod(core, optionflags=doctest.ELLIPSIS)
    assert failed == 0 and attempted > 0


def test_import_mcpkit_does_not_load_the_package() -> None:
    code = "import sys, mcpkit; print(any(m.startswith('mcpkit.middleware') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr
