"""Progress a 2026-07-28 tool reports before it asks the user is shown once: the tool runs again
with the answer and reports that progress again, and ``mcpkit call`` does not show it twice.

A replay is an update of the same call whose progress is not beyond what was already shown (each
round has a new request id, so a new progress token: the call is what stays the same)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import free_port, http_server
from .conftest import run_mcpkit

pytestmark = pytest.mark.e2e

REPLAY = str(Path(__file__).parent / "fixtures" / "replay.py")
SHOWN = ["progress 1/3: looking", "progress 2/3: working", "progress 3/3: done"]


@pytest.fixture(scope="module")
def replay_url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", REPLAY, "--transport", "http", "--port", str(port)]
    yield from http_server(command, port, 60)


def _progress_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("progress ")]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_progress_before_a_question_is_shown_once_over_stdio(revision: str) -> None:
    # No terminal: the question is cancelled at once, and the tool runs on (2026-07-28: again).
    called = run_mcpkit("call", REPLAY, "steps", "--protocol-version", revision)
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "answer: cancel"
    assert _progress_lines(called.stderr) == SHOWN


def test_progress_before_a_question_is_shown_once_over_http(replay_url: str) -> None:
    called = run_mcpkit("call", replay_url, "steps", "--protocol-version", "2026-07-28")
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "answer: cancel"
    assert _progress_lines(called.stderr) == SHOWN
