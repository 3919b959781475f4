"""Consent and rate limits: whether a tool call may go to its server, decided before it is sent.

A rule matches a call by server key (a glob), tool name (a glob over the server's own name for the
tool) and tool annotations (each one given must equal the tool's, with the spec's defaults for an
absent hint: ``readOnlyHint`` false, ``destructiveHint`` true, ``idempotentHint`` false,
``openWorldHint`` true). The first rule that matches decides: ``allow``, ``deny`` or ``ask`` (the
user is asked, and a call nobody can ask is refused). No match: the policy's ``default``, which is
``ask`` unless configured, because the spec wants "a human in the loop with the ability to deny tool
invocations" and annotations "MUST" be treated as untrusted.

Rate limits reuse the token buckets of :mod:`mcpkit._ratelimit`: each limit rule holds one bucket
per server (no ``tool`` in the rule) or per server and tool; every matching limit must have a token.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .._ratelimit import KeyedBuckets
from ._read import Node

__all__ = ["ANNOTATION_DEFAULTS", "Decision", "LimitRule", "Policy", "Rule", "parse_policy"]

Decision = Literal["allow", "deny", "ask"]
_DECISIONS: Final = ("allow", "deny", "ask")

#: The spec's meaning of an absent hint (schema.ts, ToolAnnotations).
ANNOTATION_DEFAULTS: Final[Mapping[str, bool]] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


@dataclass(frozen=True)
class Rule:
    """One consent rule; a field left out matches everything."""

    action: Decision
    server: str = "*"
    tool: str = "*"
    annotations: Mapping[str, bool] = field(default_factory=dict)

    def matches(self, server: str, tool: str, annotations: Mapping[str, Any]) -> bool:
        if not (fnmatch.fnmatchcase(server, self.server) and fnmatch.fnmatchcase(tool, self.tool)):
            return False
        for hint, wanted in self.annotations.items():
            actual = annotations.get(hint, ANNOTATION_DEFAULTS.get(hint))
            # A destructive/idempotent hint "is meaningful only when readOnlyHint == false".
            if hint in ("destructiveHint", "idempotentHint") and annotations.get("readOnlyHint") is True:
                actual = False
            if actual is not wanted:
                return False
        return True


@dataclass
class LimitRule:
    """A rate limit over the calls that match *server* and *tool*."""

    rate: str
    server: str = "*"
    tool: str | None = None  # None: one bucket for the whole server
    buckets: KeyedBuckets = field(init=False)

    def __post_init__(self) -> None:
        self.buckets = KeyedBuckets(self.rate)

    def key(self, server: str, tool: str) -> str | None:
        if not fnmatch.fnmatchcase(server, self.server):
            return None
        if self.tool is None:
            return server
        return f"{server}\0{tool}" if fnmatch.fnmatchcase(tool, self.tool) else None


@dataclass
class Policy:
    """The consent rules (first match wins) and the rate limits of a host."""

    rules: list[Rule] = field(default_factory=list)
    default: Decision = "ask"
    limits: list[LimitRule] = field(default_factory=list)

    def decide(self, server: str, tool: str, annotations: Mapping[str, Any] | None) -> tuple[Decision, str]:
        """The decision for a call and why (which rule, or the default)."""
        hints = annotations or {}
        for number, rule in enumerate(self.rules, 1):
            if rule.matches(server, tool, hints):
                return rule.action, f"rule {number}"
        return self.default, "default"

    def take(self, server: str, tool: str) -> tuple[float, str | None]:
        """Spend a token of every limit that applies: ``(0.0, None)`` if allowed, else the seconds to
        wait and the limit that refused. A refused call spends no token of the limits before it."""
        for limit in self.limits:
            key = limit.key(server, tool)
            if key is None:
                continue
            wait = limit.buckets.take(key)
            if wait > 0:
                return wait, limit.rate
        return 0.0, None


def parse_policy(policy: Node | None, limits: Node | None) -> Policy:
    """The ``policy`` and ``rateLimits`` members of the ``mcpkit`` section.

    Raises:
        ConfigError: a rule with an unknown action, a bad glob type or a bad rate.
    """
    result = Policy()
    if policy is not None:
        if (default := policy.get("default")) is not None:
            result.default = default.choice(*_DECISIONS)  # type: ignore[assignment]
        if (rules := policy.get("rules")) is not None:
            result.rules = [_rule(node) for node in rules.elements("a list of rules")]
    for node in limits.elements("a list of rate limits") if limits is not None else ():
        rate, server, tool = node.child("rate"), node.get("server"), node.get("tool")
        try:
            limit = LimitRule(
                rate.string(), server.string() if server else "*", tool.string() if tool else None
            )
        except ValueError as exc:
            if hasattr(exc, "path"):
                raise
            raise rate.error(str(exc)) from None
        result.limits.append(limit)
    return result


def _rule(node: Node) -> Rule:
    known = {"action", "server", "tool", "annotations"}
    for key, child in node.items():
        if key not in known:
            raise child.error(f"unknown rule field; expected one of {', '.join(sorted(known))}")
    action = node.child("action").choice(*_DECISIONS)
    server = node.get("server")
    tool = node.get("tool")
    hints: dict[str, bool] = {}
    if (annotations := node.get("annotations")) is not None:
        for hint, value in annotations.items():
            if hint not in ANNOTATION_DEFAULTS:
                raise value.error(f"unknown annotation; expected one of {', '.join(ANNOTATION_DEFAULTS)}")
            hints[hint] = value.boolean()
    return Rule(
        action,  # type: ignore[arg-type]
        server.string() if server else "*",
        tool.string() if tool else "*",
        hints,
    )
