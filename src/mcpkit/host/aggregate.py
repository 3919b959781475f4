"""The host's tables: every server's tools, prompts, resources and templates under the host's names.

Rebuilt from the servers' current lists whenever one of them changes (a connection made or lost, a
``list_changed``): cheap next to the listing itself, and simpler than patching. Names follow
:mod:`.naming`; the config's ``rename`` map applies after; a name taken twice keeps its first holder
(config order) and the other is left out, with a warning in :attr:`Tables.conflicts`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .. import _naming as naming
from .._uritemplate import UriTemplate
from ..types import Prompt, Resource, ResourceTemplate, Tool
from .model import ServerConfig

__all__ = ["Routed", "Tables", "build", "tool_allowed"]


@dataclass(frozen=True)
class Routed:
    """Where an exposed name leads: the server's key and its own name for the item."""

    server: str
    name: str


@dataclass
class Tables:
    tools: dict[str, tuple[Routed, Tool]] = field(default_factory=dict)
    prompts: dict[str, tuple[Routed, Prompt]] = field(default_factory=dict)
    resources: dict[str, tuple[str, Resource]] = field(default_factory=dict)  # uri -> (server, resource)
    templates: list[tuple[str, ResourceTemplate, UriTemplate | None]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def server_for_uri(self, uri: str) -> str | None:
        """The server of a listed URI, else of the first template (config order) the URI expands."""
        listed = self.resources.get(uri)
        if listed is not None:
            return listed[0]
        for server, _, compiled in self.templates:
            if compiled is not None and compiled.match(uri) is not None:
                return server
        return None


def tool_allowed(config: ServerConfig, name: str) -> bool:
    """The config's per-server filter: an allow glob (when there are any) and no deny glob."""
    if config.allow_tools and not any(fnmatch.fnmatchcase(name, g) for g in config.allow_tools):
        return False
    return not any(fnmatch.fnmatchcase(name, g) for g in config.deny_tools)


def build(
    servers: Iterable[tuple[ServerConfig, Any]], rename: dict[str, str], *, prefixed: bool = True
) -> Tables:
    """The tables for *servers* (config order; each with an object holding ``tools``, ``prompts``,
    ``resources``, ``templates`` lists); without *prefixed*, tools and prompts keep their own names
    (a proxy of one server)."""
    tables = Tables()
    for config, lists in servers:
        key = config.key
        for tool in lists.tools:
            if not tool_allowed(config, tool.name):
                continue
            exposed = _name(key, tool.name, rename, prefixed)
            if exposed in tables.tools:
                tables.conflicts.append(f"tool {exposed!r} of {key!r} left out: the name is taken")
                continue
            tables.tools[exposed] = (Routed(key, tool.name), msgspec.structs.replace(tool, name=exposed))
        for prompt in lists.prompts:
            exposed = _name(key, prompt.name, rename, prefixed)
            if exposed in tables.prompts:
                tables.conflicts.append(f"prompt {exposed!r} of {key!r} left out: the name is taken")
                continue
            tables.prompts[exposed] = (
                Routed(key, prompt.name),
                msgspec.structs.replace(prompt, name=exposed),
            )
        for resource in lists.resources:
            holder = tables.resources.get(resource.uri)
            if holder is not None:
                tables.conflicts.append(
                    f"resource {resource.uri!r} of {key!r} left out: {holder[0]!r} has it"
                )
                continue
            tables.resources[resource.uri] = (key, resource)
        for template in lists.templates:
            try:
                compiled: UriTemplate | None = UriTemplate(template.uri_template)
            except ValueError:
                compiled = None  # listed, but reads of it are routed by exact match only
            tables.templates.append((key, template, compiled))
    return tables


def _name(key: str, name: str, rename: dict[str, str], prefixed: bool) -> str:
    exposed = naming.exposed_name(key, name) if prefixed else name
    return rename.get(exposed, exposed)
