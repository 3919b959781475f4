"""The README as a newcomer follows it: its commands and examples run as written, over the real wire.

Each test takes its code or commands out of README.md itself (the block that holds a marker), so the
README cannot drift from what runs. Commands run as subprocesses from a temporary folder holding the
README's ``server.py``, with this environment's ``bin`` first on ``PATH`` and ``HOME`` and the XDG
folders in that temporary folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import Client, Server

from ._chromium import chromium_page
from .conftest import ROOT, free_port, http_server
from .inspector.conftest import open_inspector, start_dev, stop
from .test_docs import LINK, anchors, prose

README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON = re.findall(r"```python\n(.*?)```", README, flags=re.S)
SHELL = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
ERAS = ["2025-11-25", "2026-07-28"]
#: Generous: commands start Python processes on a loaded machine.
COMMAND_SECONDS = 120


def block(blocks: list[str], marker: str) -> str:
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, marker
    return found[0]


def commands(marker: str) -> list[str]:
    """The command lines of the README's shell block holding *marker*, without their comments."""
    lines = [line.split("  #", 1)[0].strip() for line in block(SHELL, marker).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def environment(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["HOME"] = str(home)
    for name, relative in {
        "XDG_CONFIG_HOME": ".config",
        "XDG_STATE_HOME": ".local/state",
        "XDG_DATA_HOME": ".local/share",
        "XDG_CACHE_HOME": ".cache",
    }.items():
        env[name] = str(home / relative)
    env.update(COLUMNS="80", NO_COLOR="1")
    return env


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding the README's ``server.py``, with a home of its own beside it."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "server.py").write_text(block(PYTHON, "# server.py"), encoding="utf-8")
    (tmp_path / "home").mkdir()
    return work


def sh(command: str, folder: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run one README command line in *cwd* (default: *folder*), with the home beside *folder*, as a
    user's shell would; fail saying what it printed."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd or folder,
        env=environment(folder.parent / "home"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
    )
    assert done.returncode == 0, f"$ {command}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


# -- the shape a newcomer meets ------------------------------------------------------------------------


def test_quick_start_is_the_first_two_commands() -> None:
    # CI and newcomers read these two first: the demo, then the test suite.
    assert commands("./dev demo")[:2] == ["./dev demo", "./dev test"]
    assert SHELL[0] == block(SHELL, "./dev demo")


def test_the_readme_stays_short() -> None:
    assert len(README.splitlines()) <= 250


@pytest.mark.parametrize(
    "term", ["era", "handshake era", "stateless era", "host", "gateway", "revision", "transport", "fleet"]
)
def test_each_term_is_defined_before_it_is_used(term: str) -> None:
    # Prose only: a command such as `mcpkit host` or `--host` is not the word.
    prose = re.sub(r"```.*?```", "", README, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    definition = prose.find(f"**{term}")
    assert definition >= 0, f"the README never defines {term!r} (as **{term}**)"
    first = re.search(rf"\b{re.escape(term)}s?\b", prose, flags=re.I)
    assert first is not None
    used = prose[: first.start()].count("\n") + 1
    defined = prose[:definition].count("\n") + 1
    assert used >= defined, f"{term!r} is used at line {used} of the prose, defined at line {defined}"


def test_the_readmes_links_resolve() -> None:
    doc = ROOT / "README.md"
    broken = []
    for target in LINK.findall(prose(doc)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:
        path, _, anchor = target.partition("#")
        resolved = (ROOT / path).resolve() if path else doc
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    assert not broken, "\n".join(broken)


def test_install_offers_only_what_works_today() -> None:
    install = commands("pip install ./mcpkit")
    assert any(c.startswith("git clone ") for c in install)
    assert any("@ git+https://" in c for c in install)
    # The package index is not there yet: its line is prose that says so, never a command to copy.
    assert not any(re.fullmatch(r'pip install "?mcpkit(\[[^\]]*\])?"?', c) for c in install)
    [sentence] = [s for s in re.split(r"(?<=\.)\s", README) if "`pip install mcpkit`" in s]
    assert "not yet available" in sentence


# -- the first server, as the README walks through it -----------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_the_first_server_answers_in_process(version: str) -> None:
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(block(PYTHON, "# server.py"), namespace)
    server = namespace["server"]
    assert isinstance(server, Server)

    async def main() -> None:
        async with Client(server, protocol_version=version) as client:
            [tool] = await client.list_tools()
            assert tool.name == "get_weather"
            assert tool.input_schema["properties"]["location"]["description"] == "City name or zip code"
            result = await client.call_tool("get_weather", {"location": "Paris"})
            assert result.content[0].text == "Sunny in Paris"  # type: ignore[union-attr]

    asyncio.run(asyncio.wait_for(main(), 60))


def test_the_command_line_tour_runs_over_stdio_in_both_eras(folder: Path) -> None:
    lines = [c for c in commands("mcpkit call server.py") if c.split()[1] in ("tools", "call")]
    local = [c for c in lines if "http://" not in c]
    # The README shows a negotiated call (2026-07-28) and one forced into the handshake era.
    assert any("--protocol-version 2025-11-25" in c for c in local)
    assert any("--protocol-version" not in c and c.split()[1] == "call" for c in local)
    for command in local:
        done = sh(command, folder)
        if command.split()[1] == "tools":
            assert "get_weather(" in done.stdout
            assert "Get current weather information for a location." in done.stdout
        else:
            assert done.stdout.strip() == "Sunny in Paris"


@pytest.fixture
def served(folder: Path) -> Iterator[str]:
    """The README's ``mcpkit run server.py --transport http --port 8000``, on a free port instead."""
    [line] = [c for c in commands("mcpkit call server.py") if c.startswith("mcpkit run ")]
    port = free_port()
    argv = shlex.split(line.replace("8000", str(port)))
    # http_server starts it in this process's folder: name the environment's command and the file.
    argv[0] = str(Path(sys.executable).parent / "mcpkit")
    argv[argv.index("server.py")] = str(folder / "server.py")
    yield from http_server(argv, port, 120)


@pytest.mark.parametrize("version", ERAS)
def test_the_command_line_tour_runs_over_http_in_both_eras(folder: Path, served: str, version: str) -> None:
    [line] = [c for c in commands("mcpkit call server.py") if c.startswith("mcpkit call http://")]
    command = line.replace("http://127.0.0.1:8000/mcp", served) + f" --protocol-version {version}"
    assert sh(command, folder).stdout.strip() == "Sunny in Oslo"


def test_mcpkit_dev_shows_the_first_server_in_the_inspector(folder: Path) -> None:
    [line] = [c for c in commands("mcpkit call server.py") if c.startswith("mcpkit dev ")]
    inspector = start_dev(*shlex.split(line)[2:], cwd=folder, env=environment(folder.parent / "home"))
    try:
        assert httpx.get(inspector.url, timeout=60).status_code == 200
        with chromium_page() as page:
            page.set_default_timeout(60_000)
            open_inspector(page, inspector)
            assert "get_weather" in page.inner_text("body")
    finally:
        stop(inspector)


def test_mcpkit_install_writes_an_entry_the_host_starts(folder: Path) -> None:
    home = folder.parent / "home"
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    printed, written = commands("mcpkit install claude-desktop")
    assert "--print" in printed and "--print" not in written
    shown = json.loads(sh(printed, folder).stdout)
    assert not config.exists()  # --print writes nothing
    sh(written, folder)
    entry = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["weather"]
    assert shown["mcpServers"]["weather"] == entry
    # The host starts what the entry says, from anywhere: here, mcpkit's host over that very file,
    # as Claude Desktop would, in both eras.
    for version in ERAS:
        done = sh(
            f"mcpkit call --config {shlex.quote(str(config))} weather get_weather location=Paris"
            f" --yes --protocol-version {version}",
            folder,
            cwd=home,
        )
        assert done.stdout.strip() == "Sunny in Paris"


# -- the client example ---------------------------------------------------------------------------------


def test_the_client_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    exec(block(PYTHON, "async with Client("), {"__name__": "readme"})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2026-07-28"
    assert "get_weather" in out and "Current weather in Paris:" in out
