"""The Host over real servers: aggregation, routing, policy, rate limits, audit, crashes and changes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import MCPError
from mcpkit._errors import ResourceNotFound
from mcpkit.host import ConsentRequest, Host, Unavailable
from mcpkit.types import TextContent

from ..conftest import EXAMPLES, free_port, http_server
from ._util import SERVERS, audit_lines, config, example, run, toolbox

pytestmark = pytest.mark.e2e


def _text(result: object) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))  # type: ignore[attr-defined]


def test_aggregates_and_routes_over_stdio_in_both_eras(tmp_path: Path) -> None:
    servers = {
        "weather": example("weather.py"),
        "notes": example("notes.py", protocolVersion="2025-06-18"),
        "Broken One": {"command": str(tmp_path / "missing")},
    }

    async def main() -> None:
        async with Host(config(servers, tmp_path), restart=False) as host:
            status = host.status()
            assert (status["weather"].state, status["weather"].protocol_version) == ("ready", "2026-07-28")
            assert (status["notes"].state, status["notes"].protocol_version) == ("ready", "2025-06-18")
            assert status["Broken-One"].state == "failed"
            assert "missing" in (status["Broken-One"].error or "")
            names = [tool.name for tool in host.tools()]
            assert names[:3] == ["weather__get_weather", "weather__get_weather_data", "weather__forecast"]
            assert "notes__create_notebook" in names
            assert host.route("notes__add_note").server == "notes"
            paris = await host.call_tool("weather__get_weather", {"location": "Paris"})
            assert "Paris" in _text(paris)
            created = await host.call_tool("notes__create_notebook", {"title": "t"})
            notebook = created.structured_content["notebook_id"]  # type: ignore[index]
            await host.call_tool("notes__add_note", {"notebook_id": notebook, "text": "eggs"})
            # a URI no server lists is routed by the template that matches it
            read = await host.read_resource(f"notes://{notebook}")
            assert "eggs" in (read.contents[0].text or "")
            assert [p.name for p in host.prompts()] == ["notes__summarize"]
            prompt = await host.get_prompt("notes__summarize", {"notebook_id": notebook})
            assert prompt.messages
            with pytest.raises(Exception, match="Unknown tool: nope"):
                await host.call_tool("nope", {})
            # Reads, prompts and completion go through the host's server: its names, its errors.
            with pytest.raises(ResourceNotFound, match="nowhere://x"):
                await host.read_resource("nowhere://x")
            with pytest.raises(MCPError, match="summarize"):
                await host.get_prompt("summarize", {"notebook_id": notebook})

    run(main())


@pytest.fixture
def weather_http() -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "mcpkit",
        "run",
        str(EXAMPLES / "weather.py"),
        "--transport",
        "http",
        "--port",
        str(port),
    ]
    yield from http_server(command, port, 20)


def test_streamable_http_and_http_sse_servers_beside_a_stdio_one(tmp_path: Path, weather_http: str) -> None:
    servers = {
        "remote": {"type": "http", "url": weather_http},
        "legacy": {"type": "sse", "url": weather_http.removesuffix("/mcp") + "/sse"},
        "local": example("weather.py", protocolVersion="2025-03-26"),
    }

    async def main() -> None:
        async with Host(config(servers, tmp_path)) as host:
            await host.wait_ready()
            assert host.status()["remote"].transport == "http"
            assert (host.status()["legacy"].transport, host.status()["legacy"].protocol_version) == (
                "sse",
                "2024-11-05",
            )
            for key in ("remote", "legacy", "local"):
                result = await host.call_tool(f"{key}__get_weather", {"location": "Lima"})
                assert "Lima" in _text(result)

    run(main())


def test_policy_deny_ask_allow_rate_limit_and_audit(tmp_path: Path) -> None:
    rules = {
        "default": "allow",
        "rules": [
            {"tool": "look", "action": "allow"},
            {
                "annotations": {"destructiveHint": True, "readOnlyHint": False},
                "server": "deny*",
                "action": "deny",
            },
            {"tool": "delete_*", "action": "ask"},
        ],
    }
    servers = {"deny-box": toolbox(), "ask-box": toolbox(tools={"deny": ["add_tool", "ask_user"]})}
    cfg = config(
        servers, tmp_path, policy=rules, rateLimits=[{"server": "ask-box", "tool": "echo", "rate": "2/h"}]
    )
    answers: list[bool | None] = [True, False, None]
    asked: list[ConsentRequest] = []

    async def consent(request: ConsentRequest) -> bool | None:
        asked.append(request)
        return answers.pop(0)

    async def main() -> None:
        async with Host(cfg, ask=consent, caller="tester") as host:
            names = [t.name for t in host.tools()]
            assert "ask-box__add_tool" not in names and "deny-box__add_tool" in names  # the filter
            denied = await host.call_tool("deny-box__delete_everything")
            assert denied.is_error and "denied by the host's policy (rule 2)" in _text(denied)
            assert not asked
            assert _text(await host.call_tool("ask-box__delete_everything")) == "deleted"  # yes
            refused = await host.call_tool("ask-box__delete_everything")  # no
            assert refused.is_error and "did not allow" in _text(refused)
            unavailable = await host.call_tool("ask-box__delete_everything")  # nobody to ask
            assert unavailable.is_error and "cannot be asked" in _text(unavailable)
            assert [r.tool for r in asked] == ["delete_everything"] * 3
            assert asked[0].rule == "rule 3"
            assert _text(await host.call_tool("ask-box__look")) == "looked"
            for _ in range(2):
                ok = await host.call_tool("ask-box__echo", {"text": "hi", "password": "hunter2"})
                assert _text(ok) == "hi"
            limited = await host.call_tool("ask-box__echo", {"text": "hi"})
            assert limited.is_error and "Rate limit 2/h" in _text(limited)
            # the limit is per tool: another tool of the server is not limited by it
            assert _text(await host.call_tool("ask-box__look")) == "looked"
            # an unannotated tool is destructive by the spec's defaults: rule 2 denies it
            unannotated = await host.call_tool("deny-box__echo", {"text": "other"})
            assert "denied by the host's policy (rule 2)" in _text(unannotated)

    run(main())
    lines = audit_lines(tmp_path)
    assert [(line["decision"], line["outcome"]) for line in lines] == [
        ("deny", "refused"),
        ("ask:yes", "ok"),
        ("ask:no", "refused"),
        ("ask:unavailable", "refused"),
        ("allow", "ok"),
        ("allow", "ok"),
        ("allow", "ok"),
        ("rate-limited", "refused"),
        ("allow", "ok"),
        ("deny", "refused"),
    ]
    first = lines[0]
    assert set(first) >= {
        "time",
        "caller",
        "server",
        "tool",
        "name",
        "arguments",
        "decision",
        "outcome",
        "duration_ms",
    }
    assert (first["caller"], first["server"], first["tool"]) == ("tester", "deny-box", "delete_everything")
    assert lines[5]["arguments"] == {"text": "hi", "password": "[redacted]"}
    assert lines[0]["time"].endswith("+00:00")


def test_a_backend_killed_mid_call_fails_that_call_only_and_comes_back(tmp_path: Path) -> None:
    servers = {"box": toolbox(), "weather": example("weather.py")}

    async def main() -> None:
        async with Host(config(servers, tmp_path)) as host:
            pid_result = await host.call_tool("box__pid")
            pid = int(_text(pid_result))
            started = asyncio.Event()

            async def progress(done: float, total: float | None, message: str | None) -> None:
                started.set()

            slow = asyncio.ensure_future(host.call_tool("box__wait", {"seconds": 60}, on_progress=progress))
            await asyncio.wait_for(started.wait(), 20)
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(Unavailable, match="server 'box' failed during the call"):
                await slow
            # the other server never noticed
            assert "Oslo" in _text(await host.call_tool("weather__get_weather", {"location": "Oslo"}))
            state = host.status()["box"].state
            assert state in ("restarting", "ready")
            if state == "restarting":
                with pytest.raises(Unavailable, match="server 'box' is restarting"):
                    await host.call_tool("box__pid")
            deadline = time.monotonic() + 30
            while host.status()["box"].state != "ready" or not host.tools():
                assert time.monotonic() < deadline, host.status()["box"]
                await asyncio.sleep(0.05)
            assert host.status()["box"].restarts >= 1
            new_pid = int(_text(await host.call_tool("box__pid")))
            assert new_pid != pid

    run(main(), 90)
    outcomes = [(line["tool"], line["outcome"]) for line in audit_lines(tmp_path)]
    assert ("wait", "error") in outcomes


@pytest.mark.parametrize("version", ["2026-07-28", "2025-06-18"])
def test_list_changed_is_followed_and_announced(tmp_path: Path, version: str) -> None:
    servers = {"box": toolbox(protocolVersion=version)}

    async def main() -> None:
        changed: list[str] = []
        seen = asyncio.Event()

        def on_change(kind: str) -> None:
            changed.append(kind)
            seen.set()

        async with Host(config(servers, tmp_path), on_change=on_change) as host:
            assert "box__fresh" not in [t.name for t in host.tools()]
            await host.call_tool("box__add_tool", {"name": "fresh"})
            await asyncio.wait_for(seen.wait(), 20)
            assert "tools" in changed
            assert _text(await host.call_tool("box__fresh")) == "fresh"

    run(main())


def test_slow_server_does_not_hold_up_the_others(tmp_path: Path) -> None:
    never = tmp_path / "never.py"
    never.write_text("import time\ntime.sleep(600)\n")  # starts, never answers
    servers = {
        "never": {"command": sys.executable, "args": [str(never)], "timeout": 1},
        "weather": example("weather.py"),
    }

    async def main() -> None:
        host = Host(config(servers, tmp_path), connect_timeout=20, restart=False)
        began = time.monotonic()
        async with host:
            assert host.status()["weather"].state == "ready"
            assert "Rome" in _text(await host.call_tool("weather__get_weather", {"location": "Rome"}))
            assert host.status()["never"].state in ("starting", "failed")
        # Far less than a start that waited for "never" past connect_timeout (20 s) and its
        # restarts; loose, so a busy machine's slow start-up of weather is not taken for it.
        assert time.monotonic() - began < 50

    run(main())


def test_per_server_timeout_and_concurrency_limit(tmp_path: Path) -> None:
    servers = {"slow": toolbox(timeout=1.5), "box": toolbox(timeout=10, maxConcurrency=1), "free": toolbox()}

    async def main() -> None:
        async with Host(config(servers, tmp_path)) as host:
            # past the server's timeout: the request is cancelled and the call fails, saying so
            with pytest.raises(MCPError, match=r"no answer to request \d+ within 1.5 s"):
                await host.call_tool("slow__wait", {"seconds": 30})
            # one call at a time: a second waits for the slot (at most the timeout, 10 s: far more than
            # the first's 0.5 s call takes even on a busy machine)...
            first = asyncio.ensure_future(host.call_tool("box__wait", {"seconds": 0.5}))
            await asyncio.sleep(0)  # the first takes the slot: it does not wait for anything before
            second = await host.call_tool("box__wait", {"seconds": 0})
            assert first.done() and _text(first.result()) == "waited 0.5"  # the second came after it
            assert _text(second) == "waited 0.0"
            # ...and is refused once it has waited that long
            blocker = asyncio.ensure_future(host.call_tool("box__wait", {"seconds": 30}, timeout=60))
            await asyncio.sleep(0)
            with pytest.raises(Unavailable, match="server 'box' is busy: 1 calls in flight for 10"):
                await host.call_tool("box__echo", {"text": "x"})
            blocker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await blocker
            # the other servers' calls were never limited: three 5 s calls take about 5 s, not 15
            # (7 s to spare for a busy machine)
            began = time.monotonic()
            await asyncio.gather(*(host.call_tool("free__wait", {"seconds": 5}) for _ in range(3)))
            assert time.monotonic() - began < 12

    run(main())


def test_a_streamable_http_server_that_goes_away_is_reconnected(tmp_path: Path) -> None:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "mcpkit",
        "run",
        str(EXAMPLES / "weather.py"),
        "--transport",
        "http",
        "--port",
        str(port),
    ]
    url = f"http://127.0.0.1:{port}/mcp"

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return proc
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)

    first = start()
    second: subprocess.Popen[bytes] | None = None
    try:

        async def main() -> None:
            nonlocal second
            async with Host(config({"remote": {"url": url}}, tmp_path)) as host:
                assert "Rome" in _text(await host.call_tool("remote__get_weather", {"location": "Rome"}))
                first.kill()
                first.wait()
                with pytest.raises(
                    Unavailable, match="server 'remote' failed during the call: HTTP request failed"
                ):
                    await host.call_tool("remote__get_weather", {"location": "Rome"})
                assert host.status()["remote"].state == "restarting"
                second = await asyncio.to_thread(start)
                await host.wait_ready("remote", timeout=40)
                assert "Oslo" in _text(await host.call_tool("remote__get_weather", {"location": "Oslo"}))
                assert host.status()["remote"].restarts >= 1

        run(main(), 90)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def test_a_server_that_never_announces_changes_is_listed_again_on_a_timer(tmp_path: Path) -> None:
    """refreshInterval: the tools of a server without ``listChanged`` are re-listed on a timer (and
    ``on_change`` told); ``false`` turns it off."""
    recorder = [sys.executable, str(SERVERS / "recorder.py")]
    servers = {
        "polled": {"command": recorder[0], "args": recorder[1:], "refreshInterval": 0.2},
        "still": {"command": recorder[0], "args": recorder[1:], "refreshInterval": False},
    }
    changes: list[str] = []

    async def main() -> None:
        async with Host(config(servers, tmp_path), on_change=changes.append) as host:
            await host.wait_ready()
            changes.clear()  # (the servers' connecting)
            assert _text(await host.call_tool("polled__grow")) == "extra1"
            assert _text(await host.call_tool("still__grow")) == "extra1"
            deadline = time.monotonic() + 20
            while "polled__extra1" not in [t.name for t in host.tools()]:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            assert changes == ["tools"]
            await asyncio.sleep(0.5)  # two more intervals: nothing new, nothing told
            assert changes == ["tools"]
            assert "still__extra1" not in [t.name for t in host.tools()]

    run(main())


def test_the_lists_change_together_and_are_told_at_once(tmp_path: Path) -> None:
    """A re-listing replaces every list once all are read, and tells of it in the same step: a
    reader never sees the new tools before the change is told, nor beside the old prompts."""
    changes: list[str] = []
    prompts_asked = asyncio.Event()
    prompts_read = asyncio.Event()

    class View:  # the host's own client of its server, as far as a re-listing reads it
        async def list_tools(self) -> list[str]:
            return ["new tool"]

        async def list_prompts(self) -> list[str]:
            prompts_asked.set()
            await prompts_read.wait()
            return ["new prompt"]

        async def list_resources(self) -> list[str]:
            return []

        async def list_resource_templates(self) -> list[str]:
            return []

    async def main() -> None:
        host = Host(config({}, tmp_path), on_change=changes.append)

        def seen() -> tuple[Any, ...]:
            return host.tools(), host.prompts(), list(changes)

        try:
            host._listed = {"tools": ["old tool"], "prompts": ["old prompt"]}
            host._view = View()  # type: ignore[assignment]
            relisting = asyncio.ensure_future(host._relist(["tools"]))
            await prompts_asked.wait()  # the tools are read, the prompts not yet
            assert seen() == (["old tool"], ["old prompt"], [])
            prompts_read.set()
            await relisting
            assert seen() == (["new tool"], ["new prompt"], ["tools"])
        finally:
            host.audit.close()

    run(main())
