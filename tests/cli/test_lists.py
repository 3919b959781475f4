"""``mcpkit tools|resources|templates|prompts`` on a pipe: one plain line per item, or exact JSON."""

from __future__ import annotations

import json

import pytest

from .conftest import EVERYTHING, NOTES, WEATHER, run_mcpkit


def test_tools_on_a_pipe_are_one_unwrapped_line_each() -> None:
    listed = run_mcpkit("tools", WEATHER)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "get_weather(location: str)  Get current weather information for a location.",
        'get_weather_data(location: str, unit?: "celsius" | "fahrenheit")  Get current weather as '
        "structured data.",
        "forecast(location: str, days?: int)  Forecast for the next days, one line per day.",
    ]
    assert listed.stderr == ""


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-06-18", "2024-11-05"])
def test_tools_json_is_what_the_server_sent_keys_sorted(revision: str) -> None:
    first = run_mcpkit("tools", WEATHER, "--json", "--protocol-version", revision)
    assert first.returncode == 0, first.stderr
    tools = json.loads(first.stdout)
    assert [t["name"] for t in tools] == ["get_weather", "get_weather_data", "forecast"]
    assert first.stdout == json.dumps(tools, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    # Exact: the wire's own field names, the server's extras (title, annotations) kept.
    assert tools[0]["inputSchema"]["required"] == ["location"]
    # ... and only what the revision has (annotations from 2025-03-26, title from 2025-06-18).
    assert ("annotations" in tools[0]) is (revision >= "2025-03-26")
    assert ("title" in tools[0]) is (revision >= "2025-06-18")
    assert run_mcpkit("tools", WEATHER, "--json", "--protocol-version", revision).stdout == first.stdout


def test_resources_templates_and_prompts(everything_url: str) -> None:
    resources = run_mcpkit("resources", everything_url)
    assert resources.returncode == 0, resources.stderr
    assert "test://static-text  Static Text Resource  text/plain  A static text resource for testing" in (
        resources.stdout.splitlines()
    )
    templates = run_mcpkit("templates", everything_url)
    assert templates.stdout.splitlines()[0].startswith("test://template/{id}/data  Resource Template")
    prompts = run_mcpkit("prompts", everything_url)
    assert "test_prompt_with_arguments(arg1, arg2)  A prompt with required arguments" in prompts.stdout
    assert "test_simple_prompt()  A simple prompt without arguments" in prompts.stdout
    as_json = json.loads(run_mcpkit("templates", everything_url, "--json").stdout)
    assert as_json[0]["uriTemplate"] == "test://template/{id}/data"


def test_a_server_without_prompts_lists_none_and_says_so() -> None:
    listed = run_mcpkit("prompts", WEATHER, "--json")
    assert listed.returncode == 0
    assert json.loads(listed.stdout) == []
    assert listed.stderr == "mcpkit: weather offers no prompts\n"


def test_notes_over_a_handshake_revision_lists_templates() -> None:
    listed = run_mcpkit("templates", NOTES, "--protocol-version", "2025-03-26")
    assert listed.returncode == 0, listed.stderr
    assert [line.split("  ")[0] for line in listed.stdout.splitlines()] == [
        "notes://{notebook_id}",
        "notes://{notebook_id}/{note_id}",
    ]


def test_stdout_closed_early_ends_quietly() -> None:
    """``mcpkit tools X --json | head -1``: the reader goes away; no traceback, exit 141."""
    import subprocess
    import sys

    from ..conftest import ROOT

    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "tools", EVERYTHING, "--json"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # nobody reads: the command's first write meets a closed pipe
    _, stderr = proc.communicate(timeout=120)
    assert stderr == b""
    assert proc.returncode == 141


def test_head_on_a_pipe_sees_the_first_line() -> None:
    import subprocess

    from ..conftest import ROOT

    shell = subprocess.run(
        f"set -o pipefail; {sys_python()} -m mcpkit tools {EVERYTHING} --json | head -1",
        shell=True,
        executable="/bin/bash",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shell.stdout == "[\n"
    assert "Traceback" not in shell.stderr and "BrokenPipe" not in shell.stderr


def sys_python() -> str:
    import shlex
    import sys

    return shlex.quote(sys.executable)


def test_a_command_line_target_and_a_module_object_target() -> None:
    import shlex
    import sys

    command = f"{shlex.quote(sys.executable)} {shlex.quote(WEATHER)}"
    by_command = run_mcpkit("tools", command, "--json")
    assert by_command.returncode == 0, by_command.stderr
    by_object = run_mcpkit("tools", f"{WEATHER}:server", "--json")
    assert json.loads(by_command.stdout) == json.loads(by_object.stdout)


def test_an_http_sse_url_falls_back_to_the_old_transport(everything_url: str) -> None:
    listed = run_mcpkit("tools", everything_url.replace("/mcp", "/sse"), "--json")
    assert listed.returncode == 0, listed.stderr
    assert "test_simple_text" in [t["name"] for t in json.loads(listed.stdout)]


def test_one_tool_or_prompt_in_full() -> None:
    tool = run_mcpkit("tools", WEATHER, "get_weather")
    assert tool.returncode == 0, tool.stderr
    lines = tool.stdout.splitlines()
    assert lines[:6] == [
        "get_weather (Weather Information Provider)",
        "get_weather(location: str)",
        "Get current weather information for a location.",
        "arguments:",
        "  location: str (required) - City name or zip code",
        "output schema:",
    ]
    assert lines[-1] == "annotations: readOnlyHint=true"
    data = run_mcpkit("tools", WEATHER, "get_weather_data", "--json")
    assert json.loads(data.stdout)["outputSchema"]["title"] == "Weather"
    prompt = run_mcpkit("prompts", NOTES, "summarize")
    assert prompt.stdout.splitlines()[-2:] == ["  notebook_id (required)", "  style - short or detailed"]
    typo = run_mcpkit("prompts", NOTES, "sumarize")
    assert (typo.returncode, typo.stderr) == (
        2,
        "mcpkit: no prompt 'sumarize' on notes; did you mean summarize?\n",
    )


def test_info_says_what_the_server_said_about_itself() -> None:
    modern = run_mcpkit("info", WEATHER)
    assert modern.returncode == 0, modern.stderr
    assert modern.stdout.splitlines() == [
        "server: weather 1.0.0",
        "protocol: 2026-07-28 (it also speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
        "capabilities: logging, tools",
        "instructions: Current weather and forecasts for cities.",
    ]
    legacy = json.loads(run_mcpkit("info", NOTES, "--protocol-version", "2025-03-26", "--json").stdout)
    assert legacy["protocolVersion"] == "2025-03-26" and legacy["serverInfo"]["name"] == "notes"
    assert "prompts" in legacy["capabilities"]
