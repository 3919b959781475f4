"""``server.add_tool_search()``: the part of :class:`~mcpkit.Server` that turns tool search on.

Kept apart from :mod:`.tool_search`, which it imports only when called: every server has the
method, and only a server that searches pays for loading the search (cold start).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["ToolSearchAPI"]


class ToolSearchAPI:
    """Part of :class:`~mcpkit.Server`: :meth:`add_tool_search`."""

    #: The server's :class:`~mcpkit.server.tool_search.ToolSearch` once it is on.
    _tool_search: Any = None

    def add_tool_search(
        self,
        *,
        max_results: int = 5,
        always: Sequence[str] = (),
        search_name: str = "search_tools",
        call_name: str = "call_tool",
    ) -> None:
        """List this server's tools as two meta-tools, ``search_tools`` and ``call_tool``, and the
        tools named in *always*; see :func:`mcpkit.server.tool_search.enable_tool_search` for the
        arguments and what they do.

        Raises:
            ValueError: bad options, or tool search is on already.
        """
        from .tool_search import enable_tool_search

        server: Any = self  # a Server: ToolSearchAPI is one of its bases
        enable_tool_search(
            server, max_results=max_results, always=always, search_name=search_name, call_name=call_name
        )
