"""``mcpkit`` under a pseudo-terminal (pexpect): the elicitation form, the progress bar, tables, and
long lines left for the terminal to wrap."""

from __future__ import annotations

import os
import re
import sys
import time

import pexpect
import pytest

from ..conftest import ROOT
from .conftest import TIMEOUT, TRAVEL, WEATHER, run_mcpkit

ECHO_IDEA = "cat > /dev/null; echo Visit the Louvre"


def _spawn(*args: str, columns: int = 100) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm"
    return pexpect.spawn(
        sys.executable,
        ["-m", "mcpkit", *args],
        cwd=str(ROOT),
        env=env,
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, columns),
    )


def _finish(child: pexpect.spawn) -> tuple[int, str]:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None
    return child.exitstatus, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", str(child.before))  # colours off


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-06-18"])
def test_elicitation_is_asked_field_by_field(revision: str) -> None:
    child = _spawn("call", TRAVEL, "plan_trip", "destination=Paris", "--protocol-version", revision,
                   "--sampling-command", ECHO_IDEA)  # fmt: skip
    child.expect_exact("The server asks: Plan a trip to Paris?")
    child.expect_exact("Answer? [Y/n] ")
    child.sendline("")
    child.expect_exact("travellers - How many people (integer, min 1) [1]: ")
    child.sendline("two")
    child.expect_exact("type a whole number")
    child.sendline("0")
    child.expect_exact("at least 1")
    child.sendline("2")
    child.expect_exact("budget (one of: 1) low, 2) medium, 3) high) [medium]: ")
    child.sendline("3")
    child.expect_exact("confirm - Book it? (yes/no) (required): ")
    child.sendline("")
    child.expect_exact("an answer is required")
    child.sendline("yes")
    code, rest = _finish(child)
    assert code == 0
    assert "Trip to Paris for 2 (high budget). Idea: Visit the Louvre" in rest


def test_defaults_decline_and_cancel() -> None:
    child = _spawn("call", TRAVEL, "plan_trip", "destination=Oslo", "--sampling-command", ECHO_IDEA)
    child.expect_exact("Answer? [Y/n] ")
    child.sendline("y")
    for _ in range(2):  # travellers and budget keep their defaults
        child.expect(r"\]: ")
        child.sendline("")
    child.expect_exact("(required): ")
    child.sendline("y")
    code, rest = _finish(child)
    assert code == 0 and "Trip to Oslo for 1 (medium budget)" in rest

    declined = _spawn("call", TRAVEL, "plan_trip", "destination=Oslo")
    declined.expect_exact("Answer? [Y/n] ")
    declined.sendline("n")
    code, rest = _finish(declined)
    assert code == 1 and "was not confirmed (decline)" in rest

    cancelled = _spawn("call", TRAVEL, "plan_trip", "destination=Oslo")
    cancelled.expect_exact("Answer? [Y/n] ")
    cancelled.sendline("")
    cancelled.expect_exact("[1]: ")
    cancelled.sendeof()
    code, rest = _finish(cancelled)
    assert code == 1 and "was not confirmed (cancel)" in rest


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_a_url_request_shows_the_url_and_asks_when_done(toolbox: str, revision: str) -> None:
    child = _spawn("call", toolbox, "sign_in", "--protocol-version", revision)
    child.expect_exact("The server asks: Sign in to continue")
    child.expect_exact("open https://example.com/sign-in?session=42")
    child.expect_exact("Done? [Y/n] ")
    child.sendline("")
    code, rest = _finish(child)
    assert code == 0 and "sign-in: accept" in rest
    off_a_terminal = run_mcpkit("call", toolbox, "sign_in", "--protocol-version", revision)
    assert off_a_terminal.stdout == "sign-in: cancel\n"  # nobody to ask: no explicit choice


def test_the_timeout_stands_still_while_the_user_types() -> None:
    """In the handshake era the call stays pending while the form is open: a person who thinks for
    longer than --timeout must not see it time out."""
    # 15 s: enough for the server to start on a busy machine, well under the pause below.
    child = _spawn("call", TRAVEL, "plan_trip", "destination=Rome", "--timeout", "15",
                   "--protocol-version", "2025-11-25", "--sampling-command", ECHO_IDEA)  # fmt: skip
    child.expect_exact("Answer? [Y/n] ")
    time.sleep(20)  # thinking for longer than the timeout, on purpose
    child.sendline("")
    for _ in range(2):
        child.expect(r"\]: ")
        child.sendline("")
    child.expect_exact("(required): ")
    child.sendline("yes")
    code, rest = _finish(child)
    assert code == 0, rest
    assert "Trip to Rome for 1 (medium budget)" in rest


def test_progress_is_a_bar_on_a_terminal(everything_url: str) -> None:
    child = _spawn("call", everything_url, "test_tool_with_progress")
    code, rest = _finish(child)
    assert code == 0
    assert "━" in rest  # rich's bar, drawn on stderr (the same terminal)
    assert "Completed step" in rest
    assert "progress 50/100" not in rest  # the plain lines are for pipes


def test_tables_on_a_terminal_and_whole_lines_everywhere(toolbox: str) -> None:
    child = _spawn("tools", WEATHER)
    code, screen = _finish(child)
    assert code == 0
    assert re.search(r"weather · protocol 2026-07-28", screen)
    assert "┃ tool" in screen and "│ get_weather_data" in screen
    # A long line (a URL) is never broken by mcpkit, on a narrow terminal or on a pipe.
    narrow = _spawn("call", toolbox, "long_line", columns=50)
    code, shown = _finish(narrow)
    url = "https://example.com/" + "/".join(f"segment{n}" for n in range(40))
    assert code == 0 and url in shown
    piped = run_mcpkit("call", toolbox, "long_line")
    assert piped.stdout == url + "\n"
