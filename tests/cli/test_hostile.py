"""A server cannot write to the user's terminal: every string it sends is shown with its control
characters as visible escapes on a terminal (a real pseudo-terminal, pexpect), and passes byte for
byte to pipes and ``--json``.

The server (fixtures/hostile.py, a real stdio subprocess) puts OSC 52, OSC 8, OSC 0, ``ESC[2J``,
``ESC[8m``, a bare CR, C1 CSI, DEL, a bidi override and rich markup in its name, instructions, tool
names and descriptions, argument descriptions, result, log line, progress message, error and
question; each test looks for the escaped form next to a marker word and for no raw sequence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from ..conftest import ROOT
from .conftest import TIMEOUT
from .fixtures import hostile
from .fixtures.hostile import DESCRIPTION, LOG, RESULT

pytestmark = pytest.mark.e2e

SERVER = str(Path(hostile.__file__))

#: Raw sequences that no terminal output may hold (rich's own colour codes, ``ESC[...m``, are not
#: among them: what the server sent is recognised by what follows its ESC).
RAW = ["\x1b]", "\x1b[2J", "\x1b[8m", "\x9b", "\x7f", "\u202e", "\u202c", "\x07", "\rOVER", "\x1b\\"]


def escaped(marker: str) -> str:
    """How the start of ``hostile(marker)`` reads on the terminal."""
    return f"{marker}\\x1b]52;c;cHduZWQ=\\x07 \\x1b]8;;http://evil.example/\\x1b\\safe link"


def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    """``mcpkit ARGS`` on a wide pseudo-terminal (so no table cell is wrapped)."""
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    return pexpect.spawn(
        sys.executable,
        ["-m", "mcpkit", *args],
        cwd=str(ROOT),
        env={**base, "TERM": "xterm", **(env or {})},
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(50, 600),
    )


def transcript(child: pexpect.spawn) -> tuple[int, str]:
    """The exit status and everything the command wrote to the terminal since the last match."""
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None
    return child.exitstatus, str(child.before)


def assert_no_raw(text: str) -> None:
    found = [sequence for sequence in RAW if sequence in text]
    assert not found, f"raw sequences reached the terminal: {found!r} in {text!r}"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["tools", SERVER], ["hostile\\x1b]0;SERVERNAME\\x07 · protocol", escaped("DESCRIPTION"),
                            "HOSTILE\\x1b]0;NAMETITLE\\x07\\x1b[8m"]),
        (["tools", SERVER, "shout"], [escaped("DESCRIPTION"), "x: str - " + escaped("ARGUMENT")]),
        (["info", SERVER], ["server: hostile\\x1b]0;SERVERNAME\\x07 1.0\\x1b[2J",
                            "instructions: " + escaped("INSTRUCTIONS")]),
        (["prompts", SERVER], [escaped("DESCRIPTION")]),
        (["prompts", SERVER, "brief"], ["topic (required) - " + escaped("ARGUMENT")]),
        (["resources", SERVER], ["HOSTILE\\x1b]0;NAMETITLE\\x07\\x1b[8m", escaped("DESCRIPTION")]),
        (["call", SERVER, "shout", "--log-level", "debug"], ["server warning: " + escaped("LOG"),
                                                             escaped("RESULT")]),
        (["call", SERVER, "fail"], ["mcpkit: the server answered with an error: " + escaped("ERROR")]),
    ],
    ids=["tools", "tool", "info", "prompts", "prompt", "resources", "call-result-and-log", "error"],
)  # fmt: skip
def test_a_servers_strings_are_escaped_on_a_terminal(args: list[str], expected: list[str]) -> None:
    code, text = transcript(spawn(*args))
    assert code == (1 if "fail" in args else 0), text
    assert_no_raw(text)
    for piece in expected:
        assert piece in text
    if args[0] in ("tools", "prompts", "call") and "fail" not in args:
        # rich markup in the server's text is text: neither bold nor a link
        assert "[bold]MARKUP[/bold] [link=http://evil.example/]LINK[/link]\\rOVERWRITE" in text


def test_the_question_and_the_progress_before_it_are_escaped() -> None:
    child = spawn("call", SERVER, "ask")
    child.expect_exact("The server asks: " + escaped("QUESTION"))
    seen = str(child.before) + str(child.after)
    child.expect_exact("Answer? [Y/n] ")
    child.sendline("")
    child.expect_exact("  " + escaped("FIELD"))
    seen += str(child.before) + str(child.after)
    child.expect_exact(": ")
    seen += str(child.before) + str(child.after)
    child.sendline("")
    code, rest = transcript(child)
    seen += rest
    assert code == 0, seen
    assert "ANSWERED accept" in rest
    # The progress bar, drawn before the question paused it, shows the escaped message.
    assert "PROGRESS\\x1b]0;T\\x07\\x9b2J\\rOVER" in seen
    assert_no_raw(seen)


def test_json_on_a_terminal_parses_to_what_the_server_sent() -> None:
    code, text = transcript(spawn("tools", SERVER, "--json"))
    assert code == 0
    assert_no_raw(text)
    listed = json.loads(text.replace("\r\n", "\n"))
    assert listed[0]["description"] == DESCRIPTION  # the escapes are JSON's: the same value


def _piped(*args: str) -> tuple[int, bytes, bytes]:
    """``mcpkit ARGS`` on pipes, as bytes (text mode would turn the server's bare CR into a newline)."""
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "mcpkit", *args], cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT, check=False)  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_pipes_and_json_stay_byte_exact() -> None:
    code, out, err = _piped("tools", SERVER, "--json")
    assert code == 0, err
    tools = json.loads(out)
    assert tools[0]["description"] == DESCRIPTION
    assert out == (json.dumps(tools, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
    code, out, err = _piped("tools", SERVER)
    assert out.split(b"\n")[0] == f"shout(x?: str)  {DESCRIPTION}".encode()
    code, out, err = _piped("call", SERVER, "shout", "--log-level", "debug")
    assert code == 0, err
    assert out == (RESULT + "\n").encode()
    assert f"server warning: {LOG}\n".encode() in err
    code, out, err = _piped("call", SERVER, "fail")
    assert code == 1
    assert err.startswith(f"mcpkit: the server answered with an error: {hostile.ERROR}".encode())


def _host_config(tmp_path: Path, **mcpkit: object) -> Path:
    server = {"command": sys.executable, "args": ["-m", "mcpkit", "run", SERVER]}
    extra = {"audit": {"path": str(tmp_path / "audit.jsonl")}, "policy": {"default": "allow"}, **mcpkit}
    path = tmp_path / "host.json"
    path.write_text(json.dumps({"mcpServers": {"evil": server}, "mcpkit": extra}))
    return path


def _home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state")}  # fmt: skip


def test_the_host_list_call_and_shell_are_escaped(tmp_path: Path) -> None:
    config = str(_host_config(tmp_path))
    code, text = transcript(spawn("host", config, "--list", env=_home(tmp_path)))
    assert code == 0, text
    assert "  evil__shout  [allow]  " + escaped("DESCRIPTION") in text
    assert_no_raw(text)

    code, text = transcript(spawn("host", config, "--call", "evil__shout", env=_home(tmp_path)))
    assert code == 0, text
    assert escaped("RESULT") in text
    assert_no_raw(text)

    child = spawn("host", config, env=_home(tmp_path))
    child.expect_exact("mcp> ")
    child.sendline("list")
    child.expect_exact("mcp> ")
    listed = str(child.before)
    child.sendline("call evil__shout")
    child.expect_exact("mcp> ")
    called = str(child.before)
    child.sendline("quit")
    code, _ = transcript(child)
    assert code == 0
    assert "  evil__shout  " + escaped("DESCRIPTION") in listed
    assert escaped("RESULT") in called
    assert_no_raw(listed + called)
