"""Tool transforms: a tool listed under another name, with another description, its arguments
renamed, described, defaulted or hidden behind a fixed value, or its call wrapped.

::

    server.mount(weather_proxy, namespace="weather")
    server.transform_tool(
        "weather__get_forecast",
        name="forecast",
        description="Tomorrow's weather in a city.",
        arguments={
            "q": Arg(name="city", description="A city name"),
            "units": Arg(hide=True, default="metric"),  # the model never sees or sets it
        },
    )

A transform applies to any tool the server lists: its own, a mounted server's, a proxied one. The
tool is then listed and called only under its new name (the old one is refused, so a hidden
argument cannot be set by calling the tool by its first name); a call's arguments are mapped back
(renamed ones to their first names, hidden ones filled with their value) before the tool runs.
``wrap=async fn(arguments, forward)`` runs in place of the call: ``await forward(arguments)`` calls
the tool (its arguments as the tool names them) and returns its ``CallToolResult``; what ``fn``
returns is the result (a ``CallToolResult``, content, or any value a tool may return).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import msgspec

from .._compat import shape_call_result
from .._connection import Scope
from .._errors import InvalidParams
from ..context import Context
from ..types import CallToolResult
from ._results import to_content
from .catalog import CatalogAPI

__all__ = ["Arg", "Forward", "ToolTransform", "TransformsAPI"]

#: ``await forward(arguments)``: the transformed tool's own call, its result.
Forward = Callable[[dict[str, Any]], Awaitable[CallToolResult]]
_UNSET: Final[Any] = msgspec.UNSET  # "no default given" (its repr says UNSET)


# msgspec structs rather than dataclasses: a dataclass compiles its methods from source when its
# module is imported, and every server's start-up imports this one.
class Arg(msgspec.Struct, frozen=True):
    """How one argument of a transformed tool changes.

    Args:
        name: list it under this name (calls are mapped back).
        description: its description in the listed schema.
        default: its new default (listed; filled in when the call leaves it out).
        hide: leave it out of the listed schema; every call gets *default* (required then).
    """

    name: str | None = None
    description: str | None = None
    default: Any = _UNSET
    hide: bool = False

    def __post_init__(self) -> None:
        if self.hide and self.default is _UNSET:
            raise ValueError("a hidden argument needs a default: the value every call gets")


class ToolTransform(msgspec.Struct, frozen=True):
    """A tool's new face (see :meth:`TransformsAPI.transform_tool`)."""

    source: str
    name: str
    title: str | None = None
    description: str | None = None
    arguments: Mapping[str, Arg] = msgspec.field(default_factory=dict)
    wrap: Callable[[dict[str, Any], Forward], Awaitable[Any]] | None = None

    def __post_init__(self) -> None:
        shown = [arg.name or own for own, arg in self.arguments.items() if not arg.hide]
        twice = sorted({name for name in shown if shown.count(name) > 1})
        if twice:
            raise ValueError(f"{self.name!r} would list the argument {twice[0]!r} twice")

    def listed(self, item: dict[str, Any], scope: Scope | None = None) -> dict[str, Any]:
        """The tool's wire definition as it is listed after the transform (to a caller of
        *scope*'s revision: titles only where it has them)."""
        shown = {**item, "name": self.name}
        if self.title is not None and (scope is None or scope.has("titles")):
            shown["title"] = self.title
        if self.wrap is not None:
            # What the wrapper returns is its own: the tool's output schema need not fit it, and
            # it runs inline (not as a task) since the wrapper awaits the result.
            shown.pop("outputSchema", None)
            shown.pop("execution", None)
        if self.description is not None:
            shown["description"] = self.description
        if self.arguments:
            shown["inputSchema"] = self._schema(item.get("inputSchema") or {"type": "object"})
        return shown

    def _schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        # Rebuilt in the tool's own order, each argument in its place under its new name.
        for own, prop in (schema.get("properties") or {}).items():
            arg = self.arguments.get(own)
            if arg is None:
                properties[own] = prop
                continue
            if arg.hide:
                continue
            prop = dict(prop)
            if arg.description is not None:
                prop["description"] = arg.description
            if arg.default is not _UNSET:
                prop["default"] = arg.default
            properties[arg.name or own] = prop
        required: list[str] = []
        for own in schema.get("required") or ():
            arg = self.arguments.get(str(own))
            if arg is None:
                required.append(str(own))
            elif not arg.hide and arg.default is _UNSET:
                required.append(arg.name or str(own))
        out = {**schema, "properties": properties}
        if required:
            out["required"] = required
        else:
            out.pop("required", None)
        return out

    def arguments_back(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """A call's arguments as the tool names them: renamed back, hidden and defaults filled.

        Raises:
            ValueError: an argument is sent under a name that is not listed: a hidden one, or one
                renamed away (so a fixed value cannot be overridden by its first name).
        """
        shown_names = {arg.name or own for own, arg in self.arguments.items() if not arg.hide}
        for sent in arguments:
            arg = self.arguments.get(sent)
            if arg is not None and sent not in shown_names:
                if arg.hide:
                    raise ValueError(f"argument {sent!r} of {self.name!r} is fixed and cannot be set")
                raise ValueError(f"{self.name!r} has no argument {sent!r} (it is called {arg.name!r})")
        mapped = dict(arguments)
        # Take every renamed value out first, so that a name given to one argument can be the
        # first name of another (a swap) without one overwriting the other.
        taken = {
            own: mapped.pop(arg.name or own)
            for own, arg in self.arguments.items()
            if not arg.hide and (arg.name or own) in mapped
        }
        for own, arg in self.arguments.items():
            if arg.hide:
                mapped[own] = arg.default
            elif own in taken:
                mapped[own] = taken[own]
            elif arg.default is not _UNSET:
                mapped[own] = arg.default
        return mapped


class TransformsAPI(CatalogAPI):
    """Transforming tools, and calling a composed server's tools."""

    def transform_tool(
        self,
        tool: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        arguments: Mapping[str, Arg] | None = None,
        wrap: Callable[[dict[str, Any], Forward], Awaitable[Any]] | None = None,
    ) -> ToolTransform:
        """List the tool *tool* (as this server lists it: its own or a mounted one) transformed
        (see the module). Raises ``ValueError`` for a name taken by another transform."""
        transform = ToolTransform(tool, name or tool, title, description, dict(arguments or {}), wrap)
        for other in self._tool_transforms.values():
            if other.source != tool and other.name == transform.name:
                raise ValueError(f"another tool is already listed as {transform.name!r}")
        self._tool_transforms[tool] = transform
        self._recompose()
        self._changed("tools")
        return transform

    def _transformed(self, items: list[dict[str, Any]], scope: Scope) -> list[dict[str, Any]]:
        transforms = self._tool_transforms
        return [
            transforms[item["name"]].listed(item, scope) if item["name"] in transforms else item
            for item in items
        ]

    def _untransformed(self, name: str) -> str:
        transform = self._transform_named(name)
        return name if transform is None else transform.source

    def _transform_named(self, name: str) -> ToolTransform | None:
        for transform in self._tool_transforms.values():
            if transform.name == name:
                return transform  # type: ignore[no-any-return]
        return None

    async def _call_composed(self, name: str, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """``tools/call`` on a composed server: what is hidden is refused, a transformed name is
        mapped back, then the server's own tool or a mounted server's answers."""
        if self._is_hidden("tools", name, ctx):
            raise InvalidParams(f"Unknown tool: {name}")
        transform = self._transform_named(name)
        if transform is None:
            if name in self._tool_transforms:  # listed under another name only
                raise InvalidParams(f"Unknown tool: {name}")
            return await self._call_untransformed(name, params, ctx)
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams("tools/call params.arguments must be an object")
        try:
            mapped = transform.arguments_back(arguments or {})
        except ValueError as exc:  # an argument sent by a name that is not listed
            return shape_call_result(
                {"content": [{"type": "text", "text": str(exc)}], "isError": True}, ctx.scope
            )
        source = transform.source
        if transform.wrap is None:
            return await self._call_untransformed(
                source, {**params, "name": source, "arguments": mapped}, ctx
            )

        inline = {key: value for key, value in params.items() if key != "task"}  # see listed()

        async def forward(arguments: dict[str, Any]) -> CallToolResult:
            result = await self._call_untransformed(
                source, {**inline, "name": source, "arguments": arguments}, ctx
            )
            return msgspec.convert(result, CallToolResult)

        value = await transform.wrap(mapped, forward)
        if isinstance(value, CallToolResult):
            built: dict[str, Any] = msgspec.to_builtins(value)
        elif isinstance(value, dict) and "content" in value:
            built = value
        else:
            built = {"content": to_content(value)}
        return shape_call_result(built, ctx.scope)

    async def _call_untransformed(self, name: str, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        tool = self._tools.get(name)
        if tool is not None:
            return await self._call_own(tool, name, params, ctx)
        return await self._forward("tools/call", "name", params, ctx)  # type: ignore[no-any-return]

    async def _call_own(self, tool: Any, name: str, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        raise NotImplementedError  # the tools' part provides it
