"""The benchmark's short mode (``./dev bench --short``): every server answers, and the report renders.

No timing is asserted: the short mode measures each figure for a moment only, so that CI checks the
benchmark itself (servers, load generator, report), not this machine's speed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.e2e, pytest.mark.interop]


def test_short_benchmark_runs_every_server_and_renders_the_report(tmp_path: Path) -> None:
    only: list[str] = []
    if shutil.which("node") is None or shutil.which("npm") is None:  # the one peer we cannot install
        only = ["raw", "mcpkit", "sdk-lowlevel", "sdk-mcpserver", "fastmcp"]
    command = [sys.executable, str(ROOT / "bench" / "run.py"), "--short", "--out", str(tmp_path)]
    if only:
        command += ["--only", *only]
    # About 70 s on a quiet 2-core machine; several times that beside three other test processes.
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]

    data = json.loads((tmp_path / "results.json").read_text())
    keys = {peer["key"] for peer in data["peers"]}
    assert keys == set(only or ["raw", "mcpkit", "ts", "sdk-lowlevel", "sdk-mcpserver", "fastmcp"])
    for peer in data["peers"]:
        assert peer["errors"] == [], peer
        results = peer["results"]
        # Each figure exists only if the server answered the checks and the load (errors raise).
        for metric in (
            "cold_start_ms",
            "stdio_64_per_s",
            "rss_after_mb",
            "http_handshake_8_per_s",
            "session_kb",
        ):
            assert metric in results, (peer["key"], metric)
    by_key = {peer["key"]: peer["results"] for peer in data["peers"]}
    for key in ("raw", "mcpkit", "sdk-lowlevel"):  # these speak 2026-07-28 over HTTP too
        assert by_key[key].get("modern_http") == "yes", by_key[key].get("modern_http")
        assert "http_modern_8_per_s" in by_key[key]
    # The paired HTTP windows of mcpkit and the ceiling: one pair in the short mode.
    if "raw" in keys and "mcpkit" in keys:
        paired = data["paired_http"]
        assert set(paired) == {
            "handshake_over_raw",
            "modern_over_raw",
            "modern_over_handshake",
            "raw_modern_over_handshake",
        }, paired
        for entry in paired.values():
            assert len(entry["pairs"]) == 1 and entry["median"] > 0, entry
    for client in data["clients"].values():
        assert "error" not in client, client
    # The fleet step: every setup measured, or skipped for a missing redis-server or nginx.
    setups = data["fleet"]["setups"]
    assert [s["key"] for s in setups] == ["memory", "redis", "redis-nginx", "fleet"]
    for setup in setups:
        assert "error" not in setup, setup
        assert "skipped" in setup or "handshake_per_s" in setup["results"], setup

    report = (tmp_path / "results.md").read_text()
    for peer in data["peers"]:
        assert peer["label"] in report
    assert "**Targets**" in report
    assert "paired windows:" in report
    assert "**A fleet**" in report
    for plot in ("stdio.png", "http.png", "memory.png"):
        assert (tmp_path / plot).read_bytes().startswith(b"\x89PNG")


def test_the_era_and_placement_breakdowns_run_and_print_every_row() -> None:
    # bench/eras_http.py and bench/def_placement.py, for a moment each: every server, era, placement
    # and tool measured (a wrong answer or a failed load raises), and every row printed.
    eras = subprocess.run([sys.executable, str(ROOT / "bench" / "eras_http.py"), "1", "0.1"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert eras.returncode == 0, eras.stderr[-4000:]
    for server in ("raw", "mcpkit"):
        for era in ("handshake", "modern", "modern-no-info"):
            assert any(line.split()[:2] == [server, era] for line in eras.stdout.splitlines()), eras.stdout
        assert any(line.split()[:4] == [server, "modern-no-info", "against", "handshake:"]
                   for line in eras.stdout.splitlines()), eras.stdout  # fmt: skip
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("bench/def_placement.py needs two cores")
    placement = subprocess.run([sys.executable, str(ROOT / "bench" / "def_placement.py"), "1", "0.1"],
                               capture_output=True, text=True, timeout=300)  # fmt: skip
    assert placement.returncode == 0, placement.stderr[-4000:]
    for where in ("unpinned", "server-on-one-core", "worker-on-other-core"):
        assert f"{where:21} def against async def:" in placement.stdout, placement.stdout
        for tool in ("echo", "echo_sync"):
            assert any(line.split()[:2] == [where, tool] for line in placement.stdout.splitlines())
