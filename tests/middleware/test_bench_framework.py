"""bench/framework.py runs: every case is measured in both eras and the rows are derived (no
figure is asserted: this checks the benchmark, not the machine)."""

from __future__ import annotations

import json
import subprocess
import sys

from mcpkit import Server

from ..conftest import ROOT


def test_the_framework_bench_measures_every_case() -> None:
    command = [
        sys.executable,
        str(ROOT / "bench" / "framework.py"),
        "--seconds",
        "0.01",
        "--rounds",
        "1",
        "--json",
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    data = json.loads(proc.stdout)
    cases = {"plain", "other_mw", "noop_mw", "child", "mounted"}
    rows = {"one no-op middleware", "the middleware layer alone", "a mounted call"}
    if not hasattr(Server, "mount"):  # (mounting is being written: until then its row is missing)
        assert set(data["errors"]) == {"mounted"}
        cases.discard("mounted")
        rows.discard("a mounted call")
    else:
        assert data["errors"] == {}
    for era in ("handshake", "modern"):
        assert set(data["medians"][era]) == cases
        assert set(data["differences"][era]) == rows
