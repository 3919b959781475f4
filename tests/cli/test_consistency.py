"""One exit-code table for every command, and file targets with spaces in every command, as a user
meets them: the real ``mcpkit`` as a subprocess, servers over real stdio (and HTTP for ``run``).

The table (docs/cli.md, "Errors and exit codes"): 0 done, 1 the call or the command failed, 2 the
command line is wrong (a missing file among it), 3 the server cannot be started or reached, 4 timed
out, 5 authorization failed, 130 interrupted, 141 stdout closed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import EXAMPLES, free_port, http_server
from .conftest import run_mcpkit

MISSING = "no such dir/server app.py"

#: Each command that takes a server file, with the words it needs around the file.
FILE_COMMANDS = {
    "info": ["info", "{}"],
    "tools": ["tools", "{}"],
    "resources": ["resources", "{}"],
    "templates": ["templates", "{}"],
    "prompts": ["prompts", "{}"],
    "call": ["call", "{}", "get_weather", "location=Oslo"],
    "read": ["read", "{}", "notes://about"],
    "prompt": ["prompt", "{}", "summarize", "notebook_id=x"],
    "run": ["run", "{}"],
    "dev": ["dev", "{}", "--no-browser"],
    "install": ["install", "cursor", "{}", "--print"],
}
#: Every command, for the errors every command shares.
EVERY_COMMAND = [*FILE_COMMANDS, "host", "gateway", "demo", "completion"]


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """HOME and XDG folders under the test's temporary folder (install, dev and host read them)."""
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "XDG_STATE_HOME": str(tmp_path / "home" / "state"),
        "XDG_DATA_HOME": str(tmp_path / "home" / "data"),
    }


@pytest.fixture
def spaced(tmp_path: Path) -> Path:
    """The examples' weather and notes servers in a folder whose name, and theirs, hold spaces."""
    folder = tmp_path / "my servers"
    folder.mkdir()
    shutil.copy(EXAMPLES / "weather.py", folder / "weather app.py")
    shutil.copy(EXAMPLES / "notes.py", folder / "notes app.py")
    return folder


def _words(command: str, target: str) -> list[str]:
    return [word.format(target) for word in FILE_COMMANDS[command]]


@pytest.mark.parametrize("command", list(FILE_COMMANDS))
def test_a_missing_file_is_a_usage_error_from_every_command(command: str, home: dict[str, str]) -> None:
    done = run_mcpkit(*_words(command, MISSING), env=home)
    assert (done.returncode, done.stderr, done.stdout) == (2, f"mcpkit: no such file: {MISSING}\n", "")


@pytest.mark.parametrize("command", EVERY_COMMAND)
def test_an_unknown_option_is_a_usage_error_from_every_command(command: str, home: dict[str, str]) -> None:
    done = run_mcpkit(command, "--no-such-option", env=home)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("mcpkit") and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("command", ["run", "tools", "call"])
def test_a_file_that_fails_to_load_cannot_start_from_every_command(command: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken server.py"
    broken.write_text("from mcpkit import Server\nserver = Server('b')\ndef f(:\n")
    words = [command, str(broken)] + (["get_weather"] if command == "call" else [])
    done = run_mcpkit(*words)
    assert done.returncode == 3, done.stderr
    assert "SyntaxError" in done.stderr


def test_a_name_the_server_does_not_know_is_a_usage_error() -> None:
    weather = str(EXAMPLES / "weather.py")
    for words in (["call", weather, "get_wether"], ["tools", weather, "get_wether"]):
        done = run_mcpkit(*words)
        assert (done.returncode, done.stderr) == (
            2,
            "mcpkit: no tool 'get_wether' on weather; did you mean get_weather or get_weather_data?\n",
        )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("info", "server: weather 1.0.0"),
        ("tools", "get_weather(location: str)  Get current weather information for a location."),
        ("call", "Current weather in Oslo:"),
        ("resources", "notes://about  About this server  What this server does."),
        ("templates", "notes://{notebook_id}  notebook_resource  text/markdown  A whole notebook, as Markdown."),
        ("prompts", "summarize(notebook_id, style?)  Ask the model to summarize a notebook."),
        ("read", "Notebooks of short notes, kept for 24 hours."),
        ("prompt", "[user]"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_a_file_with_spaces_in_every_client_command(
    spaced: Path, command: str, expected: str, revision: str
) -> None:
    server = "weather app.py" if command in ("info", "tools", "call") else "notes app.py"
    target = str(spaced / server) + (":server" if command == "read" else "")
    done = run_mcpkit(*_words(command, target), "--protocol-version", revision)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout.splitlines(), done.stdout


def test_a_relative_file_with_spaces(spaced: Path) -> None:
    done = run_mcpkit("tools", "my servers/weather app.py", cwd=spaced.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("get_weather(location: str)")


@pytest.fixture
def spaced_url(spaced: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", str(spaced / "weather app.py"), "--transport", "http"]
    yield from http_server([*command, "--port", str(port)], port, 60)


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_run_serves_a_file_with_spaces_over_http(spaced_url: str, revision: str) -> None:
    done = run_mcpkit("call", spaced_url, "get_weather", "location=Oslo", "--protocol-version", revision)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Current weather in Oslo:")


def test_install_and_dev_take_a_file_with_spaces(spaced: Path, home: dict[str, str]) -> None:
    path = str(spaced / "weather app.py")
    printed = run_mcpkit("install", "cursor", path, "--print", env=home)
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["weather"]
    assert entry["args"][-1] == path
    from ..inspector.conftest import start_dev, stop

    with pytest.MonkeyPatch.context() as patch:
        for key, value in home.items():
            patch.setenv(key, value)
        inspector = start_dev(path)
    try:
        assert inspector.url.startswith("http://127.0.0.1:")
    finally:
        stop(inspector)


def test_an_unstartable_command_names_the_whole_target_with_a_hint(tmp_path: Path) -> None:
    target = f"{tmp_path}/no such folder/server --debug"
    done = run_mcpkit("tools", target)
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr == (
        f"mcpkit: cannot start {target!r}: no program '{tmp_path}/no' (TARGET is split at spaces, so quote "
        "a path with spaces inside it, as in \"'my servers/server' --flag\", or give a .py file's whole path)\n"
    )
    quoted = run_mcpkit("tools", f"'{tmp_path}/no such folder/server' --debug")
    assert quoted.returncode == 3
    assert f"no program '{tmp_path}/no such folder/server' (is it installed" in quoted.stderr


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_gateway_writes_its_audit_log_where_audit_says(tmp_path: Path, revision: str) -> None:
    config = tmp_path / "host.json"
    weather = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(EXAMPLES / "weather.py")]}
    policy = {"default": "allow"}
    config.write_text(json.dumps({"mcpServers": {"weather": weather}, "mcpkit": {"policy": policy}}))
    audit = tmp_path / "audit folder" / "calls.jsonl"
    gateway = f"{sys.executable} -m mcpkit gateway '{config}' --audit '{audit}'"
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    done = run_mcpkit(
        "call", gateway, "weather__get_weather", "location=Oslo", "--protocol-version", revision, env=env
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(line["name"], line["decision"], line["outcome"]) for line in lines] == [
        ("weather__get_weather", "allow", "ok")
    ], lines
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").rglob("*.jsonl"))
    assert os.path.getsize(audit) > 0


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "host config.json"
    weather = {"command": sys.executable, "args": ["-m", "mcpkit", "run", str(EXAMPLES / "weather.py")]}
    config.write_text(
        json.dumps({"mcpServers": {"weather": weather}, "mcpkit": {"policy": {"default": "allow"}}})
    )
    return config


def test_gateway_over_http_says_where_it_serves(tmp_path: Path) -> None:
    config, port = _config(tmp_path), free_port()
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONUNBUFFERED": "1"}
    gateway = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "gateway", str(config), "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert gateway.stderr is not None
        url = f"http://127.0.0.1:{port}/mcp"
        assert gateway.stderr.readline() == f"mcpkit: serving 1 server of {config} at {url}\n"
        for revision in ("2025-11-25", "2026-07-28"):
            listed = run_mcpkit("tools", url, "--protocol-version", revision, "--timeout", "120")
            for _ in range(60):  # the line comes before uvicorn listens: give it a moment
                if listed.returncode != 3:
                    break
                time.sleep(1)
                listed = run_mcpkit("tools", url, "--protocol-version", revision, "--timeout", "120")
            assert listed.returncode == 0, listed.stderr
            assert listed.stdout.startswith("weather__get_weather(location: str")
    finally:
        gateway.terminate()
        gateway.wait(timeout=60)
        if gateway.stderr is not None:
            gateway.stderr.close()


@pytest.mark.parametrize("command", ["run", "gateway"])
def test_a_port_in_use_is_one_line_and_cannot_start(command: str, tmp_path: Path) -> None:
    target = str(EXAMPLES / "weather.py") if command == "run" else str(_config(tmp_path))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_mcpkit(command, target, "--transport", "http", "--port", str(port))
    assert done.returncode == 3, done.stderr  # docs/cli.md: the server could not be started
    assert done.stderr == (
        f"mcpkit: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(is another server running there? choose another --port)\n"
    )
