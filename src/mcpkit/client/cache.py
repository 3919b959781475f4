"""The 2026-07-28 result cache: answers kept while their ``ttlMs`` says they are fresh.

A cacheable result (``tools/list``, ``resources/read``...; the ``cacheable`` column of
:data:`~mcpkit._methods.METHODS`) that carries ``ttlMs`` is kept for that long under its method and
its params, less ``_meta`` and the multi round-trip fields. A change notification
(``notifications/tools/list_changed``, ``notifications/resources/updated``) drops what it makes stale.
Entries are copied in and out, so a caller that edits a result cannot change the cached one.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any, Final

from .._methods import CACHEABLE_METHODS

__all__ = ["ResultCache"]

#: Params that do not change what a request asks for.
_NOT_SALIENT: Final = frozenset({"_meta", "inputResponses", "requestState"})

Key = tuple[str, str]


class ResultCache:
    """Fresh results by ``(method, params)``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[Key, tuple[float, Any]] = {}

    @staticmethod
    def key(method: str, params: dict[str, Any]) -> Key | None:
        """Where a result of *method* with *params* would be kept; ``None`` if it is not cacheable."""
        if method not in CACHEABLE_METHODS:
            return None
        salient = {k: v for k, v in params.items() if k not in _NOT_SALIENT}
        return method, json.dumps(salient, sort_keys=True, default=str)

    def get(self, key: Key) -> Any:
        """A copy of the result kept under *key* while it is fresh, else ``None``."""
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self._clock():
            return None
        return copy.deepcopy(entry[1])

    def remember(self, key: Key, result: Any) -> None:
        """Keep *result* for its ``ttlMs``; a result without a positive ``ttlMs`` is not kept."""
        ttl = result.get("ttlMs") if isinstance(result, dict) else None
        if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0:
            self._entries[key] = (self._clock() + ttl / 1000, copy.deepcopy(result))

    def forget_for(self, method: str, params: dict[str, Any]) -> None:
        """Drop what the notification *method* made stale (nothing for other notifications)."""
        if method.endswith("/list_changed"):
            kind = method.removeprefix("notifications/").removesuffix("/list_changed")
            self._forget(f"{kind}/list")
            if kind == "resources":
                self._forget("resources/templates/list")
        elif method == "notifications/resources/updated":
            self._forget("resources/read", params.get("uri"))

    def _forget(self, method: str, uri: Any = None) -> None:
        for key in [k for k in self._entries if k[0] == method]:
            if uri is None or json.loads(key[1]).get("uri") == uri:
                del self._entries[key]
