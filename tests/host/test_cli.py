"""``mcpkit host`` and ``mcpkit gateway`` as commands: listing, calling, consent, the shell, --from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, TextContent

from ..conftest import ROOT
from ._util import example, mcpkit_cli, run, toolbox

pytestmark = pytest.mark.e2e

#: How a refusal reads when nobody could be asked (no terminal): not the user's "did not allow".
NOBODY_ASKED = "needs the user's consent, and nobody could be asked"


def _write(path: Path, servers: dict[str, Any], **mcpkit: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = {"audit": {"path": str(path.parent / "audit.jsonl")}, **mcpkit}
    path.write_text(json.dumps({"mcpServers": servers, "mcpkit": extra}))
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    """HOME and XDG_CONFIG_HOME in *tmp_path*, so --from reads the test's files, never the user's."""
    return {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / ".config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


def test_list_and_call(tmp_path: Path) -> None:
    policy = {"default": "allow", "rules": [{"tool": "delete_*", "action": "ask"}]}
    cfg = _write(tmp_path / "host.json", {"weather": example("weather.py"), "box": toolbox()}, policy=policy)
    listed = mcpkit_cli("host", str(cfg), "--list", env=_env(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert "weather: ready 2026-07-28" in listed.stdout
    assert "  weather__get_weather  [allow]  Get current weather information for a location." in listed.stdout
    assert "  box__delete_everything  [ask]  " in listed.stdout
    called = mcpkit_cli(
        "host", str(cfg), "--call", "weather__forecast", "location=Paris", "days=2", env=_env(tmp_path)
    )
    assert called.returncode == 0, called.stderr
    assert called.stdout.startswith('["day 1: ') and "day 2: " in called.stdout
    # 'ask' with no terminal to ask at: refused as nobody asked (not as the user's no), exit 1;
    # --yes answers it
    refused = mcpkit_cli("host", str(cfg), "--call", "box__delete_everything", env=_env(tmp_path))
    assert (
        refused.returncode == 1 and NOBODY_ASKED in refused.stdout and "did not allow" not in refused.stdout
    )
    assert "box__delete_everything needs your consent, and stdin is not a terminal" in refused.stderr
    allowed = mcpkit_cli("host", str(cfg), "--call", "box__delete_everything", "--yes", env=_env(tmp_path))
    assert allowed.returncode == 0 and allowed.stdout.strip() == "deleted"
    decisions = [json.loads(line)["decision"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert decisions == ["allow", "ask:unavailable", "ask:yes"]


def test_config_mistakes_and_unknown_tools(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"mcpServers": {"w": {"command": "x", "env": {"KEY": "${SURELY_UNSET_VARIABLE}"}}}})
    )
    result = mcpkit_cli("host", str(bad), "--list", env=_env(tmp_path))
    assert result.returncode == 2
    assert "mcpServers.w.env.KEY: environment variable SURELY_UNSET_VARIABLE is not set" in result.stderr
    cfg = _write(tmp_path / "ok.json", {"weather": example("weather.py")})
    unknown = mcpkit_cli("host", str(cfg), "--call", "weather__nope", env=_env(tmp_path))
    assert unknown.returncode == 2 and "no tool 'weather__nope'" in unknown.stderr
    neither = mcpkit_cli("host", "--list", env=_env(tmp_path))
    assert neither.returncode == 2 and "--from" in neither.stderr


def test_interactive_shell_prompts_for_missing_arguments(tmp_path: Path) -> None:
    servers = {"weather": example("weather.py"), "notes": example("notes.py")}
    cfg = _write(tmp_path / "host.json", servers, policy={"default": "allow"})
    lines = "help\nlist\ndescribe weather__get_weather\ncall weather__get_weather\nTallinn\nstatus\n"
    lines += "resources\nprompts\nread notes://about\nread nowhere://x\nquit\n"
    proc = subprocess.run(
        [sys.executable, "-m", "mcpkit", "host", str(cfg)],
        input=lines,
        capture_output=True, text=True, timeout=180, env=_env(tmp_path), cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "8 tools from 2 servers" in out
    assert "call NAME [key=value ...]" in out  # help
    assert "weather__get_weather(location: str)" in out  # describe: the signature
    assert "location (City name or zip code): " in out  # the prompt for the required argument
    assert "Current weather in Tallinn" in out
    assert "weather: ready" in out
    assert "  notes://about  about" in out and "notes://{notebook_id}" in out
    assert "  notes__summarize" in out
    assert "error: Resource not found: nowhere://x" in out


@pytest.mark.parametrize(
    ("app", "relative", "write"),
    [
        ("claude-desktop", ".config/Claude/claude_desktop_config.json", "mcpServers"),
        ("cursor", ".cursor/mcp.json", "mcpServers"),
        ("windsurf", ".codeium/windsurf/mcp_config.json", "mcpServers"),
        ("vscode", ".config/Code/User/mcp.json", "servers"),
        ("zed", ".config/zed/settings.json", "context_servers"),
        ("goose", ".config/goose/config.yaml", "extensions"),
        ("claude-code", ".claude.json", "mcpServers"),
    ],
)
def test_from_reads_each_applications_own_file(tmp_path: Path, app: str, relative: str, write: str) -> None:
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = example("weather.py")
    if write == "extensions":
        path.write_text(
            f"extensions:\n  weather:\n    type: stdio\n    enabled: true\n    cmd: {entry['command']}\n"
            f"    args: {json.dumps(entry['args'])}\n"
        )
    else:
        path.write_text(json.dumps({write: {"weather": entry}}))
    result = mcpkit_cli("host", "--from", app, "--list", env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "weather__get_weather" in result.stdout


def test_from_without_the_file(tmp_path: Path) -> None:
    result = mcpkit_cli("host", "--from", "cursor", "--list", env=_env(tmp_path))
    assert result.returncode == 2 and "no Cursor config at" in result.stderr


def test_gateway_command_from_an_applications_file(tmp_path: Path) -> None:
    _write(tmp_path / ".cursor" / "mcp.json", {"weather": example("weather.py")}, policy={"default": "allow"})
    env = _env(tmp_path)

    async def main() -> None:
        command = [sys.executable, "-m", "mcpkit", "gateway", "--from", "cursor"]
        async with Client(command, env=env) as client:
            result = await client.call_tool("weather__get_weather", {"location": "Bern"})
            assert "Bern" in " ".join(b.text for b in result.content if isinstance(b, TextContent))

    run(main())


def test_demo_runs_the_host_and_the_gateway(tmp_path: Path) -> None:
    # The subprocess timeout catches a hang; how fast the demo runs is not what this tests.
    result = mcpkit_cli("demo", env={**_env(tmp_path), "COLUMNS": "120"}, timeout=180)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "host: 3 servers connected at once" in out
    assert "notes__delete_note" in out and "deny (rule 2)" in out
    assert "was denied by the host's policy (rule 2)" in out
    assert "questions travel as input_required rounds" in out and "questions travel as requests" in out
    assert out.count("Idea: walk the old town") == 2
    # one audit line per call: the stateless caller's rounds resumed one parked call
    assert len([line for line in out.splitlines() if "travel__plan_trip" in line and "ask:yes" in line]) == 2
    assert "done" in out


def test_from_claude_code_merges_its_three_scopes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    weather, box = example("weather.py"), toolbox()
    user = {
        "mcpServers": {"shared": box, "mine": weather},
        "projects": {str(project): {"mcpServers": {"local": weather}}},
    }
    (tmp_path / ".claude.json").write_text(json.dumps(user))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"shared": weather}}))  # the project's wins
    result = subprocess.run(
        [sys.executable, "-m", "mcpkit", "host", "--from", "claude-code", "--list", "--audit", str(tmp_path / "a.jsonl")],
        capture_output=True, text=True, timeout=180, env=_env(tmp_path), cwd=project, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    servers = [line.split(":")[0] for line in result.stdout.splitlines() if not line.startswith(" ")]
    assert servers == ["shared", "mine", "local"]
    assert "shared__get_weather" in result.stdout and "shared__pid" not in result.stdout


@pytest.mark.parametrize(("typed", "allowed"), [("y\n", True), ("n\n", False)])
def test_consent_is_asked_at_the_terminal(tmp_path: Path, typed: str, allowed: bool) -> None:
    import pty

    policy = {"rules": [{"tool": "delete_*", "action": "ask"}]}
    cfg = _write(tmp_path / "host.json", {"box": toolbox()}, policy=policy)
    master, slave = pty.openpty()
    try:
        os.write(master, typed.encode())  # waits in the terminal's buffer until the prompt reads it
        proc = subprocess.run(
            [sys.executable, "-m", "mcpkit", "host", str(cfg), "--call", "box__delete_everything"],
            stdin=slave, capture_output=True, text=True, timeout=180, env=_env(tmp_path), cwd=ROOT, check=False,
        )  # fmt: skip
    finally:
        os.close(slave)
        os.close(master)
    assert "allow box__delete_everything {}? [y/N] " in proc.stdout
    if allowed:
        assert proc.returncode == 0 and proc.stdout.rstrip().endswith("deleted")
    else:
        assert proc.returncode == 1 and "did not allow" in proc.stdout


def test_tools_and_call_on_a_config(tmp_path: Path) -> None:
    """``mcpkit tools|call --config CONFIG``: the host's tools (or one server's), and calls through
    the host: its names, its consent policy (``--yes``, else no without a terminal) and audit log."""
    policy = {"default": "allow", "rules": [{"tool": "delete_*", "action": "ask"}]}
    cfg = str(
        _write(tmp_path / "host.json", {"weather": example("weather.py"), "box": toolbox()}, policy=policy)
    )
    env = _env(tmp_path)
    listed = mcpkit_cli("tools", "--config", cfg, env=env)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "weather__forecast(location: str, days?: int)  allow  Forecast for the next days" in lines[2]
    assert any(line.startswith("box__delete_everything()  ask  ") for line in lines)
    one = mcpkit_cli("tools", "--config", cfg, "weather", "--json", env=env)
    assert one.returncode == 0, one.stderr
    assert [tool["name"] for tool in json.loads(one.stdout)] == [
        "get_weather",
        "get_weather_data",
        "forecast",
    ]
    detail = mcpkit_cli("tools", "--config", cfg, "weather", "forecast", env=env)
    assert detail.returncode == 0 and "Forecast for the next days" in detail.stdout

    by_server = mcpkit_cli("call", "--config", cfg, "weather", "forecast", "location=Oslo", "days=2", env=env)
    assert by_server.returncode == 0, by_server.stderr
    assert by_server.stdout.count("day ") == 2
    by_name = mcpkit_cli("call", "--config", cfg, "weather__forecast", "location=Oslo", "--json", env=env)
    assert by_name.returncode == 0, by_name.stderr
    assert json.loads(by_name.stdout)["structuredContent"]["result"][0].startswith("day 1: ")
    refused = mcpkit_cli("call", "--config", cfg, "box", "delete_everything", env=env)
    assert refused.returncode == 1 and NOBODY_ASKED in refused.stdout
    allowed = mcpkit_cli("call", "--config", cfg, "box__delete_everything", "--yes", env=env)
    assert allowed.returncode == 0 and allowed.stdout.strip() == "deleted"
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(a["name"], a["decision"]) for a in audit] == [
        ("weather__forecast", "allow"),
        ("weather__forecast", "allow"),
        ("box__delete_everything", "ask:unavailable"),
        ("box__delete_everything", "ask:yes"),
    ]
    assert audit[0]["caller"].startswith("mcpkit call (")

    mistakes = {
        ("tools", "--config", cfg, "wether"): "no server 'wether' on",
        ("call", "--config", cfg, "weather", "forcast"): "did you mean forecast?",
        ("call", "--config", cfg, "nope__x"): "no server or SERVER__TOOL 'nope__x'",
        ("call", "--config", cfg, "weather"): "name a tool of weather",
        ("tools",): "the following arguments are required: TARGET",
    }
    for words, message in mistakes.items():
        result = mcpkit_cli(*words, env=env)
        assert result.returncode == 2 and message in result.stderr, (words, result.stderr)


@pytest.mark.parametrize(("typed", "allowed"), [("", False), ("y", True), ("no", False)])
def test_gateway_consent_is_one_question_at_the_terminal(tmp_path: Path, typed: str, allowed: bool) -> None:
    """``mcpkit call`` through a gateway whose policy asks: the consent form (one yes/no field) is
    asked once, ``Allow this call (yes/no) [no]:``, with Enter its default, no; never first
    ``Answer? [Y/n]`` and then the field."""
    import pexpect

    policy = {"default": "allow", "rules": [{"tool": "delete_*", "action": "ask"}]}
    cfg = _write(tmp_path / "host.json", {"box": toolbox()}, policy=policy)
    gateway = f"{sys.executable} -m mcpkit gateway {cfg}"
    child = pexpect.spawn(
        sys.executable, ["-m", "mcpkit", "call", gateway, "box__delete_everything"],
        cwd=str(ROOT), env={**_env(tmp_path), "TERM": "xterm"}, encoding="utf-8", timeout=180,
    )  # fmt: skip
    child.expect_exact("The server asks: Allow the tool 'delete_everything' of server 'box' to run with {}?")
    child.expect_exact("Allow this call (yes/no) [no]: ")
    asked = str(child.before)
    child.sendline(typed)
    child.expect(pexpect.EOF)
    child.close()
    rest = str(child.before)
    assert "Answer?" not in asked + rest
    assert "Allow this call" not in rest  # asked once
    if allowed:
        assert child.exitstatus == 0 and "deleted" in rest
    else:
        assert child.exitstatus == 1 and "The user did not allow the call to box__delete_everything" in rest
    decisions = [
        line["decision"] for line in map(json.loads, (tmp_path / "audit.jsonl").read_text().splitlines())
    ]
    assert decisions == ["ask:yes" if allowed else "ask:no"]


def test_consent_with_no_terminal_says_nobody_was_asked(tmp_path: Path) -> None:
    """No terminal to ask at: the refusal says nobody could be asked, and the audit log says
    ``ask:unavailable``; a user's no (test_consent_is_asked_at_the_terminal) says ``did not allow``."""
    policy = {"rules": [{"tool": "delete_*", "action": "ask"}]}
    cfg = _write(tmp_path / "host.json", {"box": toolbox()}, policy=policy)
    refused = mcpkit_cli("host", str(cfg), "--call", "box__delete_everything", env=_env(tmp_path))
    assert refused.returncode == 1
    assert refused.stdout.startswith(
        "The call to box__delete_everything was not run: it needs the user's consent, and nobody could be asked"
    )
    assert "did not allow" not in refused.stdout
    assert "mcpkit: box__delete_everything needs your consent, and stdin is not a terminal" in refused.stderr
    assert [json.loads(line)["decision"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()] == [
        "ask:unavailable"
    ]


def test_gateway_consent_with_no_terminal_behind_it_says_nobody_was_asked(tmp_path: Path) -> None:
    """``mcpkit call`` through a gateway, with no terminal: the CLI cancels the consent question
    (no explicit choice) and the gateway refuses the call as one nobody could be asked about, not as
    the user's no."""
    policy = {"default": "allow", "rules": [{"tool": "delete_*", "action": "ask"}]}
    cfg = _write(tmp_path / "host.json", {"box": toolbox()}, policy=policy)
    gateway = f"{sys.executable} -m mcpkit gateway {cfg}"
    refused = mcpkit_cli("call", gateway, "box__delete_everything", env=_env(tmp_path))
    assert refused.returncode == 1, refused.stderr
    assert NOBODY_ASKED in refused.stdout and "did not allow" not in refused.stdout
    assert "unanswered: stdin is not a terminal" in refused.stderr
    decisions = [json.loads(line)["decision"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert decisions == ["ask:unavailable"]
