"""The hosts ``mcpkit install`` knows: where each keeps its MCP servers, and the entry it expects.

Each :class:`Host` is data plus three small functions (its file, the keys leading to its servers
object, its entry for a :class:`~._launch.Launch`). The formats and locations are the ones each
host documents; ``docs/install.md`` lists them with their sources.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._files import app_config_dir, home, xdg_config_home
from ._launch import Launch

__all__ = ["HOSTS", "Host"]


@dataclass(frozen=True)
class Host:
    """One host application's MCP configuration."""

    title: str
    docs: str
    scopes: tuple[str, ...]  # the first is the default
    file: Callable[[str, Path], Path]  # (scope, project folder) -> the config file
    section: Callable[[str, Path], tuple[str, ...]]  # (scope, project folder) -> keys to the servers
    entry: Callable[[Launch], dict[str, Any]]
    yaml: bool = False
    key: Callable[[str], str] = str  # the server's name as a key of the servers object


def _command(launch: Launch, typed: str | None = None) -> dict[str, Any]:
    """The usual stdio entry (``{"type": typed}`` first when the host wants one); ``env`` only if set."""
    entry: dict[str, Any] = {"type": typed} if typed else {}
    entry |= {"command": launch.command, "args": launch.args}
    return entry | ({"env": launch.env} if launch.env else {})


def _remote(launch: Launch, url_key: str, **first: str) -> dict[str, Any]:
    """The usual remote entry: *first* (a ``type``), the URL under *url_key*, ``headers`` if any."""
    entry: dict[str, Any] = {**first, url_key: launch.url}
    return entry | ({"headers": launch.headers} if launch.headers else {})


def _claude_desktop(launch: Launch) -> dict[str, Any]:
    if launch.url is None:
        return _command(launch)
    # Claude Desktop's config file starts stdio servers only (remote ones are added as connectors in
    # its settings), so a URL is reached through the mcp-remote bridge, run by npx.
    headers = [arg for name, value in launch.headers.items() for arg in ("--header", f"{name}:{value}")]
    return {"command": shutil.which("npx") or "npx", "args": ["-y", "mcp-remote", launch.url, *headers]}


def _claude_json() -> Path:
    """Claude Code's own state file, which holds its user- and local-scope servers."""
    folder = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(folder) / ".claude.json" if folder else home() / ".claude.json"


def _zed_dir() -> Path:
    if sys.platform == "darwin":
        return home() / ".config" / "zed"
    if sys.platform == "win32":
        return app_config_dir("Zed")
    return xdg_config_home() / "zed"


def _goose_file() -> Path:
    if sys.platform == "win32":
        return app_config_dir("Block") / "goose" / "config" / "config.yaml"
    return xdg_config_home() / "goose" / "config.yaml"


def _goose_key(name: str) -> str:
    """Goose's key for an extension name: no whitespace, other punctuation as ``_``, lower case."""
    return re.sub(r"[^a-z0-9_-]", "_", re.sub(r"\s", "", name.lower()))


def _goose(launch: Launch) -> dict[str, Any]:
    common = {"enabled": True, "name": launch.name, "description": "", "timeout": 300}
    if launch.url is None:
        return {"type": "stdio", **common, "cmd": launch.command, "args": launch.args,
                "envs": launch.env, "env_keys": []}  # fmt: skip
    return {"type": "streamable_http", **common, "uri": launch.url, "headers": launch.headers, "envs": {},
            "env_keys": []}  # fmt: skip


def _servers(scope: str, project: Path) -> tuple[str, ...]:
    return ("mcpServers",)


HOSTS: dict[str, Host] = {
    "claude-desktop": Host(
        "Claude Desktop",
        "https://modelcontextprotocol.io/quickstart/user",
        ("user",),
        lambda scope, project: app_config_dir("Claude") / "claude_desktop_config.json",
        _servers,
        _claude_desktop,
    ),
    "claude-code": Host(
        "Claude Code",
        "https://code.claude.com/docs/en/mcp",
        ("user", "project", "local"),
        lambda scope, project: project / ".mcp.json" if scope == "project" else _claude_json(),
        lambda scope, project: (
            ("projects", str(project), "mcpServers") if scope == "local" else ("mcpServers",)
        ),
        lambda launch: (
            _command(launch, "stdio") if launch.url is None else _remote(launch, "url", type="http")
        ),
    ),
    "cursor": Host(
        "Cursor",
        "https://cursor.com/docs/mcp",
        ("user", "project"),
        lambda scope, project: (project if scope == "project" else home()) / ".cursor" / "mcp.json",
        _servers,
        lambda launch: _command(launch) if launch.url is None else _remote(launch, "url"),
    ),
    "vscode": Host(
        "VS Code",
        "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
        ("user", "project"),
        lambda scope, project: (
            project / ".vscode" / "mcp.json"
            if scope == "project"
            else app_config_dir("Code") / "User" / "mcp.json"
        ),
        lambda scope, project: ("servers",),
        lambda launch: (
            _command(launch, "stdio") if launch.url is None else _remote(launch, "url", type="http")
        ),
    ),
    "windsurf": Host(
        "Windsurf",
        "https://docs.windsurf.com/windsurf/cascade/mcp",
        ("user",),
        lambda scope, project: home() / ".codeium" / "windsurf" / "mcp_config.json",
        _servers,
        lambda launch: _command(launch) if launch.url is None else _remote(launch, "serverUrl"),
    ),
    "zed": Host(
        "Zed",
        "https://zed.dev/docs/ai/mcp",
        ("user", "project"),
        lambda scope, project: (project / ".zed" if scope == "project" else _zed_dir()) / "settings.json",
        lambda scope, project: ("context_servers",),
        lambda launch: _command(launch) if launch.url is None else _remote(launch, "url"),
    ),
    "goose": Host(
        "Goose",
        "https://block.github.io/goose/docs/guides/config-files",
        ("user",),
        lambda scope, project: _goose_file(),
        lambda scope, project: ("extensions",),
        _goose,
        yaml=True,
        key=_goose_key,
    ),
}
