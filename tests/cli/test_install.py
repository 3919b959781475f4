"""``mcpkit install``: the real command, run on copies of each host's real configuration files.

Every test runs ``python -m mcpkit install`` as a subprocess with ``HOME`` and ``XDG_CONFIG_HOME``
in a temporary folder, so nothing outside it is read or written. The fixtures under
``fixtures/hosts/`` are configuration files as each host writes them (other servers, unrelated
settings, and comments where the format has them); a test copies one, installs into the copy, and
compares the result with the original, value by value and line by line.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpkit import Client
from mcpkit.cli._hosts._jsonc import loads as jsonc_loads

from ..conftest import EXAMPLES

FIXTURES = Path(__file__).parent / "fixtures" / "hosts"
WEATHER = (EXAMPLES / "weather.py").resolve()
URL = "https://mcp.example.com/mcp"
RUN_WEATHER = ["-m", "mcpkit", "run", str(WEATHER)]


@dataclass(frozen=True)
class Case:
    host: str
    fixture: str
    section: tuple[str, ...]  # the keys leading to the servers object
    stdio: dict[str, Any]  # the entry for examples/weather.py with no env
    url: dict[str, Any]  # the entry for URL, named "remote"
    key: str = "weather"


STDIO = {"command": sys.executable, "args": RUN_WEATHER}
GOOSE_COMMON = {"enabled": True, "description": "", "timeout": 300, "env_keys": [], "envs": {}}
CASES = [
    Case("claude-desktop", "claude_desktop_config.json", ("mcpServers",), STDIO,
         {"command": shutil.which("npx") or "npx", "args": ["-y", "mcp-remote", URL]}),
    Case("claude-code", "claude.json", ("mcpServers",), {"type": "stdio", **STDIO}, {"type": "http", "url": URL}),
    Case("cursor", "cursor_mcp.json", ("mcpServers",), STDIO, {"url": URL}),
    Case("vscode", "vscode_mcp.json", ("servers",), {"type": "stdio", **STDIO}, {"type": "http", "url": URL}),
    Case("windsurf", "windsurf_mcp_config.json", ("mcpServers",), STDIO, {"serverUrl": URL}),
    Case("zed", "zed_settings.json", ("context_servers",), STDIO, {"url": URL}),
    Case("goose", "goose_config.yaml", ("extensions",),
         {"type": "stdio", "name": "weather", **GOOSE_COMMON, "cmd": sys.executable, "args": RUN_WEATHER},
         {"type": "streamable_http", "name": "remote", **GOOSE_COMMON, "uri": URL, "headers": {}}),
]  # fmt: skip
IDS = [case.host for case in CASES]


def install(home: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``mcpkit install ARGS`` with its home (and XDG config folder) in *home*."""
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "install", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text) if ".yaml" in path.name else jsonc_loads(text)  # config.yaml.bak too


def servers(document: Any, section: tuple[str, ...]) -> dict[str, Any]:
    for key in section:
        document = document[key]
    assert isinstance(document, dict)
    return document


def without(document: Any, section: tuple[str, ...], key: str) -> Any:
    """*document* with ``section.key`` removed (a deep copy)."""
    copy = json.loads(json.dumps(document))
    del servers(copy, section)[key]
    return copy


def kept_lines(before: str, after: str) -> list[str]:
    """The lines of *before* missing from *after*, in order (a trailing comma does not count: adding
    a member after the last one gives that line a comma)."""
    remaining = iter(line.rstrip().rstrip(",") for line in after.splitlines())
    return [line for line in before.splitlines() if line.rstrip().rstrip(",") not in remaining]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def copy_fixture(case: Case, folder: Path) -> Path:
    target = folder / case.fixture
    shutil.copyfile(FIXTURES / case.fixture, target)
    return target


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_file_target_is_added_and_everything_else_is_kept(case: Case, home: Path, tmp_path: Path) -> None:
    config = copy_fixture(case, tmp_path)
    before_text, before = config.read_text(), load(config)
    proc = install(home, case.host, str(WEATHER), "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    after = load(config)
    assert servers(after, case.section)[case.key] == case.stdio
    assert without(after, case.section, case.key) == before  # every other value as it was
    assert kept_lines(before_text, config.read_text()) == []  # every line (comments too) still there
    assert (tmp_path / (case.fixture + ".bak")).read_text() == before_text
    assert str(config) in proc.stdout
    assert list(home.iterdir()) == []  # --config: the host's usual file is not touched


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_url_target_gets_the_hosts_remote_entry(case: Case, home: Path, tmp_path: Path) -> None:
    config = copy_fixture(case, tmp_path)
    before_text, before = config.read_text(), load(config)
    proc = install(home, case.host, URL, "--name", "remote", "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    after = load(config)
    assert servers(after, case.section)["remote"] == case.url
    assert without(after, case.section, "remote") == before
    assert kept_lines(before_text, config.read_text()) == []


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_print_shows_the_entry_and_writes_nothing(case: Case, home: Path, tmp_path: Path) -> None:
    config = copy_fixture(case, tmp_path)
    before = config.read_bytes()
    proc = install(home, case.host, str(WEATHER), "--config", str(config), "--print")
    assert proc.returncode == 0, proc.stderr
    printed = yaml.safe_load(proc.stdout) if case.fixture.endswith(".yaml") else json.loads(proc.stdout)
    assert servers(printed, case.section) == {case.key: case.stdio}
    assert config.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["home", case.fixture])
    assert list(home.iterdir()) == []
    assert "nothing written" in proc.stderr


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_name_collision_is_refused_unless_forced(case: Case, home: Path, tmp_path: Path) -> None:
    config = copy_fixture(case, tmp_path)
    assert install(home, case.host, str(WEATHER), "--config", str(config)).returncode == 0
    installed = config.read_text()

    again = install(home, case.host, str(WEATHER), "--config", str(config))
    assert again.returncode == 0, again.stderr
    assert "nothing to do" in again.stdout  # the same entry again is not a collision

    refused = install(home, case.host, str(WEATHER), "--config", str(config), "--env", "UNITS=metric")
    assert refused.returncode == 1
    assert "already has a server named 'weather'" in refused.stderr and "--force" in refused.stderr
    assert config.read_text() == installed

    forced = install(
        home, case.host, str(WEATHER), "--config", str(config), "--env", "UNITS=metric", "--force"
    )
    assert forced.returncode == 0, forced.stderr
    entry = servers(load(config), case.section)["weather"]
    assert entry["envs" if case.host == "goose" else "env"] == {"UNITS": "metric"}
    backup = load(tmp_path / (case.fixture + ".bak"))  # the file as it was just before --force
    assert without(load(config), case.section, "weather") == without(backup, case.section, "weather")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_existing_server_is_replaced_in_place_with_force(case: Case, home: Path, tmp_path: Path) -> None:
    config = copy_fixture(case, tmp_path)
    before = load(config)
    first = next(iter(servers(before, case.section)))
    name = servers(before, case.section)[first].get("name", first) if case.host == "goose" else first
    proc = install(home, case.host, URL, "--name", name, "--config", str(config), "--force")
    assert proc.returncode == 0, proc.stderr
    after = load(config)
    assert list(servers(after, case.section)) == list(servers(before, case.section))  # same place
    assert without(after, case.section, first) == without(before, case.section, first)


def test_env_file_and_env_options(home: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "server.env"
    env_file.write_text(
        "# secrets for the weather server\n"
        "API_KEY=abc123\n"
        'export GREETING="hello world"\n'
        "UNITS='imperial'\n"
        "\n"
        "REGION=eu # where the data lives\n"
    )
    config = tmp_path / "mcp.json"
    proc = install(home, "cursor", str(WEATHER), "--config", str(config), "--env-file", str(env_file),
                   "--env", "UNITS=metric", "--env", "EMPTY=", "--env", "URL=a=b")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert load(config)["mcpServers"]["weather"]["env"] == {
        "API_KEY": "abc123",
        "GREETING": "hello world",
        "UNITS": "metric",  # --env wins over the file
        "REGION": "eu",
        "EMPTY": "",
        "URL": "a=b",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "NOEQUALS"], "--env takes KEY=VALUE"),
        (["--env-file", "/nonexistent/.env"], "cannot read --env-file"),
        (["--scope", "project"], "Windsurf has no project configuration"),
    ],
)
def test_bad_options_are_refused_clearly(home: Path, tmp_path: Path, args: list[str], message: str) -> None:
    proc = install(home, "windsurf", str(WEATHER), "--config", str(tmp_path / "c.json"), *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not (tmp_path / "c.json").exists()


def test_a_url_takes_no_env_and_a_missing_file_is_named(home: Path) -> None:
    proc = install(home, "cursor", URL, "--env", "A=1")
    assert proc.returncode == 2 and "apply to a server file, not to a URL" in proc.stderr
    proc = install(home, "cursor", "nowhere/server.py")
    assert proc.returncode == 2 and "no such file: nowhere/server.py" in proc.stderr
    assert list(home.iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux locations")
def test_each_host_writes_its_usual_file(home: Path) -> None:
    expected = {
        "claude-desktop": (home / ".config/Claude/claude_desktop_config.json", "mcpServers"),
        "claude-code": (home / ".claude.json", "mcpServers"),
        "cursor": (home / ".cursor/mcp.json", "mcpServers"),
        "vscode": (home / ".config/Code/User/mcp.json", "servers"),
        "windsurf": (home / ".codeium/windsurf/mcp_config.json", "mcpServers"),
        "zed": (home / ".config/zed/settings.json", "context_servers"),
        "goose": (home / ".config/goose/config.yaml", "extensions"),
    }
    for host, (path, section) in expected.items():
        proc = install(home, host, str(WEATHER))
        assert proc.returncode == 0, proc.stderr
        assert "weather" in load(path)[section], host
        assert not path.with_name(path.name + ".bak").exists()  # there was no file to back up


def test_xdg_config_home_is_respected(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "xdg"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(elsewhere)}
    subprocess.run([sys.executable, "-m", "mcpkit", "install", "goose", str(WEATHER)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    assert "weather" in load(elsewhere / "goose" / "config.yaml")["extensions"]


def test_project_and_local_scopes(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    for host, relative, section in [
        ("claude-code", ".mcp.json", "mcpServers"),
        ("cursor", ".cursor/mcp.json", "mcpServers"),
        ("vscode", ".vscode/mcp.json", "servers"),
        ("zed", ".zed/settings.json", "context_servers"),
    ]:
        proc = install(home, host, str(WEATHER), "--project", str(project))  # --project implies the scope
        assert proc.returncode == 0, proc.stderr
        assert "weather" in load(project / relative)[section]
    assert list(home.iterdir()) == []
    proc = install(
        home, "claude-code", URL, "--name", "remote", "--scope", "local", "--project", str(project)
    )
    assert proc.returncode == 0, proc.stderr
    state = load(home / ".claude.json")
    assert state == {
        "projects": {str(project.resolve()): {"mcpServers": {"remote": {"type": "http", "url": URL}}}}
    }


def test_claude_code_project_file_keeps_its_servers(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    shutil.copyfile(FIXTURES / "mcp.json", project / ".mcp.json")
    before_text, before = (project / ".mcp.json").read_text(), load(project / ".mcp.json")
    proc = install(home, "claude-code", f"{WEATHER}:server", "--scope", "project", "--project", str(project))
    assert proc.returncode == 0, proc.stderr
    after = load(project / ".mcp.json")
    assert after["mcpServers"]["weather"] == {"type": "stdio", "command": sys.executable,
                                              "args": [*RUN_WEATHER[:-1], f"{WEATHER}:server"]}  # fmt: skip
    assert without(after, ("mcpServers",), "weather") == before
    assert kept_lines(before_text, (project / ".mcp.json").read_text()) == []
    assert list(home.iterdir()) == []


def test_claude_code_local_scope_keeps_the_projects_other_state(home: Path) -> None:
    shutil.copyfile(FIXTURES / "claude.json", home / ".claude.json")
    before = load(home / ".claude.json")
    proc = install(
        home, "claude-code", URL, "--name", "remote", "--scope", "local", "--project", "/home/ada/src/shop"
    )
    assert proc.returncode == 0, proc.stderr
    after = load(home / ".claude.json")
    project = after["projects"]["/home/ada/src/shop"]
    assert project["mcpServers"] == {**before["projects"]["/home/ada/src/shop"]["mcpServers"],
                                     "remote": {"type": "http", "url": URL}}  # fmt: skip
    assert {k: v for k, v in project.items() if k != "mcpServers"} == {
        k: v for k, v in before["projects"]["/home/ada/src/shop"].items() if k != "mcpServers"
    }
    assert after["mcpServers"] == before["mcpServers"]


def test_a_broken_config_is_refused_and_left_alone(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "settings.json"
    config.write_text('{\n  "theme": "One Dark",\n  "context_servers": {\n')  # cut short
    proc = install(home, "zed", str(WEATHER), "--config", str(config))
    assert proc.returncode == 1
    assert f"cannot edit {config}" in proc.stderr and "line 4" in proc.stderr
    assert config.read_text() == '{\n  "theme": "One Dark",\n  "context_servers": {\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "settings.json"]


def test_a_config_whose_servers_are_not_an_object_is_refused(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"servers": []}\n')
    proc = install(home, "vscode", str(WEATHER), "--config", str(config))
    assert proc.returncode == 1 and "servers is not an object" in proc.stderr
    assert config.read_text() == '{"servers": []}\n'


def test_flow_style_yaml_with_comments_is_refused_not_flattened(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    text = "# mine\nextensions: {fetch: {type: stdio, cmd: uvx, args: [mcp-server-fetch], enabled: true}}\n"
    config.write_text(text)
    proc = install(home, "goose", str(WEATHER), "--config", str(config))
    assert proc.returncode == 1 and "without losing the file's comments" in proc.stderr
    assert config.read_text() == text


def test_a_symlinked_config_is_edited_through_the_link(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    shutil.copyfile(FIXTURES / "cursor_mcp.json", dotfiles / "mcp.json")
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").symlink_to(dotfiles / "mcp.json")
    proc = install(home, "cursor", str(WEATHER))
    assert proc.returncode == 0, proc.stderr
    assert (home / ".cursor" / "mcp.json").is_symlink()
    assert "weather" in load(dotfiles / "mcp.json")["mcpServers"]


def test_with_runs_the_server_through_uv_over_this_environment(home: Path) -> None:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        pytest.skip("uv is not installed beside this Python")
    proc = install(home, "vscode", str(WEATHER), "--with", "rich", "--with", "httpx>=0.27", "--print",
                   path=str(Path(uv).parent))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    entry = json.loads(proc.stdout)["servers"]["weather"]
    assert entry == {
        "type": "stdio",
        "command": uv,
        "args": ["run", "--no-project", "--python", sys.executable, "--with", "rich", "--with", "httpx>=0.27",
                 "python", *RUN_WEATHER],
    }  # fmt: skip
    missing = install(home, "vscode", str(WEATHER), "--with", "rich", "--print", path="/nonexistent")
    assert missing.returncode == 1 and "--with needs uv" in missing.stderr


async def _tools_and_env(
    entry: dict[str, Any], extra_env: dict[str, str] | None = None
) -> tuple[list[str], Any]:
    command = [entry.get("command") or entry["cmd"], *entry["args"]]
    env = {**(entry.get("env") or entry.get("envs") or {}), **(extra_env or {})}
    # The host starts the server from wherever it runs, not from this repository.
    async with Client(command, env=env, cwd="/") as client:
        tools = [tool.name for tool in await client.list_tools()]
        result = None
        if "read_env" in tools:
            result = await client.call_tool("read_env", {"name": "GREETING"})
        return tools, result


def test_the_written_entry_starts_the_server(home: Path, tmp_path: Path) -> None:
    config = copy_fixture(CASES[0], tmp_path)  # Claude Desktop's file
    assert install(home, "claude-desktop", str(WEATHER), "--config", str(config)).returncode == 0
    tools, _ = asyncio.run(_tools_and_env(load(config)["mcpServers"]["weather"]))
    assert "get_weather" in tools


def test_the_written_env_reaches_the_server(home: Path, tmp_path: Path) -> None:
    server = tmp_path / "envecho.py"
    server.write_text(
        "import os\n"
        "from mcpkit import Server\n\n"
        'server = Server("env echo", "1.0.0")\n\n\n'
        "@server.tool\n"
        "def read_env(name: str) -> str:\n"
        "    return os.environ.get(name, '<unset>')\n"
    )
    config = tmp_path / "config.yaml"
    shutil.copyfile(FIXTURES / "goose_config.yaml", config)
    proc = install(home, "goose", str(server), "--config", str(config), "--env", "GREETING=bonjour")
    assert proc.returncode == 0, proc.stderr
    entry = load(config)["extensions"]["envecho"]  # Goose's key: the name without spaces
    assert entry["name"] == "env echo"
    tools, result = asyncio.run(_tools_and_env(entry))
    assert tools == ["read_env"]
    assert result.content[0].text == "bonjour"


def test_the_uv_entry_starts_the_server_offline(home: Path) -> None:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        pytest.skip("uv is not installed beside this Python")
    # msgspec is in this environment already, so uv needs no index: UV_OFFLINE proves it.
    proc = install(home, "cursor", str(WEATHER), "--with", "msgspec", "--print", path=str(Path(uv).parent))
    assert proc.returncode == 0, proc.stderr
    entry = json.loads(proc.stdout)["mcpServers"]["weather"]
    tools, _ = asyncio.run(_tools_and_env(entry, {"UV_OFFLINE": "1"}))
    assert "get_weather" in tools


def test_crlf_line_ends_are_kept(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_bytes((FIXTURES / "cursor_mcp.json").read_bytes().replace(b"\n", b"\r\n"))
    proc = install(home, "cursor", str(WEATHER), "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    data = config.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") > 20
    assert "weather" in load(config)["mcpServers"]


def test_a_file_of_comments_only_keeps_them(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "settings.json"
    config.write_text("// Zed settings\n//\n// (nothing set yet)\n")
    proc = install(home, "zed", str(WEATHER), "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    assert config.read_text().startswith("// Zed settings\n//\n// (nothing set yet)\n{\n")
    assert list(load(config)["context_servers"]) == ["weather"]


def test_a_file_that_is_not_utf8_is_refused(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_bytes(b'{"mcpServers": {"caf\xe9": {"url": "x"}}}')
    proc = install(home, "cursor", str(WEATHER), "--config", str(config))
    assert proc.returncode == 1 and "not UTF-8 text" in proc.stderr
    assert config.read_bytes() == b'{"mcpServers": {"caf\xe9": {"url": "x"}}}'


def test_the_parser_lists_every_host() -> None:
    from mcpkit.cli._hosts import HOSTS
    from mcpkit.cli.install import HOST_NAMES

    assert tuple(sorted(HOSTS)) == HOST_NAMES


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_headers_go_into_the_remote_entry(case: Case, home: Path) -> None:
    proc = install(home, case.host, URL, "--name", "remote", "--print",
                   "--header", "Authorization: Bearer t0k", "--header", "X-Region:eu")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    printed = yaml.safe_load(proc.stdout) if case.host == "goose" else json.loads(proc.stdout)
    entry = servers(printed, case.section)["remote"]
    headers = {"Authorization": "Bearer t0k", "X-Region": "eu"}
    if case.host == "claude-desktop":  # through mcp-remote's own option
        assert entry["args"] == [
            *case.url["args"],
            "--header",
            "Authorization:Bearer t0k",
            "--header",
            "X-Region:eu",
        ]
    else:
        assert entry == {**case.url, "headers": headers}


def test_headers_are_for_urls_and_must_be_headers(home: Path) -> None:
    proc = install(home, "cursor", str(WEATHER), "--header", "A: b", "--print")
    assert proc.returncode == 2 and "--header applies to a URL" in proc.stderr
    proc = install(home, "cursor", URL, "--header", "no colon here", "--print")
    assert proc.returncode == 2 and "--header takes 'Name: value'" in proc.stderr


def test_a_server_importing_what_this_python_lacks_is_warned_about(home: Path, tmp_path: Path) -> None:
    server = tmp_path / "needy.py"
    server.write_text(
        "import json\n"
        "import helper  # a module beside the server\n"
        "import surely_not_installed_pkg\n"
        "from mcpkit import Server\n"
        "try:\n"
        "    import optional_extra_pkg\n"
        "except ImportError:\n"
        "    optional_extra_pkg = None\n"
        'server = Server("needy")\n'
    )
    (tmp_path / "helper.py").write_text("")
    proc = install(home, "cursor", str(server), "--print")
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert "imports surely_not_installed_pkg, which" in warnings[0] and "--with" in warnings[0]
    quiet = install(home, "cursor", str(WEATHER), "--print")
    assert "warning" not in quiet.stderr


@pytest.mark.parametrize(
    "text",
    [
        '{\n  "theme": "One Dark" /* why */,\n}\n',  # a comment before the trailing comma
        '{\n  "theme": "One Dark", /* why */\n}\n',  # a block comment after it
        '{\n  "theme": "One Dark" // why\n}\n',  # a line comment and no comma: the comma goes before it
        '{\n  "theme": "One Dark" /* a comment\n     on two lines */\n}\n',
        '{"theme": "One Dark", "context_servers": {}}',  # all on one line
        '\ufeff{\n\t"theme": "One Dark"\n}\n',  # a byte order mark, tabs
    ],
)
def test_jsonc_comments_and_layouts_survive(home: Path, tmp_path: Path, text: str) -> None:
    config = tmp_path / "settings.json"
    config.write_text(text, encoding="utf-8")
    proc = install(home, "zed", str(WEATHER), "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    after = config.read_text(encoding="utf-8")
    assert load(config) == {**jsonc_loads(text), "context_servers": {"weather": STDIO}}
    for comment in ("/* why */", "// why", "/* a comment\n     on two lines */"):
        assert (comment in text) == (comment in after)
    if "\t" in text:
        assert '\t"context_servers": {\n\t\t"weather": {\n\t\t\t"command"' in after  # the file's own indent


GOOSE_ENTRY = {"type": "stdio", "name": "weather", **GOOSE_COMMON, "cmd": sys.executable, "args": RUN_WEATHER}


@pytest.mark.parametrize(
    "text",
    [
        "# mine\nGOOSE_MODE: auto\n",  # no extensions yet
        "# mine\nextensions: {}\nGOOSE_MODE: auto  # keep\n",  # an empty flow mapping
        "# mine\nextensions:\nGOOSE_MODE: auto\n",  # an empty block
        "---\nextensions:  # mine\n    fetch:\n        cmd: uvx\n        enabled: true\n# after\nGOOSE_MODE: auto",
        "extensions:\n  weather:\n    cmd: old\n    enabled: false\n  # about fetch\n  fetch:\n    cmd: uvx\n",
    ],
)
def test_goose_yaml_layouts_survive(home: Path, tmp_path: Path, text: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(text)
    proc = install(home, "goose", str(WEATHER), "--config", str(config), "--force")
    assert proc.returncode == 0, proc.stderr
    before = yaml.safe_load(text)
    assert load(config) == {
        **before,
        "extensions": {**(before.get("extensions") or {}), "weather": GOOSE_ENTRY},
    }
    after = config.read_text()
    for line in text.splitlines():
        if "#" in line:
            assert line in after
    if "# about fetch" in text:  # the entry after the replaced one keeps its comment, and its place
        assert after.index("weather:") < after.index("# about fetch") < after.index("fetch:")


#: --header arguments a host's config must never get: a line break would split the header in two
#: when the host sends it (a header of the caller's choosing, or a request of its own).
INJECTED = {
    "crlf-in-value": ("Authorization: Bearer t0k\r\nX-Injected: 1", "holds a CR"),
    "lf-in-value": ("Authorization: Bearer t0k\nX-Injected: 1", "holds an LF"),
    "trailing-crlf": ("X-Region: eu\r\n", "holds a CR"),
    "cr-before-the-name": ("\r\nX-Injected: 1", "holds a CR"),
    "escape-in-value": ("X-Region: e\x1b[2Ju", "holds the control character U+001B"),
    "control-in-name": ("X-Re\x01gion: eu", "holds the control character U+0001"),
}


@pytest.mark.parametrize("case", sorted(INJECTED))
def test_a_header_with_a_line_break_or_control_character_is_refused_and_nothing_written(
    home: Path, tmp_path: Path, case: str
) -> None:
    header, said = INJECTED[case]
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {}}\n')
    proc = install(home, "cursor", URL, "--name", "remote", "--header", header, "--config", str(config))
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1 and said in proc.stderr, proc.stderr  # one line, naming it
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr  # shown escaped, not sent to the terminal
    assert config.read_text() == '{"mcpServers": {}}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "mcp.json"]  # no backup either
    assert not any(home.rglob("*"))  # and no host's usual file


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_no_host_gets_a_header_with_a_line_break(case: Case, home: Path) -> None:
    proc = install(home, case.host, URL, "--header", "A: b\r\nC: d")
    assert proc.returncode == 2 and "holds a CR" in proc.stderr
    assert not any(home.rglob("*"))


def test_a_nul_in_a_header_is_refused_too() -> None:
    # An argv cannot hold a NUL, so this one is checked on the function the command calls.
    from mcpkit.cli._exits import CliError
    from mcpkit.cli._hosts._launch import remote

    with pytest.raises(CliError, match="holds a NUL"):
        remote(URL, None, ["X-Region: e\x00u"])
    assert remote(URL, None, ["X-Region:\teu"]).headers == {"X-Region": "eu"}  # a tab is allowed
