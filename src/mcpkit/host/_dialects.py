"""One reader per config dialect: each turns its host's entries into :class:`.config.ServerConfig`.

The dialects differ in where the servers are, what their fields are called and which variable
references they expand (:mod:`._expand`); everything after that is shared. Fields a reader does not
know are left alone (hosts keep their own there: ``autoApprove``, ``alwaysAllow``...), but a known
field of the wrong type is an error with its key path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .. import _naming as naming
from ._expand import Expander
from ._read import Node
from .model import ServerConfig, Transport

__all__ = ["READERS", "Context"]

#: What a reader finds: the servers, and the entries it cannot run with the reason.
Found = tuple[list[ServerConfig], dict[str, str]]


@dataclass
class Context:
    """What expansion needs: the environment, VS Code's inputs, the folders."""

    env: dict[str, str]
    inputs: dict[str, str]
    ask_input: Callable[[str, str, bool], str | None] | None
    workspace: str
    base: Path
    #: VS Code's declared inputs: id -> (description, password).
    declared_inputs: dict[str, tuple[str, bool]] = field(default_factory=dict)

    def expander(self, *, shell_style: bool, env_prefix: bool, inputs: bool = False) -> Expander:
        home = str(Path(self.env.get("HOME", str(Path.home()))))
        return Expander(
            self.env,
            shell_style=shell_style,
            env_prefix=env_prefix,
            inputs=self.inputs if inputs else None,
            declared=self.declared_inputs,
            ask_input=self.ask_input,
            builtins={"userHome": home, "workspaceFolder": self.workspace},
        )


def _expanded(node: Node, expander: Expander | None) -> str:
    text = node.string()
    if expander is None:
        if "${" in text:
            raise node.error(f"this dialect expands no variables, but {text!r} holds a reference")
        return text
    try:
        return expander.expand(text)
    except ValueError as exc:  # UnsetVariable included: the message names the variable
        raise node.error(str(exc)) from None


def _expanded_list(node: Node | None, expander: Expander | None) -> list[str]:
    """A list of strings, each one expanded (none when *node* is absent)."""
    return [] if node is None else [_expanded(item, expander) for item in node.elements("a list of strings")]


def _expanded_map(node: Node | None, expander: Expander | None) -> dict[str, str]:
    """An object of strings (numbers and booleans written as JSON would), each one expanded (none
    when *node* is absent)."""
    if node is None:
        return {}
    values = node.string_map()  # type errors first, with their paths
    return {
        key: _expanded(Node(values[key], child.path, child.source), expander) for key, child in node.items()
    }


def _url(node: Node, expander: Expander | None) -> str:
    url = _expanded(node, expander)
    if not url.startswith(("http://", "https://")):
        raise node.error(f"expected an http:// or https:// URL, got {url!r}")
    return url


def _string(entry: Node, key: str, default: str) -> str:
    node = entry.get(key)
    return default if node is None else node.string()


_DOTENV_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _env_file(node: Node | None, expander: Expander | None, base: Path) -> dict[str, str]:
    """A dotenv file's variables (``KEY=VALUE`` lines, ``export``, quotes, ``#`` comments)."""
    if node is None:
        return {}
    path = base / Path(_expanded(node, expander)).expanduser()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise node.error(f"cannot read the env file {str(path)!r}: {exc.strerror}") from None
    env: dict[str, str] = {}
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _DOTENV_KEY.fullmatch(key):
            raise node.error(f"{path}, line {number}: expected KEY=VALUE")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[key] = value
    return env


#: Every ``type`` a dialect writes, to the transport it means (Goose's ``streamable_http`` too).
_TYPES: Final[dict[str, Transport]] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}


def _filters(entry: Node) -> dict[str, tuple[str, ...]]:
    """Tool allow and deny globs: mcpkit's ``tools: {allow, deny}``, or ``includeTools`` /
    ``excludeTools`` as some hosts spell them, or Goose's ``available_tools``."""
    allow: list[str] = []
    deny: list[str] = []
    if (tools := entry.get("tools")) is not None:
        for key, child in tools.items():
            if key not in ("allow", "deny"):
                raise child.error("unknown tool filter; expected 'allow' or 'deny'")
            if child.value is not None:  # null is absent, as everywhere in the file
                (allow if key == "allow" else deny).extend(child.strings())
    for key, target in (("includeTools", allow), ("available_tools", allow), ("excludeTools", deny)):
        if (node := entry.get(key)) is not None:
            target += node.strings()
    return {"allow_tools": tuple(allow), "deny_tools": tuple(deny)}


def _limits(entry: Node) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if (timeout := entry.get("timeout")) is not None:
        found["timeout"] = timeout.number()
    if (limit := entry.get("maxConcurrency")) is not None:
        found["max_concurrency"] = limit.count()
    if (sessions := entry.get("maxSessions")) is not None:
        found["max_sessions"] = sessions.count()
    if (idle := entry.get("sessionIdleTimeout")) is not None:
        found["session_idle_timeout"] = idle.number()
    if (interval := entry.get("refreshInterval")) is not None:
        # false (or 0) turns re-listing on a timer off
        off = interval.value is False or (interval.value == 0 and not isinstance(interval.value, bool))
        found["refresh_interval"] = None if off else interval.number()
    if (version := entry.get("protocolVersion")) is not None:
        from .._versions import SUPPORTED_VERSIONS

        found["protocol_version"] = version.choice(*SUPPORTED_VERSIONS)
    return found


def _enabled(entry: Node) -> bool:
    if (disabled := entry.get("disabled")) is not None and disabled.boolean():
        return False
    return (enabled := entry.get("enabled")) is None or enabled.boolean()


def _common(entry: Node, key: str, name: str, env: dict[str, str]) -> dict[str, Any]:
    """The :class:`ServerConfig` fields that every dialect's entry gives alike: all but where the
    server is (*key* is the entry's, normalised here)."""
    normalised = naming.normalise_key(key)
    if not re.search(r"[A-Za-z0-9]", normalised):
        raise entry.error("a server name needs at least one letter or digit")
    common = {"key": normalised, "name": name, "env": env, "enabled": _enabled(entry)}
    return {**common, **_filters(entry), **_limits(entry)}


def _json_entry(name: str, entry: Node, expander: Expander | None, context: Context) -> ServerConfig:
    """An entry of the JSON dialects: ``command``/``args``/``env`` or ``url``/``headers``."""
    entry.object()
    typed = entry.get("type")
    url = entry.get("url") or entry.get("serverUrl")  # serverUrl: Windsurf's
    command = entry.get("command")
    if typed is not None:
        transport = _TYPES[typed.choice(*_TYPES)]
    elif url is not None and command is None:
        transport = "http"
    else:
        transport = "stdio"
    env = _env_file(entry.get("envFile"), expander, context.base)
    env.update(_expanded_map(entry.get("env"), expander))
    common = _common(entry, name, name, env)
    if transport == "stdio":
        if command is None:
            raise entry.error("expected 'command' (or 'url' for a remote server)")
        if isinstance(command.value, dict):  # Zed's older {"command": {"path", "args", "env"}}
            argv = [_expanded(command.child("path"), expander)]
            argv += _expanded_list(command.get("args"), expander)
            env.update(_expanded_map(command.get("env"), expander))
        else:
            argv = [_expanded(command, expander)]
        argv += _expanded_list(entry.get("args"), expander)
        cwd = entry.get("cwd")
        directory = _expanded(cwd, expander) if cwd is not None else None
        return ServerConfig(transport="stdio", command=tuple(argv), cwd=directory, **common)
    if url is None:
        raise entry.error(f"expected 'url' for a server of type {transport!r}")
    headers = _expanded_map(entry.get("headers"), expander)
    return ServerConfig(transport=transport, url=_url(url, expander), headers=headers, **common)


def _servers(root: Node, key: str, what: str) -> Node:
    """The object of servers at *key* (*what* names it in the error when it is missing)."""
    node = root.get(key)
    if node is None:
        raise root.error(f"expected {what}")
    node.object()
    return node


def read_mcp_servers(root: Node, context: Context) -> Found:
    """Claude Desktop, Claude Code (``.mcp.json``), Cursor, Windsurf: ``mcpServers``."""
    expander = context.expander(shell_style=True, env_prefix=True)
    servers = _servers(root, "mcpServers", "an 'mcpServers' object")
    return [_json_entry(name, entry, expander, context) for name, entry in servers.items()], {}


def read_vscode(root: Node, context: Context) -> Found:
    """VS Code's ``mcp.json``: ``servers``, and ``inputs`` that ``${input:id}`` refers to."""
    if (inputs := root.get("inputs")) is not None:
        for item in inputs.elements("a list of inputs"):
            item.child("type").choice("promptString", "pickString")
            password = item.get("password")
            context.declared_inputs[item.child("id").string()] = (
                _string(item, "description", ""),
                password.boolean() if password else False,
            )
    expander = context.expander(shell_style=False, env_prefix=True, inputs=True)
    servers = _servers(root, "servers", "a 'servers' object")
    return [_json_entry(name, entry, expander, context) for name, entry in servers.items()], {}


def read_zed(root: Node, context: Context) -> Found:
    """Zed's settings: ``context_servers`` (no variable references: Zed expands none)."""
    found, skipped = [], {}
    for name, entry in _servers(root, "context_servers", "a 'context_servers' object").items():
        if entry.get("command") is None and entry.get("url") is None:
            skipped[name] = "an extension-provided server (Zed starts it itself)"
            continue
        found.append(_json_entry(name, entry, None, context))
    return found, skipped


def read_goose(root: Node, context: Context) -> Found:
    """Goose's ``config.yaml``: ``extensions`` with ``cmd``, ``args``, ``envs``, ``env_keys``, ``enabled``."""
    found, skipped = [], {}
    for key, entry in _servers(root, "extensions", "an 'extensions' mapping").items():
        kind = _string(entry, "type", "stdio")
        if kind not in ("stdio", "sse", "streamable_http"):
            skipped[key] = f"a Goose {kind!r} extension (part of Goose, not an MCP server to start)"
            continue
        env = _expanded_map(entry.get("envs"), None)
        if (env_keys := entry.get("env_keys")) is not None:
            for variable in env_keys.elements("a list of strings"):
                if variable.string() not in context.env:
                    raise variable.error(
                        f"environment variable {variable.value} is not set (Goose reads it from its keyring)"
                    )
                env[variable.value] = context.env[variable.value]
        common = _common(entry, key, _string(entry, "name", key), env)
        if kind == "stdio":
            argv = (_expanded(entry.child("cmd"), None), *_expanded_list(entry.get("args"), None))
            found.append(ServerConfig(transport="stdio", command=argv, **common))
        else:
            url, headers = _url(entry.child("uri"), None), _expanded_map(entry.get("headers"), None)
            found.append(ServerConfig(transport=_TYPES[kind], url=url, headers=headers, **common))
    return found, skipped


READERS: Final[dict[str, Callable[[Node, Context], Found]]] = {
    "mcpServers": read_mcp_servers,
    "vscode": read_vscode,
    "zed": read_zed,
    "goose": read_goose,
}
