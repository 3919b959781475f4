"""The one-line reasons the inspector gives when connecting fails, for real failures (a port nobody
listens on, a program that does not exist, a server that exits, a host that does not resolve), and
the settings it refuses with the line that is wrong."""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

import pytest

from mcpkit.inspector.options import Options
from mcpkit.inspector.session import ConnectFailed, InspectorSession

from ..conftest import free_port


def _fail(target: dict[str, str], **settings: Any) -> tuple[str, list[dict[str, Any]]]:
    async def attempt() -> tuple[str, list[dict[str, Any]]]:
        session = InspectorSession(None)
        try:
            with pytest.raises(ConnectFailed) as failure:
                await session.handle("connect", {"target": target, **settings})
        finally:
            await session.close()
        events = []
        while not session.events.empty():
            events.append(session.events.get_nowait())
        return str(failure.value), events

    return asyncio.run(asyncio.wait_for(attempt(), 60))


def test_a_port_nobody_listens_on() -> None:
    port = free_port()
    line, events = _fail({"kind": "url", "value": f"http://127.0.0.1:{port}/mcp"})
    assert line == f"nothing is listening at 127.0.0.1:{port}: is the server running, on that port?"
    [failed] = [e for e in events if e["type"] == "status" and e["state"] == "failed"]
    assert failed["error"] == line
    assert "Errno 111" in failed["detail"]  # the client's own words are kept for the Events panel


def test_a_program_that_does_not_exist() -> None:
    line, _ = _fail({"kind": "command", "value": "no-such-program-here --flag"})
    assert line == "could not start 'no-such-program-here': no such program (is it installed and on PATH?)"


def test_a_server_that_exits_at_once() -> None:
    command = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    line, _ = _fail({"kind": "command", "value": command})
    assert line == "the server stopped before answering (exit code 3): its stderr is in Events"


def test_a_host_that_does_not_resolve() -> None:
    line, _ = _fail({"kind": "url", "value": "http://no-such-host.invalid/mcp"})
    assert line == "no such host 'no-such-host.invalid': check the URL's host name"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"headers": "X-Good: 1\nno colon here"},
            "headers, line 2: expected NAME:value, got 'no colon here'",
        ),
        ({"headers": "Bad Name: 1"}, "headers, line 1: expected NAME:value"),
        ({"env": "1ST=x"}, "environment variables, line 1: expected NAME=value"),
        ({"args": "--name 'unclosed"}, "arguments: No closing quotation"),
    ],
)
def test_bad_settings_name_the_line(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Options.parse(settings)
