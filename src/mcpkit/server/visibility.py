"""Hiding components at run time: for the whole server (``server.disable``/``enable``) or for the
calling session (``ctx.disable``/``enable``); see :mod:`mcpkit._visibility` for the rules."""

from __future__ import annotations

from .._visibility import Filter
from ..context import SESSION_FILTER, Context

__all__ = ["Filter", "session_filter"]


def session_filter(ctx: Context) -> Filter | None:
    """What the caller's session hides, if it hides anything (made by ``ctx.disable``)."""
    conn = ctx.connection
    state = conn.session_state if conn is not None else None
    if state is None:
        return None
    found = state.get(SESSION_FILTER)
    return found if isinstance(found, Filter) and found else None
