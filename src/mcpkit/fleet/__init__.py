"""Serving one MCP server from many processes: the state they share (:mod:`.state`) and its Redis
implementation (:mod:`.redis_state`, imported only when a Redis URL is given)."""

from __future__ import annotations

from .state import MemoryState, SharedState, StateUnavailable

__all__ = ["MemoryState", "SharedState", "StateUnavailable", "open_state"]


def open_state(url: str, *, prefix: str = "mcpkit:") -> SharedState:
    """The shared state at *url*: ``redis://...`` (``rediss://``, ``unix://``) or ``memory:``
    (this process only, for tests and single-process use)."""
    if url == "memory:":
        return MemoryState()
    if url.split("://", 1)[0] not in ("redis", "rediss", "unix"):
        raise ValueError(f"unsupported shared-state URL {url!r}: expected redis://HOST:PORT[/DB] or memory:")
    try:
        from .redis_state import RedisState
    except ImportError as exc:  # pragma: no cover - the extra is not installed
        raise ImportError("a Redis URL needs the redis client: pip install 'mcpkit[redis]'") from exc
    return RedisState(url, prefix=prefix)
