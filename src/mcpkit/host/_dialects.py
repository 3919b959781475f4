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


@dataclass
class Context:
    """What expansion needs: the environment, VS Code's inputs, the folders."""

    env: dict[str, str]
    inputs: dict[str, str]
    ask_input: Callable[[str, str, bool], str | None] | None
    workspace: str
    base: Path
    declared_inputs: dict[str, tuple[str, bool]] = field(
        default_factory=dict
    )  # id -> (description, password)

    def expander(self, *, shell_style: bool, env_prefix: bool, inputs: bool = False) -> Expander:
        ask = None
        if inputs and self.ask_input is not None:
            ask_input = self.ask_input

            def ask(input_id: str) -> str | None:
                if input_id not in self.declared_inputs:
                    return None  # an undeclared input: no prompt, an error naming it
                description, password = self.declared_inputs[input_id]
                return ask_input(input_id, description, password)

        return Expander(
            self.env,
            shell_style=shell_style,
            env_prefix=env_prefix,
            inputs=self.inputs if inputs else {},
            ask_input=ask,
            inputs_allowed=inputs,
            builtins={
                "userHome": str(Path(self.env.get("HOME", str(Path.home())))),
                "workspaceFolder": self.workspace,
            },
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


def _expanded_map(node: Node, expander: Expander | None) -> dict[str, str]:
    """An object of strings (numbers and booleans written as JSON would), each one expanded."""
    values = node.string_map()  # type errors first, with their paths
    return {
        key: _expanded(Node(values[key], child.path, child.source), expander) for key, child in node.items()
    }


_DOTENV_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _env_file(node: Node, expander: Expander | None, base: Path) -> dict[str, str]:
    """A dotenv file's variables (``KEY=VALUE`` lines, ``export``, quotes, ``#`` comments)."""
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


_TYPES: Final[dict[str, Transport]] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}


def _filters(entry: Node) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Tool allow and deny globs: mcpkit's ``tools: {allow, deny}``, or ``includeTools`` /
    ``excludeTools`` as some hosts spell them, or Goose's ``available_tools``."""
    allow: list[str] = []
    deny: list[str] = []
    if (tools := entry.get("tools")) is not None:
        for key, child in tools.items():
            if key not in ("allow", "deny"):
                raise child.error("unknown tool filter; expected 'allow' or 'deny'")
        allow += tools.get("allow").strings() if tools.get("allow") else []  # type: ignore[union-attr]
        deny += tools.get("deny").strings() if tools.get("deny") else []  # type: ignore[union-attr]
    for key, target in (("includeTools", allow), ("available_tools", allow), ("excludeTools", deny)):
        if (node := entry.get(key)) is not None:
            target += node.strings()
    return tuple(allow), tuple(deny)


def _limits(entry: Node) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if (timeout := entry.get("timeout")) is not None:
        found["timeout"] = timeout.number()
    if (limit := entry.get("maxConcurrency")) is not None:
        if not isinstance(limit.value, int) or isinstance(limit.value, bool) or limit.value < 1:
            raise limit.expected("a positive whole number")
        found["max_concurrency"] = limit.value
    if (sessions := entry.get("maxSessions")) is not None:
        if not isinstance(sessions.value, int) or isinstance(sessions.value, bool) or sessions.value < 1:
            raise sessions.expected("a positive whole number")
        found["max_sessions"] = sessions.value
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


def _key(name: str, node: Node) -> str:
    key = naming.normalise_key(name)
    if not re.search(r"[A-Za-z0-9]", key):
        raise node.error("a server name needs at least one letter or digit")
    return key


def _json_entry(name: str, entry: Node, expander: Expander | None, context: Context) -> ServerConfig:
    """An entry of the JSON dialects: ``command``/``args``/``env`` or ``url``/``headers``."""
    entry.object()
    typed = entry.get("type")
    url_node = entry.get("url") or entry.get("serverUrl")  # serverUrl: Windsurf's
    command = entry.get("command")
    if typed is not None:
        kind = typed.choice(*_TYPES)
        transport = _TYPES[kind]
    elif url_node is not None and command is None:
        transport = "http"
    else:
        transport = "stdio"
    env: dict[str, str] = {}
    if (env_file := entry.get("envFile")) is not None:
        env.update(_env_file(env_file, expander, context.base))
    if (env_node := entry.get("env")) is not None:
        env.update(_expanded_map(env_node, expander))
    common: dict[str, Any] = {"enabled": _enabled(entry), **_limits(entry)}
    common["allow_tools"], common["deny_tools"] = _filters(entry)
    if transport == "stdio":
        if command is None:
            raise entry.error("expected 'command' (or 'url' for a remote server)")
        if isinstance(command.value, dict):  # Zed's older {"command": {"path", "args", "env"}}
            path = command.child("path")
            argv = [_expanded(path, expander)]
            if (args := command.get("args")) is not None:
                argv += [_expanded(args.child(i), expander) for i in range(len(args.strings()))]
            if (more := command.get("env")) is not None:
                env.update(_expanded_map(more, expander))
        else:
            argv = [_expanded(command, expander)]
        if (args := entry.get("args")) is not None:
            argv += [_expanded(args.child(i), expander) for i in range(len(args.strings()))]
        cwd = entry.get("cwd")
        return ServerConfig(
            _key(name, entry),
            name,
            "stdio",
            command=tuple(argv),
            env=env,
            cwd=_expanded(cwd, expander) if cwd is not None else None,
            **common,
        )
    if url_node is None:
        raise entry.error(f"expected 'url' for a server of type {transport!r}")
    url = _expanded(url_node, expander)
    if not url.startswith(("http://", "https://")):
        raise url_node.error(f"expected an http:// or https:// URL, got {url!r}")
    headers = _expanded_map(entry.child("headers"), expander) if entry.get("headers") else {}
    return ServerConfig(_key(name, entry), name, transport, url=url, headers=headers, env=env, **common)


def _servers_object(root: Node, key: str) -> Node | None:
    node = root.get(key)
    if node is not None:
        node.object()
    return node


def read_mcp_servers(root: Node, context: Context) -> tuple[list[ServerConfig], dict[str, str]]:
    """Claude Desktop, Claude Code (``.mcp.json``), Cursor, Windsurf: ``mcpServers``."""
    expander = context.expander(shell_style=True, env_prefix=True)
    servers = _servers_object(root, "mcpServers")
    if servers is None:
        raise root.error("expected an 'mcpServers' object")
    return [_json_entry(name, entry, expander, context) for name, entry in servers.items()], {}


def read_vscode(root: Node, context: Context) -> tuple[list[ServerConfig], dict[str, str]]:
    """VS Code's ``mcp.json``: ``servers``, and ``inputs`` that ``${input:id}`` refers to."""
    if (inputs := root.get("inputs")) is not None:
        if not isinstance(inputs.value, list):
            raise inputs.expected("a list of inputs")
        for index in range(len(inputs.value)):
            item = inputs.child(index)
            item.child("type").choice("promptString", "pickString")
            description = item.get("description")
            password = item.get("password")
            context.declared_inputs[item.child("id").string()] = (
                description.string() if description else "",
                password.boolean() if password else False,
            )
    expander = context.expander(shell_style=False, env_prefix=True, inputs=True)
    servers = _servers_object(root, "servers")
    if servers is None:
        raise root.error("expected a 'servers' object")
    return [_json_entry(name, entry, expander, context) for name, entry in servers.items()], {}


def read_zed(root: Node, context: Context) -> tuple[list[ServerConfig], dict[str, str]]:
    """Zed's settings: ``context_servers`` (no variable references: Zed expands none)."""
    servers = _servers_object(root, "context_servers")
    if servers is None:
        raise root.error("expected a 'context_servers' object")
    found, skipped = [], {}
    for name, entry in servers.items():
        if entry.get("command") is None and entry.get("url") is None:
            skipped[name] = "an extension-provided server (Zed starts it itself)"
            continue
        found.append(_json_entry(name, entry, None, context))
    return found, skipped


def read_goose(root: Node, context: Context) -> tuple[list[ServerConfig], dict[str, str]]:
    """Goose's ``config.yaml``: ``extensions`` with ``cmd``, ``args``, ``envs``, ``env_keys``, ``enabled``."""
    extensions = _servers_object(root, "extensions")
    if extensions is None:
        raise root.error("expected an 'extensions' mapping")
    found, skipped = [], {}
    for key, entry in extensions.items():
        kind = entry.child("type").string() if entry.get("type") else "stdio"
        if kind not in ("stdio", "sse", "streamable_http"):
            skipped[key] = f"a Goose {kind!r} extension (part of Goose, not an MCP server to start)"
            continue
        name_node = entry.get("name")
        name = name_node.string() if name_node else key
        env = _expanded_map(entry.child("envs"), None) if entry.get("envs") else {}
        if (env_keys := entry.get("env_keys")) is not None:
            for index, variable in enumerate(env_keys.strings()):
                if variable not in context.env:
                    raise env_keys.child(index).error(
                        f"environment variable {variable} is not set (Goose reads it from its keyring)"
                    )
                env[variable] = context.env[variable]
        common: dict[str, Any] = {"enabled": _enabled(entry), **_limits(entry)}
        common["allow_tools"], common["deny_tools"] = _filters(entry)
        if kind == "stdio":
            argv = [_expanded(entry.child("cmd"), None)]
            if (args := entry.get("args")) is not None:
                argv += [_expanded(args.child(i), None) for i in range(len(args.strings()))]
            found.append(
                ServerConfig(_key(key, entry), name, "stdio", command=tuple(argv), env=env, **common)
            )
            continue
        uri = entry.child("uri")
        url = _expanded(uri, None)
        if not url.startswith(("http://", "https://")):
            raise uri.error(f"expected an http:// or https:// URL, got {url!r}")
        headers = _expanded_map(entry.child("headers"), None) if entry.get("headers") else {}
        transport: Transport = "sse" if kind == "sse" else "http"
        found.append(
            ServerConfig(_key(key, entry), name, transport, url=url, headers=headers, env=env, **common)
        )
    return found, skipped


READERS: Final[dict[str, Callable[[Node, Context], tuple[list[ServerConfig], dict[str, str]]]]] = {
    "mcpServers": read_mcp_servers,
    "vscode": read_vscode,
    "zed": read_zed,
    "goose": read_goose,
}
