"""The friendly server: typed Python functions become MCP tools.

::

    from mcpkit import Server

    server = Server("weather")

    @server.tool
    async def get_weather(location: str) -> str:
        '''Current weather for a city.'''
        return f"Sunny in {location}"

    if __name__ == "__main__":
        server.run()

``@server.tool`` is sugar over :meth:`Server.add_tool`: the function's signature becomes the tool's
``inputSchema`` (see :mod:`mcpkit._signature`), arguments are validated once on the way in, and the
return value is turned into content blocks, plus ``structuredContent`` when the return annotation
gives it a schema. The handlers are written once; :mod:`mcpkit._compat` shapes their results for the
revision each client speaks.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypedDict, TypeVar, Unpack, overload

import msgspec

from ._compat import shape_call_result, shape_tool
from ._errors import InvalidParams, RPCError, ToolError
from ._signature import ArgumentError, ToolSignature, inspect_function
from .context import Context
from .lowlevel import LowLevelServer
from .types import CONTENT_TYPES, CallToolResult, Icon, Tool, ToolAnnotations

__all__ = ["Server", "ToolOptions"]

F = TypeVar("F", bound=Callable[..., Any])

# "The following SHOULD be the only allowed characters: uppercase and lowercase ASCII letters (A-Z,
# a-z), digits (0-9), underscore (_), hyphen (-), and dot (.)"; "between 1 and 128 characters".
_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_json_encode: Final = msgspec.json.Encoder().encode


class ToolOptions(TypedDict, total=False):
    """What ``@server.tool(...)`` accepts besides the function."""

    name: str  # default: the function's name
    title: str  # a display name (2025-06-18 and later)
    description: str  # default: the docstring, less its Args section
    annotations: ToolAnnotations  # behaviour hints (read-only, destructive...)
    icons: list[Icon]
    meta: dict[str, Any]  # the tool's _meta
    structured_output: bool  # False: no outputSchema even when the return annotation gives one


@dataclass(slots=True)
class _RegisteredTool:
    fn: Callable[..., Any]
    signature: ToolSignature
    wire: dict[str, Any]  # the Tool as the newest revision lists it


class Server(LowLevelServer):
    """An MCP server whose tools are typed Python functions.

    Args:
        name: the server's name in ``serverInfo``.
        version: its version.
        page_size: how many items one page of a list result holds (``None``: all in one page).
        **kwargs: ``title``, ``instructions``, ``icons``, ``website_url`` (see :class:`LowLevelServer`).
    """

    def __init__(
        self, name: str, version: str = "0.1.0", *, page_size: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(name, version, **kwargs)
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.page_size = page_size
        self._tools: dict[str, _RegisteredTool] = {}
        self.set_handler("tools/list", self._list_tools)
        self.set_handler("tools/call", self._call_tool)

    # -- tools -------------------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...
    def tool(self, fn: F | None = None, /, **options: Unpack[ToolOptions]) -> F | Callable[[F], F]:
        """Register a function as a tool: ``@server.tool`` or ``@server.tool(name=..., title=...)``.

        The options are those of :class:`ToolOptions`.
        """

        def register(fn: F) -> F:
            self.add_tool(fn, **options)
            return fn

        return register(fn) if fn is not None else register

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> Tool:
        """Register *fn* as a tool and return its definition.

        Raises:
            ValueError: the name breaks the spec's rules for tool names, or is taken.
            TypeError: the signature cannot be described (``*args``, positional-only parameters).
        """
        tool_name = name or fn.__name__
        if not _TOOL_NAME.fullmatch(tool_name):
            raise ValueError(
                f"invalid tool name {tool_name!r}: use 1 to 128 of A-Z a-z 0-9 _ - . (no spaces or other characters)"
            )
        if tool_name in self._tools:
            raise ValueError(f"a tool named {tool_name!r} is already registered")
        signature = inspect_function(fn, skip_types=(Context,))
        use_output = signature.output_schema is not None and structured_output is not False
        definition = Tool(
            name=tool_name,
            input_schema=signature.input_schema,
            title=title if title is not None else msgspec.UNSET,
            description=description if description is not None else (signature.description or msgspec.UNSET),
            output_schema=signature.output_schema
            if use_output and signature.output_schema
            else msgspec.UNSET,
            annotations=annotations if annotations is not None else msgspec.UNSET,
            icons=icons if icons is not None else msgspec.UNSET,
            meta=meta if meta is not None else msgspec.UNSET,
        )
        self._tools[tool_name] = _RegisteredTool(fn, signature, msgspec.to_builtins(definition))
        if not use_output:
            self._tools[tool_name].signature = _without_output(signature)
        return definition

    def remove_tool(self, name: str) -> None:
        """Unregister a tool. Raises ``KeyError`` if there is none of that name."""
        del self._tools[name]

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, in ``tools/list`` order."""
        return [msgspec.convert(t.wire, Tool) for t in self._tools.values()]

    async def _list_tools(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        names = list(self._tools)
        page, next_cursor = _paginate(names, params.get("cursor"), self.page_size)
        result: dict[str, Any] = {"tools": [shape_tool(self._tools[n].wire, ctx.scope) for n in page]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _call_tool(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call requires params.name (a string)")
        tool = self._tools.get(name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams("tools/call params.arguments must be an object")
        result = await self._run_tool(tool, name, arguments, ctx)
        return shape_call_result(result, ctx.scope)

    async def _run_tool(
        self, tool: _RegisteredTool, name: str, arguments: dict[str, Any] | None, ctx: Context
    ) -> dict[str, Any]:
        signature = tool.signature
        try:
            kwargs = signature.bind(arguments)
        except ArgumentError as exc:
            return _error_result(str(exc))
        for param in signature.skipped:
            kwargs[param] = ctx
        try:
            if signature.is_async:
                value = await tool.fn(**kwargs)
            else:
                # Sync tools run in a worker thread so that they never block the event loop.
                value = await asyncio.get_running_loop().run_in_executor(
                    None, functools.partial(tool.fn, **kwargs)
                )
        except ToolError as exc:
            return _error_result(str(exc))
        except (RPCError, asyncio.CancelledError):
            raise
        except Exception as exc:
            return _error_result(f"Error executing tool {name}: {type(exc).__name__}: {exc}")
        return _to_call_result(value, signature)


def _without_output(signature: ToolSignature) -> ToolSignature:
    from dataclasses import replace

    return replace(signature, output_schema=None, wrapped_output=False)


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _to_call_result(value: Any, signature: ToolSignature) -> dict[str, Any]:
    """A tool's return value as a ``CallToolResult`` dict."""
    if isinstance(value, CallToolResult):
        return msgspec.to_builtins(value)  # type: ignore[no-any-return]
    if signature.output_schema is None:
        return {"content": _to_content(value)}
    structured = signature.serialize_output(value)
    # The structured value is the truth; the text block carries the same for clients that predate
    # structuredContent ("a tool that returns structured content SHOULD also return the serialized
    # JSON in a TextContent block").
    if isinstance(value, str):
        text = value
    else:
        text = _json_encode(structured.get("result") if signature.wrapped_output else structured).decode()
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


def _to_content(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, CONTENT_TYPES):
        return [msgspec.to_builtins(value)]
    if isinstance(value, (list, tuple)) and any(isinstance(v, CONTENT_TYPES) for v in value):
        blocks: list[dict[str, Any]] = []
        for item in value:
            blocks.extend(_to_content(item))
        return blocks
    if isinstance(value, bytes):
        return [{"type": "text", "text": base64.b64encode(value).decode()}]
    return [{"type": "text", "text": _json_encode(msgspec.to_builtins(value)).decode()}]


def _paginate(items: list[str], cursor: Any, page_size: int | None) -> tuple[list[str], str | None]:
    """One page of *items* after *cursor*, and the cursor of the next page.

    A cursor names the last item of the previous page (base64, so clients treat it as opaque), which
    keeps pages stable when items are added or removed elsewhere in the list.
    """
    start = 0
    if cursor is not None:
        if not isinstance(cursor, str):
            raise InvalidParams("invalid cursor")
        try:
            last = base64.urlsafe_b64decode(cursor.encode()).decode()
            start = items.index(last) + 1
        except (ValueError, UnicodeDecodeError):
            raise InvalidParams(f"invalid cursor: {cursor!r}") from None
    if page_size is None:
        return items[start:], None
    page = items[start : start + page_size]
    more = start + page_size < len(items)
    return page, base64.urlsafe_b64encode(page[-1].encode()).decode() if more and page else None
