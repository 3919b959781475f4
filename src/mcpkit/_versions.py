"""Protocol revisions, their eras, and what each one has.

MCP revisions are dates. Up to 2025-11-25 a connection starts with the ``initialize`` handshake and
the negotiated revision holds for the whole session (the *handshake* era). From 2026-07-28 there is
no handshake: every request names its revision in ``_meta`` (the *stateless* era), and
``server/discover`` tells a client what a server speaks.

Features that appeared or vanished over time are listed once, in :data:`FEATURES`, so that every
decision that depends on the revision ("may this result carry ``structuredContent``?") reads the
same table, and the docs and tests can be generated from it.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = [
    "FEATURES",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_VERSION",
    "STATELESS_VERSIONS",
    "SUPPORTED_VERSIONS",
    "Era",
    "era_of",
    "has",
    "negotiate_handshake_version",
]


class Era(enum.Enum):
    HANDSHAKE = "handshake"
    STATELESS = "stateless"


# Oldest first. Comparing revision strings compares dates, which is what "since" means below.
HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STATELESS_VERSIONS: Final = ("2026-07-28",)
#: Every revision mcpkit speaks, newest first (the order ``server/discover`` advertises).
SUPPORTED_VERSIONS: Final = tuple(reversed(HANDSHAKE_VERSIONS + STATELESS_VERSIONS))
LATEST_VERSION: Final = STATELESS_VERSIONS[-1]
LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_VERSIONS[-1]


def era_of(version: str) -> Era | None:
    """The era of a revision mcpkit knows, or ``None`` for an unknown one."""
    if version in STATELESS_VERSIONS:
        return Era.STATELESS
    if version in HANDSHAKE_VERSIONS:
        return Era.HANDSHAKE
    return None


def negotiate_handshake_version(requested: object) -> str:
    """The version a server answers ``initialize`` with.

    "If the server supports the requested protocol version, it MUST respond with the same version.
    Otherwise, the server MUST respond with another protocol version it supports. This SHOULD be the
    latest version supported by the server." (basic/lifecycle, every handshake revision)
    """
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return LATEST_HANDSHAKE_VERSION


# feature -> (first revision that has it, first revision that no longer has it or None)
FEATURES: Final[dict[str, tuple[str, str | None]]] = {
    # base protocol
    "initialize": ("2024-11-05", "2026-07-28"),
    "ping": ("2024-11-05", "2026-07-28"),
    "batch": ("2025-03-26", "2025-06-18"),
    "server_discover": ("2026-07-28", None),
    "result_type": ("2026-07-28", None),
    "meta_server_info": ("2026-07-28", None),
    "subscriptions_listen": ("2026-07-28", None),
    "input_required": ("2026-07-28", None),
    # Streamable HTTP (the stateless 2026-07-28 has no streams to resume: a dropped stream cancels)
    "resumable_streams": ("2025-03-26", "2026-07-28"),  # SSE event ids, Last-Event-ID
    "sse_polling": ("2025-11-25", "2026-07-28"),  # priming event, retry, server-closed streams
    # tools
    "tool_annotations": ("2025-03-26", None),
    "audio_content": ("2025-03-26", None),
    "structured_content": ("2025-06-18", None),
    "resource_link": ("2025-06-18", None),
    "titles": ("2025-06-18", None),
    "icons": ("2025-11-25", None),
    "tool_execution": ("2025-11-25", None),
    # utilities
    "completions": ("2024-11-05", None),  # completion/complete
    "completions_capability": ("2025-03-26", None),  # ...declared as a capability only from here
    "logging_set_level": ("2024-11-05", "2026-07-28"),
    "progress_message": ("2025-03-26", None),
    "resource_subscribe": ("2024-11-05", "2026-07-28"),
    "elicitation": ("2025-06-18", None),
    "elicitation_url": ("2025-11-25", None),
    "sampling_tools": ("2025-11-25", None),
    "tasks": ("2025-11-25", "2026-07-28"),  # the core tasks of 2025-11-25 (tasks/result, tasks/list)
    "tasks_extension": ("2026-07-28", None),  # the io.modelcontextprotocol/tasks extension (tasks/update)
    "tasks_any": ("2025-11-25", None),  # tasks/get and tasks/cancel, in one form or the other
    "caching": ("2026-07-28", None),
}


#: Results that carry caching hints in 2026-07-28: "Servers MUST include caching hints on results
#: with resultType: "complete" returned by the following operations" (server/utilities/caching).
#: What each feature of :data:`FEATURES` is, for the docs' table.
FEATURE_NOTES: Final[dict[str, str]] = {
    "initialize": "`initialize` handshake and `notifications/initialized`",
    "ping": "`ping`, both ways",
    "batch": "JSON-RPC batches (received)",
    "server_discover": "`server/discover`, per-request `_meta`",
    "result_type": "`resultType` on every result",
    "meta_server_info": "`io.modelcontextprotocol/serverInfo` in result `_meta`",
    "subscriptions_listen": "`subscriptions/listen` notification streams",
    "input_required": "multi round-trip requests (`InputRequiredResult`)",
    "resumable_streams": "Streamable HTTP: SSE event ids, resuming with `Last-Event-ID`",
    "sse_polling": "Streamable HTTP: priming event, `retry`, server-closed streams",
    "tool_annotations": "tool `annotations`",
    "audio_content": "`audio` content",
    "structured_content": "`outputSchema` and `structuredContent`",
    "resource_link": "`resource_link` content",
    "titles": "`title` on tools, resources, prompts, implementations",
    "icons": "`icons`",
    "tool_execution": "tool `execution` (task support)",
    "completions": "`completion/complete`",
    "completions_capability": "the `completions` capability",
    "logging_set_level": "`logging/setLevel`",
    "progress_message": "`message` in progress notifications",
    "resource_subscribe": "`resources/subscribe` and `unsubscribe`",
    "elicitation": "`elicitation/create` (form)",
    "elicitation_url": "URL-mode elicitation",
    "sampling_tools": "`tools` and `toolChoice` in sampling",
    "tasks": "task-augmented `tools/call`, `tasks/result`, `tasks/list`",
    "tasks_extension": "the `io.modelcontextprotocol/tasks` extension (`tasks/update`)",
    "tasks_any": "`tasks/get`, `tasks/cancel`",
    "caching": "`ttlMs` and `cacheScope` caching hints",
}


def features_table() -> str:
    """The feature table as Markdown, for ``docs/features.md``."""
    versions = sorted(SUPPORTED_VERSIONS)
    lines = ["| feature | " + " | ".join(versions) + " |", "|---|" + "---|" * len(versions)]
    for feature in FEATURES:
        marks = " | ".join("✓" if has(v, feature) else "" for v in versions)
        lines.append(f"| {FEATURE_NOTES[feature]} | {marks} |")
    return "\n".join(lines) + "\n"


def has(version: str, feature: str) -> bool:
    """Whether revision *version* has *feature* (a key of :data:`FEATURES`)."""
    since, until = FEATURES[feature]
    return since <= version and (until is None or version < until)


if __name__ == "__main__":
    print(features_table(), end="")
