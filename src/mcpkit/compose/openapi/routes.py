"""Route maps: which operations of an OpenAPI document become tools, resources, templates, or nothing.

A :class:`RouteMap` matches operations by HTTP method, by a regular expression searched in the
path template (``/pets/{petId}``, as the document writes it), and by tags; the first map that
matches an operation decides its kind. An operation no map matches is a tool.

::

    >>> from mcpkit.compose.openapi import RouteMap
    >>> maps = [
    ...     RouteMap(tags={"internal"}, kind="exclude"),
    ...     RouteMap(methods={"GET"}, pattern=r"\\{", kind="template"),   # GET with path parameters
    ...     RouteMap(methods={"GET"}, kind="resource"),                   # the other GETs
    ... ]
    >>> choose_kind("GET", "/pets/{petId}", ["pets"], maps)
    'template'
    >>> choose_kind("POST", "/pets", ["pets"], maps)
    'tool'
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Kind", "RouteMap", "choose_kind"]

#: What an operation becomes.
Kind = Literal["tool", "resource", "template", "exclude"]

_KINDS = ("tool", "resource", "template", "exclude")


@dataclass(frozen=True)
class RouteMap:
    """One rule: operations matching all of its conditions become *kind*.

    Args:
        methods: HTTP methods (any case) the rule applies to; ``None`` for any.
        pattern: a regular expression searched in the path template (anchor it with ``^...$`` to
            match a whole path); ``None`` for any path.
        tags: the rule applies to operations that have every one of these tags; empty for any.
        kind: ``"tool"``, ``"resource"`` (a GET without path parameters, read at a fixed URI),
            ``"template"`` (a GET whose path and query parameters are the URI template's variables),
            or ``"exclude"`` (left out).
    """

    methods: Collection[str] | None = None
    pattern: str | re.Pattern[str] | None = None
    tags: Collection[str] = field(default_factory=frozenset)
    kind: Kind = "tool"

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"RouteMap kind must be one of {', '.join(_KINDS)}, not {self.kind!r}")
        if isinstance(self.methods, str):  # RouteMap(methods="GET"): one method, not G, E and T
            object.__setattr__(self, "methods", (self.methods,))
        if isinstance(self.tags, str):
            object.__setattr__(self, "tags", (self.tags,))
        if isinstance(self.pattern, str):
            try:
                object.__setattr__(self, "pattern", re.compile(self.pattern))
            except re.error as exc:
                raise ValueError(
                    f"RouteMap pattern {self.pattern!r} is not a regular expression: {exc}"
                ) from None

    def matches(self, method: str, path: str, tags: Collection[str]) -> bool:
        """Whether the operation *method* *path* with *tags* is one this rule is about."""
        if self.methods is not None and method.upper() not in {m.upper() for m in self.methods}:
            return False
        if self.pattern is not None and not re.search(self.pattern, path):
            return False
        return set(self.tags) <= set(tags)


def choose_kind(method: str, path: str, tags: Collection[str], maps: Sequence[RouteMap]) -> Kind:
    """The kind of the first map matching the operation; ``"tool"`` when none does."""
    for route in maps:
        if route.matches(method, path, tags):
            return route.kind
    return "tool"
