"""A host's configuration, read from any host application's file: which servers, and the rules.

:func:`load_config` reads a file in the dialect of the host that wrote it (detected from its shape,
or named): ``mcpServers`` JSON (Claude Desktop, Claude Code, Cursor, Windsurf), VS Code's
``mcp.json`` (``servers`` and ``inputs``, JSONC), Zed's ``context_servers`` and Goose's YAML
``extensions`` (:mod:`._dialects` holds one reader each). What every host file lacks (consent rules,
rate limits, the audit log, renames, roots) lives in an ``mcpkit`` section that the hosts themselves
ignore (docs/host.md shows one).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from .. import _naming as naming
from . import _dialects
from ._read import ConfigError, Node, loads_jsonc
from .model import DEFAULT_REDACT, AuditConfig, HostConfig, ServerConfig
from .policy import parse_policy

__all__ = [
    "DIALECTS",
    "AuditConfig",
    "ConfigError",
    "HostConfig",
    "ServerConfig",
    "detect_dialect",
    "load_config",
    "parse_config",
]

#: The dialects :func:`parse_config` reads.
DIALECTS: Final = tuple(_dialects.READERS)


def detect_dialect(document: Any, filename: str = "") -> str:
    """The dialect of a parsed document: YAML files are Goose's; otherwise the servers' key decides."""
    if filename.endswith((".yaml", ".yml")):
        return "goose"
    if isinstance(document, dict):
        if "context_servers" in document:
            return "zed"
        if "servers" in document or "inputs" in document:
            return "vscode"
        if "extensions" in document and "mcpServers" not in document:
            return "goose"
    return "mcpServers"


def load_config(
    path: str | os.PathLike[str],
    *,
    dialect: str | None = None,
    env: Mapping[str, str] | None = None,
    inputs: dict[str, str] | None = None,
    ask_input: Callable[[str, str, bool], str | None] | None = None,
    workspace: str | None = None,
) -> HostConfig:
    """Read a host config file (see :func:`parse_config` for the arguments).

    Raises:
        ConfigError: the file is missing, unreadable, not JSON/YAML, or wrong somewhere (the message
            names the key path and what was expected).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", source=str(file)) from None
    if file.suffix in (".yaml", ".yml"):
        from .._yaml import load

        try:
            document = load(text) or {}
        except ValueError as exc:
            raise ConfigError(f"not valid YAML: {exc}", source=str(file)) from None
    else:
        document = loads_jsonc(text, str(file))
    return parse_config(
        document,
        dialect=dialect or detect_dialect(document, file.name),
        source=str(file),
        env=env,
        inputs=inputs,
        ask_input=ask_input,
        workspace=workspace or str(file.resolve().parent),
        base=file.resolve().parent,
    )


def parse_config(
    document: Any,
    *,
    dialect: str = "mcpServers",
    source: str = "",
    env: Mapping[str, str] | None = None,
    inputs: dict[str, str] | None = None,
    ask_input: Callable[[str, str, bool], str | None] | None = None,
    workspace: str | None = None,
    base: Path | None = None,
) -> HostConfig:
    """A parsed document in *dialect* as a :class:`HostConfig`.

    Args:
        env: the variables references expand from (default: ``os.environ``).
        inputs: answers to VS Code ``${input:id}`` references.
        ask_input: ``fn(id, description, password) -> str | None`` for an input not in *inputs*
            (the CLI prompts the user); asked once per input, when first referenced.
        workspace: ``${workspaceFolder}`` (default: the config file's folder).
        base: the folder relative paths (``envFile``, the audit log) are read from.
    """
    if dialect not in DIALECTS:
        raise ConfigError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    root = Node(document, "", source)
    root.object()
    context = _dialects.Context(
        env=dict(os.environ if env is None else env),
        inputs=dict(inputs or {}),
        ask_input=ask_input,
        workspace=workspace or os.getcwd(),
        base=base or Path.cwd(),
    )
    servers, skipped = _dialects.READERS[dialect](root, context)
    by_key: dict[str, ServerConfig] = {}
    for server in servers:
        if server.key in by_key:
            raise ConfigError(
                f"servers {by_key[server.key].name!r} and {server.name!r} both become the key {server.key!r};"
                " rename one",
                source=source,
            )
        by_key[server.key] = server
    config = HostConfig(by_key, dialect=dialect, skipped=skipped, source=source)
    extra = root.get("mcpkit")
    if extra is not None:
        _read_extra(extra, config, context.base)
    return config


def _read_extra(node: Node, config: HostConfig, base: Path) -> None:
    known = {"policy", "rateLimits", "audit", "rename", "roots"}
    for key, child in node.items():
        if key not in known:
            raise child.error(f"unknown setting; expected one of {', '.join(sorted(known))}")
    config.policy = parse_policy(node.get("policy"), node.get("rateLimits"))
    if (audit := node.get("audit")) is not None:
        path = audit.child("path")
        redact = audit.get("redact")
        config.audit = AuditConfig(
            base / Path(os.path.expanduser(path.string())),
            tuple(redact.strings()) if redact is not None else DEFAULT_REDACT,
        )
    if (rename := node.get("rename")) is not None:
        for old, new in rename.string_map().items():
            if not naming.valid_tool_name(new):
                raise rename.child(old).error(
                    f"{new!r} is not a valid tool name (1-128 of A-Z a-z 0-9 _ - .)"
                )
            config.rename[old] = new
    if (roots := node.get("roots")) is not None:
        config.roots = roots.strings()
