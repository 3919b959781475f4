"""Run the whole benchmark side by side and write the report: ``./dev bench [--short]``.

Every server answers the same raw JSON-RPC load from :mod:`loadgen` on this machine: first each on
its own, one after another; then the figures the targets are judged on in rounds, the servers (kept
running) taking turns (``rounds.py``). The figures go to ``bench/results/``: ``results.json`` (everything measured),
``results.md`` (the tables, with ratios against the official SDK's low-level ``Server`` measured in
the same run, and the targets of issues 5 and 16) and PNG plots.

``--short`` is the CI mode: every server is started over stdio and HTTP and must answer
``tools/list``, ``echo`` and ``add`` correctly, each measurement runs for a moment only, and the report
must render. Its figures mean nothing and nothing is asserted about them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadgen import BenchError
from measure import bench_http, bench_stdio, finish_stdio, import_time
from peers import BENCH, FULL, SHORT, Settings, ensure_ts, peers
from rounds import paired_http, side_by_side
from steps import STEPS

# -- the run ---------------------------------------------------------------------------------------


async def run_all(s: Settings, only: Sequence[str] | None, log: Callable[[str], None]) -> dict[str, Any]:
    selected = [p for p in peers() if not only or p.key in only]
    async with contextlib.AsyncExitStack() as stack:  # the servers kept running for the rounds
        for peer in selected:
            t0 = time.perf_counter()
            if peer.key == "ts":
                try:
                    ensure_ts()
                except (BenchError, subprocess.CalledProcessError, OSError) as exc:
                    peer.errors.append(f"install: {exc}")
                    log(f"{peer.key}: cannot install: {exc}")
                    continue
            for name, step in (("stdio", bench_stdio), ("http", bench_http)):
                try:
                    await asyncio.wait_for(step(peer, s, stack), 300)
                except Exception as exc:
                    peer.errors.append(f"{name}: {type(exc).__name__}: {exc}")
                    log(f"{peer.key}: {name} failed:\n{traceback.format_exc()}")
            try:
                peer.results["import_ms"] = import_time(peer, s.import_runs)
            except (subprocess.CalledProcessError, OSError) as exc:
                peer.errors.append(f"import: {exc}")
            log(f"{peer.key}: done in {time.perf_counter() - t0:.1f} s")
        await side_by_side(selected, s, log)
        t0 = time.perf_counter()
        try:
            paired = await asyncio.wait_for(paired_http(selected, s), 300)
        except Exception as exc:
            paired = {"error": f"{type(exc).__name__}: {exc}"}
            log(f"paired HTTP windows failed:\n{traceback.format_exc()}")
        log(f"{s.pairs} paired HTTP windows: {time.perf_counter() - t0:.1f} s")
        for peer in selected:
            try:
                await asyncio.wait_for(finish_stdio(peer, s), 300)
            except Exception as exc:
                peer.errors.append(f"stdio RSS: {type(exc).__name__}: {exc}")
                log(f"{peer.key}: stdio RSS failed:\n{traceback.format_exc()}")
    results: dict[str, Any] = {}
    for extra in STEPS:
        results[extra.key] = {}
        if extra.selected(only):
            t0 = time.perf_counter()
            results[extra.key] = await extra.run(s, log)
            log(f"{extra.key}: done in {time.perf_counter() - t0:.1f} s")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "mode": "short" if s is SHORT else "full",
        "settings": s.__dict__,
        "peers": [
            {"key": p.key, "label": p.label, "results": p.results, "errors": p.errors} for p in selected
        ],
        "paired_http": paired,
        **results,
    }


def machine() -> str:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    node = ""
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        node = subprocess.run(
            ["node", "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
    mem = ""
    with contextlib.suppress(OSError, ValueError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB"
    return (
        f"{os.cpu_count()} cores ({model or platform.machine()}){mem}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, Node {node or 'n/a'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="CI mode: check every server, time nothing")
    parser.add_argument(
        "--only",
        nargs="*",
        help="measure only these servers (keys: raw mcpkit ts sdk-lowlevel ...), or fleet (the fleet step)",
    )
    parser.add_argument("--out", type=Path, default=BENCH / "results", help="where to write the report")
    args = parser.parse_args(argv)
    settings = SHORT if args.short else FULL
    # Start-up is measured with bytecode caches written, as an installed package has them: a shell
    # that sets PYTHONDONTWRITEBYTECODE would otherwise have every spawn of mcpkit (an editable
    # install) compile its changed modules again.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {text}", file=sys.stderr, flush=True)

    try:
        import uvloop

        data = uvloop.run(run_all(settings, args.only, log))
    except ImportError:  # pragma: no cover
        data = asyncio.run(run_all(settings, args.only, log))
    data["seconds"] = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    import report

    report.write(data, args.out)
    log(f"report written to {args.out} ({data['seconds']:.0f} s in all)")
    failed = [f"{p['key']}: {e}" for p in data["peers"] for e in p["errors"]]
    failed += [line for step in STEPS for line in step.failures(data[step.key])]
    for line in failed:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
