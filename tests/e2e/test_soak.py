"""The bounded soak (``bench/soak.py``) in CI: 1,000 handshake-era sessions, 100,000 calls in both eras,
slow readers held open throughout; no errors, and memory, descriptors, threads and asyncio tasks flat
after warm-up."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from soak import soak  # noqa: E402

pytestmark = pytest.mark.e2e


def test_a_thousand_sessions_and_a_hundred_thousand_calls_leave_nothing_behind() -> None:
    report = asyncio.run(soak(sessions=1000, calls=100_000, log=lambda *_: None))
    print(report)  # the figures, for the log (pytest -s, or the CI output on failure)
    warm, end, deleted = report["after_warmup"], report["after_calls"], report["after_delete"]
    assert report["errors"] == 0
    # Flat after warm-up: 80,000 more calls may not grow the server by more than a few MB ...
    assert end["rss_mb"] - warm["rss_mb"] <= 8, report
    # ... nor hold descriptors or threads: the load's connections and the slow readers are all there is.
    assert end["fds"] <= warm["fds"] + 4, report
    assert end["threads"] <= warm["threads"] + 2, report
    # ... nor tasks: the slow readers' streams are all that runs between calls.
    assert end["tasks"] <= warm["tasks"] + 2, report
    # Ending the sessions and dropping the slow readers releases their connections.
    assert deleted["fds"] <= end["fds"], report
    assert deleted["rss_mb"] - end["rss_mb"] <= 4, report
    assert deleted["tasks"] <= end["tasks"], report
