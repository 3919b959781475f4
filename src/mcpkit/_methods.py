"""Every MCP method mcpkit knows, once: a row each, read by the server, the client and the transports.

What a method needs beyond its name used to be kept in seven tables in five modules, and two of them
drifted apart (the client's list of methods routed by ``Mcp-Name`` lacked the tasks methods). Each
fact now has one home here:

* ``feature``: the :data:`~mcpkit._versions.FEATURES` entry without which the method does not exist
  in a revision (-32601 there);
* ``capability``: the server capability the method belongs to (no capability, no method);
* ``mcp_name``: the params field mirrored into the ``Mcp-Name`` header in 2026-07-28
  ("MUST carry Mcp-Name" for tools, prompts, resources, and the tasks extension's task methods);
* ``multi_round``: may answer with an ``InputRequiredResult`` (2026-07-28 multi round-trip);
* ``cacheable``: a 2026-07-28 result carrying ``ttlMs`` / ``cacheScope``;
* ``before_init``: allowed in the handshake era before ``initialize`` completes.

Pure data, no I/O: every layer may import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "ALLOWED_BEFORE_INITIALIZED",
    "CACHEABLE_METHODS",
    "METHODS",
    "METHOD_FEATURES",
    "MRTR_METHODS",
    "Method",
    "capability_of",
    "feature_of",
    "mcp_name_field",
]


@dataclass(frozen=True, slots=True)
class Method:
    """What one client-to-server method needs (see the module docstring for each field)."""

    name: str
    feature: str | None = None
    capability: str | None = None
    mcp_name: str | None = None
    multi_round: bool = False
    cacheable: bool = False
    before_init: bool = False


#: Client-to-server requests, in the order the spec's pages present them.
METHODS: Final[dict[str, Method]] = {
    m.name: m
    for m in (
        Method("initialize"),
        Method("server/discover", cacheable=True),
        Method("ping", feature="ping", before_init=True),
        Method("logging/setLevel", feature="logging_set_level"),
        Method("tools/list", capability="tools", cacheable=True),
        Method("tools/call", capability="tools", mcp_name="name", multi_round=True),
        Method("resources/list", capability="resources", cacheable=True),
        Method("resources/templates/list", capability="resources", cacheable=True),
        Method("resources/read", capability="resources", mcp_name="uri", multi_round=True, cacheable=True),
        Method("resources/subscribe", feature="resource_subscribe"),
        Method("resources/unsubscribe", feature="resource_subscribe"),
        Method("prompts/list", capability="prompts", cacheable=True),
        Method("prompts/get", capability="prompts", mcp_name="name", multi_round=True),
        Method("completion/complete", feature="completions", capability="completions"),
        Method("subscriptions/listen", feature="subscriptions_listen"),
        Method("tasks/get", feature="tasks_any", mcp_name="taskId"),
        Method("tasks/cancel", feature="tasks_any", mcp_name="taskId"),
        Method("tasks/update", feature="tasks_extension", mcp_name="taskId"),
        Method("tasks/result", feature="tasks"),
        Method("tasks/list", feature="tasks"),
    )
}

_UNKNOWN: Final = Method("")

MRTR_METHODS: Final = frozenset(m.name for m in METHODS.values() if m.multi_round)
CACHEABLE_METHODS: Final = frozenset(m.name for m in METHODS.values() if m.cacheable)
ALLOWED_BEFORE_INITIALIZED: Final = frozenset(m.name for m in METHODS.values() if m.before_init)


#: What :func:`feature_of` answers, for the methods that need a feature (the server asks per request).
METHOD_FEATURES: Final = {name: m.feature for name, m in METHODS.items() if m.feature is not None}


def feature_of(method: str) -> str | None:
    """The feature a revision needs for *method* to exist, or ``None`` (exists wherever handled)."""
    return METHOD_FEATURES.get(method)


def capability_of(method: str) -> str | None:
    """The server capability *method* belongs to, or ``None``."""
    return METHODS.get(method, _UNKNOWN).capability


def mcp_name_field(method: str) -> str | None:
    """The params field carried in the ``Mcp-Name`` header for *method*, or ``None``."""
    return METHODS.get(method, _UNKNOWN).mcp_name
