"""Tool search: two meta-tools in place of a catalogue too large to list.

A model shown hundreds of tools spends its context on their schemas and chooses worse. Once
:func:`enable_tool_search` (or ``server.add_tool_search()``) is called, ``tools/list`` answers only

- ``search_tools(query, limit?)``: the catalogue ranked with BM25 against *query*; the best
  matches' definitions (``name``, ``title`` when there is one, ``description``, ``inputSchema``)
  as ``structuredContent`` and as the same JSON in a text block;
- ``call_tool(name, arguments?)``: calls the tool *name* found that way;
- and the tools named in ``always`` (those the model should see at once).

The catalogue searched is :meth:`~mcpkit.server.catalog.CatalogAPI.catalog` asked for the
caller, at the time of the search: the server's own tools, its mounted servers', transformed
ones, less what is disabled for everyone or for the caller's session. So a tool added later is
found at once, and a hidden one never is. Every tool stays callable by its own name too.

``call_tool`` passes the call to the server's own ``tools/call`` handler through
:meth:`~mcpkit.LowLevelServer.dispatch`, with the request's other params (``_meta``, a
2025-11-25 ``task``) kept: middleware sees the real tool's name and arguments (a policy keyed on
names cannot be walked around), transforms map names and arguments back, a hidden tool is
refused, a tool may run as a task, and a 2026-07-28 tool may ask the client for input (the
retry comes back as ``call_tool`` and is passed on the same way). Middleware therefore runs twice
for such a call: once around ``call_tool``, once around the real tool.

Ranking is :mod:`._ranking`'s BM25 over names, titles and descriptions (no model needed).

>>> import asyncio
>>> from mcpkit import Client, Server
>>> server = Server("big")
>>> @server.tool
... def get_weather(city: str) -> str:
...     '''Current weather for a city.'''
...     return f"Sunny in {city}"
>>> @server.tool
... def send_email(to: str, body: str) -> str:
...     '''Send an email message.'''
...     return "sent"
>>> enable_tool_search(server, max_results=3)
>>> async def main() -> None:
...     async with Client(server) as client:
...         print([tool.name for tool in await client.list_tools()])
...         found = await client.call_tool("search_tools", {"query": "weather in a city"})
...         print([tool["name"] for tool in found.structured_content["tools"]])
...         called = await client.call_tool("call_tool", {"name": "get_weather", "arguments": {"city": "Oslo"}})
...         print(called.content[0].text)
>>> asyncio.run(main())
['search_tools', 'call_tool']
['get_weather']
Sunny in Oslo
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec

from .._compat import shape_call_result, shape_tool
from .._errors import InvalidParams
from .._pagination import page, paginate
from ..context import Context
from ._ranking import Documents, rank
from ._results import error_result

if TYPE_CHECKING:
    from .tools import ToolsAPI

__all__ = ["ToolSearch", "enable_tool_search"]

#: The most results one search may ask for (``limit``), whatever ``max_results`` is.
LIMIT_CAP: Final = 50

_json: Final = msgspec.json.Encoder()


# -- the meta-tools ---------------------------------------------------------------------------------


class ToolSearch:
    """Tool search as set up on one server: its two meta-tools and the handlers they replace."""

    def __init__(
        self, server: ToolsAPI, max_results: int, always: Sequence[str], search_name: str, call_name: str
    ) -> None:
        self.server = server
        self.max_results = max_results
        self.always = tuple(always)
        self.search_name = search_name
        self.call_name = call_name
        self.documents = Documents()
        self._list_tools = server._handlers["tools/list"]
        self._call_tool = server._handlers["tools/call"]
        self.search_definition: dict[str, Any] = {
            "name": search_name,
            "title": "Search tools",
            "description": (
                "Search this server's tools by what they do. Returns the best matching tools' "
                f"names, descriptions and input schemas; call one with {call_name}."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words describing the task, or a tool's name"},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": max(max_results, LIMIT_CAP),
                        "description": f"The most tools to return (default {max_results})",
                    },
                },
                "required": ["query"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
                "required": ["tools"],
            },
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        }
        self.call_definition: dict[str, Any] = {
            "name": call_name,
            "title": "Call a tool",
            "description": (
                f"Call a tool found with {search_name}: its name, and its arguments as an object "
                "matching its input schema."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": f"The tool's name, as {search_name} gave it"},
                    "arguments": {"type": "object", "description": "The tool's arguments"},
                },
                "required": ["name"],
            },
        }

    # -- tools/list ------------------------------------------------------------------------------

    async def list_tools(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """``tools/list``: the meta-tools and the ``always`` ones (if listed to this caller)."""
        server = self.server
        catalog = await server.catalog("tools", ctx)
        call_definition = self.call_definition
        if any(_task_support(item) for item in catalog):
            # Some tool can run as a task: so can a call of it through call_tool.
            call_definition = {**call_definition, "execution": {"taskSupport": "optional"}}
        items = [
            shape_tool(definition, ctx.scope)
            for definition in (self.search_definition, call_definition)
            if not server._is_hidden("tools", definition["name"], ctx)
        ]
        if self.always:
            wanted = set(self.always) - {self.search_name, self.call_name}
            items.extend(item for item in catalog if item.get("name") in wanted)
        by_name = {item["name"]: item for item in items}
        shown, cursor = paginate(list(by_name), params.get("cursor"), server.page_size)
        return page("tools", [by_name[name] for name in shown], cursor)

    # -- tools/call ------------------------------------------------------------------------------

    async def call_tool(self, params: dict[str, Any], ctx: Context) -> Any:
        """``tools/call``: the meta-tools here; any other name as the server answered it before."""
        name = params.get("name")
        if name == self.search_name or name == self.call_name:
            if self.server._is_hidden("tools", name, ctx):
                raise InvalidParams(f"Unknown tool: {name}")
            arguments = params.get("arguments")
            if arguments is not None and not isinstance(arguments, dict):
                raise InvalidParams("tools/call params.arguments must be an object")
            if name == self.search_name:
                return shape_call_result(await self._search(arguments or {}, ctx), ctx.scope)
            return await self._call(params, arguments or {}, ctx)
        return await self._call_tool(params, ctx)

    async def _search(self, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        query = arguments.get("query")
        if not isinstance(query, str):
            return error_result(f"{self.search_name} needs query: a string")
        limit = arguments.get("limit", self.max_results)
        cap = max(self.max_results, LIMIT_CAP)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= cap:
            return error_result(f"{self.search_name}: limit must be an integer from 1 to {cap}")
        catalog = [
            item
            for item in await self.server.catalog("tools", ctx)
            if item.get("name") not in (self.search_name, self.call_name)
        ]
        found = [_definition(item) for item in rank(catalog, query, limit, documents=self.documents)]
        if not found:
            text = f"No tool matches {query!r}. Try other words."
        else:
            text = _json.encode({"tools": found}).decode()
        return {"content": [{"type": "text", "text": text}], "structuredContent": {"tools": found}}

    async def _call(self, params: dict[str, Any], arguments: dict[str, Any], ctx: Context) -> Any:
        target = arguments.get("name")
        inner = arguments.get("arguments", {})
        if not isinstance(target, str) or not target:
            return shape_call_result(error_result(f"{self.call_name} needs name: a tool's name"), ctx.scope)
        if not isinstance(inner, dict):
            return shape_call_result(
                error_result(f"{self.call_name}: arguments must be an object (the tool's arguments)"),
                ctx.scope,
            )
        if target in (self.search_name, self.call_name):
            return shape_call_result(
                error_result(f"{self.call_name} calls the tools {self.search_name} finds, not {target}"),
                ctx.scope,
            )
        forwarded = {**params, "name": target, "arguments": inner}
        try:
            # The server's own tools/call, through its middleware: see the module.
            return await self.server.dispatch("tools/call", forwarded, ctx)
        except InvalidParams as exc:
            # An unknown or hidden tool: the model asked for it, so it is told as a tool error
            # it can act on, not a protocol error its client may not show it.
            return shape_call_result(
                error_result(f"{exc.message}. Use {self.search_name} to find the tools there are."),
                ctx.scope,
            )


def _task_support(item: dict[str, Any]) -> bool:
    execution = item.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") in ("optional", "required")


def _definition(item: dict[str, Any]) -> dict[str, Any]:
    """What a search returns of a tool: enough to call it."""
    found: dict[str, Any] = {"name": item["name"]}
    if isinstance(item.get("title"), str):
        found["title"] = item["title"]
    found["description"] = item.get("description") or ""
    found["inputSchema"] = item.get("inputSchema") or {"type": "object"}
    return found


def enable_tool_search(
    server: ToolsAPI,
    *,
    max_results: int = 5,
    always: Sequence[str] = (),
    search_name: str = "search_tools",
    call_name: str = "call_tool",
) -> None:
    """List *server*'s tools as two meta-tools, *search_name* and *call_name* (see the module).

    Args:
        server: a :class:`~mcpkit.Server` (any server with tools and a catalogue).
        max_results: how many tools a search returns when it does not say (``limit``).
        always: names of tools listed as well (if the catalogue has them for the caller).
        search_name: the search meta-tool's name.
        call_name: the call meta-tool's name.

    Raises:
        ValueError: tool search is on already; *max_results* is under 1; a meta-tool's name is
            not a valid tool name, the two are the same, or the server has a tool of that name;
            *always* is a string instead of a list of names.
    """
    if getattr(server, "_tool_search", None) is not None:  # ToolSearchAPI's, or set below
        raise ValueError(f"tool search is already enabled on {server.info.name!r}")
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise ValueError("max_results must be an integer of at least 1")
    if isinstance(always, str):
        raise ValueError("always is a list of tool names, not a string")
    if search_name == call_name:
        raise ValueError("search_name and call_name must differ")
    for name in (search_name, call_name):
        if (
            not isinstance(name, str)
            or not 0 < len(name) <= 128
            or not all(c.isascii() and (c.isalnum() or c in "_-.") for c in name)
        ):
            raise ValueError(f"invalid tool name {name!r}: use 1 to 128 of A-Z a-z 0-9 _ - .")
        if name in server._tools:
            raise ValueError(f"the server already has a tool named {name!r}: choose other names")
    search = ToolSearch(server, max_results, always, search_name, call_name)
    server._tool_search = search  # type: ignore[attr-defined]
    server.set_handler("tools/list", search.list_tools)
    server.set_handler("tools/call", search.call_tool)
    server._changed("tools")
