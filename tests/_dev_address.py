"""The address ``mcpkit dev`` prints when its page is up, read from its stdout as it comes."""

from __future__ import annotations

import re
import selectors
import subprocess
import time

import pytest


def dev_address(process: subprocess.Popen[str], seconds: float) -> str:
    """The ``http://127.0.0.1:PORT/?token=...`` line *process* prints within *seconds*; else the
    process is killed and the test fails, saying what it printed."""
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    seen = ""
    while time.monotonic() < deadline and selector.select(timeout=deadline - time.monotonic()):
        line = process.stdout.readline()
        if not line:
            break
        seen += line
        match = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        if match:
            return match.group(1)
    process.kill()
    process.wait()
    pytest.fail(f"mcpkit dev printed no address within {seconds} s; it printed: {seen!r}")
