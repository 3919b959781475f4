"""Host config files in every dialect: what each reads to, and how each mistake is reported."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.host import ConfigError, load_config, parse_config
from mcpkit.host._expand import Expander, UnsetVariable
from mcpkit.host.naming import exposed_name, normalise_key, split, valid_tool_name

FIXTURES = Path(__file__).parent / "fixtures"
ENV = {
    "HOME": "/home/ann",
    "API_KEY": "k-123",
    "TEAM": "blue",
    "TOKEN": "t0k",
    "DB_URL": "pg://db",
    "PROJECT": "p1",
}


def test_claude_code_dialect() -> None:
    config = load_config(FIXTURES / "claude_code.json", env=ENV)
    assert config.dialect == "mcpServers"
    assert list(config.servers) == ["weather", "remote-api", "old-sse", "filtered"]
    weather = config.servers["weather"]
    assert weather.transport == "stdio"
    assert weather.command == ("python", "/home/ann/weather.py", "--units=metric")  # ${UNITS:-metric}
    assert weather.env == {"API_KEY": "k-123"}
    remote = config.servers["remote-api"]
    assert (remote.transport, remote.url) == ("http", "https://api.example.com/blue/mcp")
    assert remote.headers == {"Authorization": "Bearer t0k"}
    assert remote.name == "remote api"
    assert config.servers["old-sse"].transport == "sse" and not config.servers["old-sse"].enabled
    filtered = config.servers["filtered"]
    assert (filtered.allow_tools, filtered.deny_tools) == (("read_*",), ("read_secret",))
    assert (filtered.timeout, filtered.max_concurrency, filtered.protocol_version) == (5.0, 2, "2025-06-18")
    assert config.policy.default == "deny"
    assert config.policy.decide("weather", "anything", {}) == ("allow", "rule 1")
    assert config.policy.decide("other", "rm", {}) == ("ask", "rule 2")  # destructive by default
    assert config.policy.decide("other", "look", {"readOnlyHint": True}) == ("deny", "default")
    assert config.audit is not None and config.audit.path == FIXTURES / "audit.jsonl"
    assert config.audit.redact == ("api_key",)
    assert config.rename == {"weather__get_weather": "weather"}


def test_cursor_and_windsurf_fields() -> None:
    config = load_config(FIXTURES / "cursor.json", env=ENV)
    db = config.servers["db"]
    assert db.command == ("npx", "-y", "db-mcp", f"{FIXTURES}/data")  # ${workspaceFolder}: the file's folder
    # envFile first, then env on top of it
    assert db.env == {"FROM_FILE": "yes", "QUOTED": "two words", "DB_URL": "pg://db"}
    remote = config.servers["windsurf-remote"]
    assert (remote.transport, remote.url) == ("http", "https://example.com/mcp")


def test_vscode_dialect_with_inputs_asked_once() -> None:
    asked: list[tuple[str, str, bool]] = []

    def ask(input_id: str, description: str, password: bool) -> str:
        asked.append((input_id, description, password))
        return "secret-value"

    config = load_config(FIXTURES / "vscode.json", env=ENV, ask_input=ask)
    assert config.dialect == "vscode"
    assert config.servers["github"].headers == {"Authorization": "Bearer secret-value"}
    assert asked == [("api-key", "Your API key", True)]
    assert config.servers["local"].command == ("uvx", "server", "p1")
    assert config.servers["local"].env["FROM_FILE"] == "yes"


def test_vscode_input_without_an_answer_is_an_error_naming_it() -> None:
    with pytest.raises(
        ConfigError, match=r"servers\.github\.headers\.Authorization: input api-key is not set"
    ):
        load_config(FIXTURES / "vscode.json", env=ENV)


def test_zed_dialect() -> None:
    config = load_config(FIXTURES / "zed.json", env=ENV)
    assert config.dialect == "zed"
    assert config.servers["new-style"].command == ("node", "server.js")
    assert config.servers["old-style"].command == ("python", "-m", "srv")
    assert config.servers["old-style"].env == {"B": "2"}
    assert not config.servers["remote"].enabled
    assert "from-extension" in config.skipped


def test_goose_dialect() -> None:
    config = load_config(FIXTURES / "goose.yaml", env={**ENV, "GITHUB_TOKEN": "gh"})
    assert config.dialect == "goose"
    github = config.servers["github"]
    assert github.name == "GitHub Tools"
    assert github.command == ("npx", "-y", "@modelcontextprotocol/server-github")
    assert github.env == {"LOG_LEVEL": "debug", "GITHUB_TOKEN": "gh"}
    assert config.servers["remote"].transport == "http" and not config.servers["remote"].enabled
    assert "developer" in config.skipped


def test_goose_env_key_unset() -> None:
    with pytest.raises(
        ConfigError, match=r"extensions\.github\.env_keys\[0\]: environment variable GITHUB_TOKEN"
    ):
        load_config(FIXTURES / "goose.yaml", env=ENV)


def test_pool_and_refresh_settings() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "a": {"command": "x"},
                "b": {"command": "x", "maxSessions": 2, "sessionIdleTimeout": 1.5, "refreshInterval": 10},
                "c": {"command": "x", "refreshInterval": False},
            }
        }
    )
    a, b, c = config.servers.values()
    assert (a.max_sessions, a.session_idle_timeout, a.refresh_interval) == (8, 300.0, 300.0)
    assert (b.max_sessions, b.session_idle_timeout, b.refresh_interval) == (2, 1.5, 10.0)
    assert c.refresh_interval is None


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"mcpServers": {"a": {"command": "x", "args": ["ok", 3]}}},
            r"mcpServers\.a\.args\[1\]: expected a string, got the number 3",
        ),
        ({"mcpServers": {"a": {"args": []}}}, r"mcpServers\.a: expected 'command'"),
        (
            {"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}},
            r"mcpServers\.a\.type: expected one of",
        ),
        (
            {"mcpServers": {"a": {"url": "ftp://x"}}},
            r"mcpServers\.a\.url: expected an http:// or https:// URL",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}}},
            r"mcpServers\.a\.env\.K: environment variable NOPE is not set",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "env": {"K": "${env:NOPE}"}}}},
            r"environment variable NOPE is not set",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "disabled": "yes"}}},
            r"mcpServers\.a\.disabled: expected true or false",
        ),
        ({"mcpServers": {"a b": {"command": "x"}, "a-b": {"command": "y"}}}, r"both become the key 'a-b'"),
        ({"mcpServers": {"!!": {"command": "x"}}}, r"mcpServers\.!!: a server name needs"),
        (
            {"mcpServers": {}, "mcpkit": {"policy": {"rules": [{"action": "maybe"}]}}},
            r"mcpkit\.policy\.rules\[0\]\.action: expected one of 'allow', 'deny', 'ask', got 'maybe'",
        ),
        (
            {
                "mcpServers": {},
                "mcpkit": {"policy": {"rules": [{"action": "allow", "annotations": {"fastHint": True}}]}},
            },
            r"rules\[0\]\.annotations\.fastHint: unknown annotation",
        ),
        (
            {"mcpServers": {}, "mcpkit": {"rateLimits": [{"rate": "fast"}]}},
            r"mcpkit\.rateLimits\[0\]\.rate: invalid rate limit",
        ),
        (
            {"mcpServers": {}, "mcpkit": {"rename": {"a__b": "no spaces"}}},
            r"mcpkit\.rename\.a__b: 'no spaces' is not a valid tool name",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "maxSessions": 0}}},
            r"mcpServers\.a\.maxSessions: expected a positive whole number",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "refreshInterval": "1m"}}},
            r"mcpServers\.a\.refreshInterval: expected a positive number",
        ),
        ({"mcpServers": {}, "mcpkit": {"colour": 1}}, r"mcpkit\.colour: unknown setting"),
        ({"servers": []}, r"servers: expected an object, got a list"),
        (
            {"context_servers": {"z": {"command": "x", "args": ["${HOME}"]}}},
            r"context_servers\.z\.args\[0\]: this dialect expands no variables",
        ),
    ],
)
def test_mistakes_name_their_key_path(document: dict[str, Any], message: str) -> None:
    dialect = "zed" if "context_servers" in document else "vscode" if "servers" in document else "mcpServers"
    with pytest.raises(ConfigError, match=message):
        parse_config(document, dialect=dialect, env={"HOME": "/h"}, source="")


def test_tool_filters_in_every_spelling_and_null_is_absent() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "a": {"command": "x", "tools": {"allow": ["r*"], "deny": None}, "includeTools": ["s"]},
                "b": {"command": "x", "tools": {"allow": None, "deny": ["d*"]}, "excludeTools": ["e"]},
            }
        }
    )
    a, b = config.servers.values()
    assert (a.allow_tools, a.deny_tools) == (("r*", "s"), ())
    assert (b.allow_tools, b.deny_tools) == ((), ("d*", "e"))


@pytest.mark.parametrize(
    ("document", "dialect", "message"),
    [
        (
            {"mcpServers": {"a": {"command": "x", "maxConcurrency": 2.5}}},
            "mcpServers",
            r"mcpServers\.a\.maxConcurrency: expected a positive whole number, got the number 2\.5",
        ),
        ({"inputs": {}, "servers": {}}, "vscode", r"^inputs: expected a list of inputs, got an object"),
        (
            {"extensions": {"g": {"cmd": "x", "env_keys": [3]}}},
            "goose",
            r"extensions\.g\.env_keys\[0\]: expected a string, got the number 3",
        ),
        (
            {"extensions": {"g": {"type": "sse", "uri": "ftp://x"}}},
            "goose",
            r"extensions\.g\.uri: expected an http",
        ),
        ({}, "goose", r"^expected an 'extensions' mapping"),
    ],
)
def test_shared_readers_name_the_key_path_in_every_dialect(
    document: dict[str, Any], dialect: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(document, dialect=dialect, env={})


def test_an_undeclared_vscode_input_is_never_asked_for() -> None:
    asked: list[str] = []

    def ask(input_id: str, description: str, password: bool) -> str:
        asked.append(input_id)
        return "x"

    document = {"servers": {"a": {"command": "x", "env": {"K": "${input:nobody-declared-it}"}}}}
    with pytest.raises(ConfigError, match=r"servers\.a\.env\.K: input nobody-declared-it is not set"):
        parse_config(document, dialect="vscode", env={}, ask_input=ask)
    assert asked == []


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {\n  "a": }\n}')
    with pytest.raises(ConfigError, match=r"bad\.json: not valid JSON: .* line 2"):
        load_config(bad)
    written = tmp_path / "ok.json"
    written.write_text(json.dumps({"mcpServers": {"w": {"command": "x"}}}))
    assert list(load_config(written).servers) == ["w"]


# -- variable expansion: properties ---------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
PLAIN = st.text(alphabet=string.ascii_letters + string.digits + " /:-_.{}", max_size=20).filter(
    lambda t: "${" not in t
)
VALUES = st.text(max_size=12)


@given(PLAIN)
def test_text_without_references_is_kept(text: str) -> None:
    assert Expander({}).expand(text) == text


@given(st.dictionaries(NAMES, VALUES, max_size=5), st.lists(st.tuples(PLAIN, NAMES), max_size=4), PLAIN)
def test_set_variables_are_substituted_in_both_syntaxes(
    env: dict[str, str], parts: list[tuple[str, str]], tail: str
) -> None:
    parts = [(text, name) for text, name in parts if name in env] or []
    shell = "".join(f"{text}${{{name}}}" for text, name in parts) + tail
    prefixed = "".join(f"{text}${{env:{name}}}" for text, name in parts) + tail
    wanted = "".join(text + env[name] for text, name in parts) + tail
    expander = Expander(env)
    assert expander.expand(shell) == wanted
    assert expander.expand(prefixed) == wanted


@given(NAMES, VALUES, PLAIN)
def test_default_applies_to_unset_or_empty_only(name: str, value: str, default: str) -> None:
    default = default.replace("}", "")
    reference = f"${{{name}:-{default}}}"
    assert Expander({}).expand(reference) == default
    assert Expander({name: ""}).expand(reference) == default
    expected = value if value else default
    assert Expander({name: value}).expand(reference) == expected


@given(NAMES, PLAIN, PLAIN)
def test_unset_variable_is_an_error_naming_it(name: str, before: str, after: str) -> None:
    for reference in (f"${{{name}}}", f"${{env:{name}}}"):
        with pytest.raises(UnsetVariable) as raised:
            Expander({}).expand(before + reference + after)
        assert name in str(raised.value)


@given(st.dictionaries(NAMES, VALUES.filter(lambda v: "${" not in v), max_size=4), NAMES)
def test_expansion_is_single_pass(env: dict[str, str], name: str) -> None:
    """A value that itself looks like a reference is not expanded again (no injection through values)."""
    env = {**env, name: "${OTHER}"}
    assert Expander(env).expand(f"${{{name}}}") == "${OTHER}"


def test_dialects_know_their_own_references() -> None:
    with pytest.raises(ValueError, match="unknown reference"):
        Expander({"A": "1"}, shell_style=False).expand("${A}")  # VS Code has no ${A}
    with pytest.raises(ValueError, match="unknown reference"):
        Expander({}).expand("${input:x}")  # only VS Code has inputs


# -- names -----------------------------------------------------------------------------------------

KEYS = st.text(min_size=1, max_size=40)
TOOLS = st.text(min_size=1, max_size=200)


@given(KEYS, TOOLS)
def test_exposed_names_are_valid_and_split_back(name: str, tool: str) -> None:
    key = normalise_key(name)
    if not key:
        return
    exposed = exposed_name(key, tool)
    assert valid_tool_name(exposed)
    assert "__" not in key and not key.endswith("_")
    back = split(exposed)
    assert back is not None and back[0] == key
    if valid_tool_name(f"{key}__{tool}"):
        assert back[1] == tool


@given(KEYS, st.lists(TOOLS, min_size=2, max_size=5, unique=True))
def test_exposed_names_are_distinct_for_distinct_tools(name: str, tools: list[str]) -> None:
    key = normalise_key(name) or "k"
    assert len({exposed_name(key, tool) for tool in tools}) == len(tools)
