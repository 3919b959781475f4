"""The ``mcpkit host`` shell as a user meets it: did-you-mean for tools, prompts and commands,
typed and nested arguments (asked for when left out), a call's progress, and ``prompt NAME``. The
host's servers are real stdio subprocesses, in both eras; the shell reads a pipe, or a
pseudo-terminal where the terminal matters (progress redrawn on one line)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from ..conftest import EXAMPLES, ROOT
from .conftest import TIMEOUT

TYPED = Path(__file__).parent / "fixtures" / "typed.py"
ERAS = ["2025-11-25", "2026-07-28"]


def _config(tmp_path: Path, revision: str) -> Path:
    def entry(path: Path) -> dict[str, object]:
        args = ["-m", "mcpkit", "run", str(path)]
        return {"command": sys.executable, "args": args, "protocolVersion": revision}

    servers = {
        "typed": entry(TYPED),
        "every": entry(EXAMPLES / "everything.py"),
        "notes": entry(EXAMPLES / "notes.py"),
    }
    mcpkit = {"policy": {"default": "allow"}, "audit": {"path": str(tmp_path / "audit.jsonl")}}
    path = tmp_path / "host.json"
    path.write_text(json.dumps({"mcpServers": servers, "mcpkit": mcpkit}))
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"), "NO_COLOR": "1"}  # fmt: skip


def _shell(tmp_path: Path, revision: str, lines: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "host", str(_config(tmp_path, revision))],
        input="\n".join([*lines, "quit"]) + "\n",
        capture_output=True, text=True, timeout=TIMEOUT, env=_env(tmp_path), cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("revision", ERAS)
def test_did_you_mean_for_commands_tools_and_prompts(tmp_path: Path, revision: str) -> None:
    out = _shell(
        tmp_path,
        revision,
        ["lst", "call typed__place_ordr", "describe typed__plto", "prompt notes__sumarize", "call", "tools"],
    )
    assert " tools from 3 servers; 'help' lists the commands" in out
    assert "unknown command 'tools'" not in out  # what a newcomer types first lists the tools
    assert "typed__place_order  Order something." in out.split("call what?")[1]
    assert "unknown command 'lst'; did you mean list? ('help' lists the commands)" in out
    assert "no tool 'typed__place_ordr' on the host; did you mean typed__place_order or typed__plot?" in out
    assert "no tool 'typed__plto' on the host; did you mean typed__plot or " in out
    assert "no prompt 'notes__sumarize' on the host; did you mean notes__summarize?" in out
    assert "call what? call NAME (list shows the tools)" in out


@pytest.mark.parametrize("revision", ERAS)
def test_nested_arguments_are_given_or_asked_for(tmp_path: Path, revision: str) -> None:
    lines = [
        "describe typed__place_order",
        "call typed__place_order order.item=pen",  # order.qty is asked for
        "2",
        "call typed__place_order",  # the whole order is asked for, field by field
        "ink",
        "zero",  # refused, and asked again
        "3",
        'call typed__plot points.0.x=1 \'points.1={"x": 2, "y": 5}\'',
        "call typed__place_order order.itme=pen",
    ]
    out = _shell(tmp_path, revision, lines)
    assert (
        "typed__place_order(order: Order{item: str, qty: int ≥1}, note?: str)\nOrder something.\narguments:\n"
        in out
    )
    assert "    qty: int ≥1 (required) - how many\n" in out
    answers = [
        json.loads(line[line.index("{") :])
        for line in out.splitlines()
        if '"order"' in line or '"points"' in line
    ]
    assert answers == [
        {"order": {"item": "pen", "qty": 2}, "note": None},
        {"order": {"item": "ink", "qty": 3}, "note": None},
        {"points": [{"x": 1, "y": 0}, {"x": 2, "y": 5}], "label": ""},
    ]
    assert "  order.item (str): " in out and "  order.qty (how many): " in out
    assert "argument order.qty='zero': order.qty must be an integer (as JSON)" in out
    assert "no field 'itme' on tool typed__place_order (order); did you mean item?" in out


@pytest.mark.parametrize("revision", ERAS)
def test_prompt_fills_in_a_prompt(tmp_path: Path, revision: str) -> None:
    out = _shell(tmp_path, revision, ["prompts", "prompt notes__summarize style=short", "nb1", "prompt"])
    assert "  notes__summarize(notebook_id, style?)  Ask the model to summarize a notebook." in out
    assert "  notebook_id (str): [user]\nSummarize these notes (short):" in out
    assert "prompt what? prompt NAME [key=value ...] (prompts lists them)" in out


@pytest.mark.parametrize("revision", ERAS)
def test_progress_is_shown_while_a_call_runs(tmp_path: Path, revision: str) -> None:
    out = _shell(tmp_path, revision, ["call every__test_tool_with_progress"])
    assert "  [50/100] Completed step 50 of 100\n" in out
    assert "  [100/100] Completed step 100 of 100\n" in out


def test_progress_on_a_terminal_is_one_line_redrawn(tmp_path: Path) -> None:
    env = {k: v for k, v in _env(tmp_path).items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    child = pexpect.spawn(sys.executable, ["-m", "mcpkit", "host", str(_config(tmp_path, "2026-07-28"))],
                          cwd=str(ROOT), env={**env, "TERM": "xterm"}, encoding="utf-8", timeout=TIMEOUT,
                          dimensions=(40, 120))  # fmt: skip
    child.expect_exact("mcp> ")
    child.sendline("call every__test_tool_with_progress")
    child.expect_exact("mcp> ")
    shown = str(child.before)
    child.sendline("quit")
    child.expect(pexpect.EOF)
    # Each report overwrites the last (carriage return, erase line); the result follows on a clean line.
    assert "\r\x1b[K  [50/100] Completed step 50 of 100" in shown
    assert "\n  [50/100]" not in shown
    assert re.search(r"\r\x1b\[K\d+\r?\n", shown), repr(shown)
