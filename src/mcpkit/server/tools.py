"""Tools: typed functions registered, listed, validated, called, and run as tasks."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import string
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, Final, TypedDict, Unpack, overload

import msgspec

from .._compat import shape_call_result, shape_tool
from .._errors import (
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    MissingClientCapability,
    RPCError,
    ToolError,
)
from .._headers import mirrored_parameters
from .._mrtr import BecomeTask
from .._signature import ArgumentError, inspect_function
from ..context import Context
from ..tasks import TASKS_EXTENSION
from ..types import (
    Icon,
    Tool,
    ToolAnnotations,
)

if TYPE_CHECKING:
    pass

from .._pagination import paginate
from ._base import (
    F,
    RateLimit,
    RegisteredTool,
    TaskSupport,
    declares_tasks,
    invoke,
    is_repeatable,
    raw_signature,
)
from ._fastpath import PlainCalls
from ._results import error_result, to_call_result, tool_failed, without_output
from .apps import Visibility, app_only, tool_ui_meta
from .task_methods import TaskMethods
from .transforms import TransformsAPI
from .visibility import session_filter

logger = logging.getLogger("mcpkit.server")

# Checked with sets rather than regular expressions: compiling a pattern costs more than all the
# checks a server makes, and it would be paid by every server's start-up (callgrind).
#: The spec's tool names: 1 to 128 of A-Z a-z 0-9 _ - .
_TOOL_NAME_CHARS: Final = frozenset(string.ascii_letters + string.digits + "_-.")
#: RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
_SCOPE_CHARS: Final = frozenset(chr(c) for c in range(0x21, 0x7F)) - {"\x22", "\x5c"}


class ToolOptions(TypedDict, total=False):
    """What ``@server.tool(...)`` accepts besides the function."""

    name: str  # default: the function's name
    title: str  # a display name (2025-06-18 and later)
    description: str  # default: the docstring, less its Args section
    annotations: ToolAnnotations  # behaviour hints (read-only, destructive...)
    icons: list[Icon]
    meta: dict[str, Any]  # the tool's _meta
    structured_output: bool  # False: no outputSchema even when the return annotation gives one
    task_support: TaskSupport  # may (optional) or must (required) the tool run as a task
    defer_task: bool  # 2026-07-28: run inline until the handler calls ctx.become_task()
    input_schema: dict[str, Any]  # list this JSON Schema instead of the one the signature gives
    timeout: float  # seconds before the call answers a tool error (default: Server(tool_timeout=))
    rate_limit: str  # "10/s", "100/m", "5/10s": a token bucket per client connection
    ui: str  # MCP Apps: the ui:// resource that shows this tool's results (see server.ui_resource)
    visibility: Sequence[Visibility]  # MCP Apps: ["model", "app"] (default), or ["app"]: views only
    scopes: Sequence[str]  # OAuth scopes a caller needs (protected HTTP servers only): 403 without
    blocking: bool  # False: a def tool that never blocks runs on the event loop, with no thread hop
    repeatable: bool  # a fleet may run it again when its node dies mid-call (default: from the hints)
    tags: Collection[str]  # labels for server.disable(tags=...) and transforms; never sent to clients


class ToolsAPI(PlainCalls, TaskMethods, TransformsAPI):
    """Tools: registration, ``tools/list``, ``tools/call`` (and starting tools as tasks).

    Takes three keyword arguments of :class:`~mcpkit.Server` besides those of the classes after it:
    ``tool_timeout`` (seconds, default ``None``: tools may run as long as they like),
    ``mask_errors`` (default ``False``: the peer reads ``Error executing tool NAME: Type: message``;
    ``True``: ``Error executing tool NAME`` only; either way the exception is logged with its
    traceback on the ``mcpkit.server`` logger, and no traceback is ever sent to the peer) and
    ``hide_unauthorized_tools`` (default ``True``: on a protected server, ``tools/list`` leaves out
    the tools whose ``scopes`` the caller's token lacks; ``False`` lists them all).

    Per-tool scopes (``@server.tool(scopes=[...])``) are checked where a token was verified
    (``ctx.auth`` is set: a protected HTTP server). The HTTP layer asks :meth:`required_scopes`
    before the request is handled and answers 403 ``insufficient_scope`` itself (so the client can
    step up); :meth:`_call_tool` checks again, for any path that reaches it otherwise, before the
    tool runs. Where nothing was verified (stdio, HTTP without ``auth=``) they are not enforced:
    who may start a stdio server may call its tools.
    """

    def __init__(
        self,
        *args: Any,
        tool_timeout: float | None = None,
        mask_errors: bool = False,
        hide_unauthorized_tools: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if tool_timeout is not None and not tool_timeout > 0:
            raise ValueError("tool_timeout must be a positive number of seconds (or None)")
        self.tool_timeout = tool_timeout
        self.mask_errors = mask_errors
        self.hide_unauthorized_tools = hide_unauthorized_tools

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
        task_support: TaskSupport = "forbidden",
        defer_task: bool = False,
        input_schema: dict[str, Any] | None = None,
        timeout: float | None = None,
        rate_limit: str | None = None,
        ui: str | None = None,
        visibility: Sequence[Visibility] | None = None,
        scopes: Sequence[str] | None = None,
        blocking: bool = True,
        repeatable: bool | None = None,
        tags: Collection[str] = (),
    ) -> Tool:
        """Register *fn* as a tool and return its definition.

        ``task_support="optional"`` lets clients run it as a task (2025-11-25 ``task`` parameter;
        in 2026-07-28 the server runs it as one for clients of the tasks extension);
        ``"required"`` means it only runs as a task where the revision has tasks.
        ``defer_task=True``: for a 2026-07-28 client the handler starts inline (so it can gather
        input over multi round-trip rounds) and becomes a task when it calls ``ctx.become_task()``.
        ``input_schema``: a hand-written JSON Schema to list (any 2020-12 keywords); arguments are
        still bound and checked by the signature, so keep the two in agreement.
        ``timeout``: seconds after which the call answers a tool error (``isError``) saying so. An
        ``async def`` tool is cancelled then (its work really stops); a ``def`` tool's thread cannot
        be killed, so it runs on and its result is discarded. Default: ``Server(tool_timeout=...)``.
        ``rate_limit``: ``"N/s"``, ``"N/m"``, ``"N/h"`` or ``"N/10s"``, a token bucket per caller
        as :class:`mcpkit.middleware.RateLimit` tells callers apart (a connection, else a token's
        subject, else one bucket for every 2026-07-28 request); a call over it answers a tool error.
        ``ui``: the ``ui://`` resource (:meth:`ui_resource`) a host of MCP Apps shows the results in;
        ``visibility``: ``["app"]`` keeps the tool from the model (and from ``tools/list`` for
        clients without the extension). See :mod:`mcpkit.server.apps`.
        ``scopes``: OAuth scopes a caller's token must grant (besides the server-wide ones) to call
        the tool, on a protected HTTP server: a call without them answers HTTP 403
        ``insufficient_scope`` naming them, and ``tools/list`` hides the tool from such callers
        (``Server(hide_unauthorized_tools=False)`` lists it). Not enforced over stdio.
        ``blocking=False``: a plain ``def`` tool that never blocks (no I/O, no sleeping, quick to
        compute) is called on the event loop instead of a worker thread, which saves the hand-off
        (most of a small tool's cost); while it runs, nothing else is served, and ``timeout``
        cannot interrupt it. Default: ``def`` tools run on worker threads.
        ``repeatable``: whether a fleet may run a call again on another node when the one running
        it died mid-call (:mod:`mcpkit.fleet.takeover`); else the caller is told that
        the outcome is unknown. Default: if ``annotations`` say read-only or idempotent.

        Raises:
            ValueError: the name breaks the spec's rules for tool names, or is taken; a bad
                ``timeout``, ``rate_limit``, ``ui``, ``visibility`` or ``scopes``.
            TypeError: the signature cannot be described (``*args``, positional-only parameters);
                ``blocking=False`` on an ``async def`` tool (it is never run on a thread).
        """
        tool_name = name or fn.__name__
        if not 0 < len(tool_name) <= 128 or not _TOOL_NAME_CHARS.issuperset(tool_name):
            raise ValueError(
                f"invalid tool name {tool_name!r}: use 1 to 128 of A-Z a-z 0-9 _ - . (no spaces or other characters)"
            )
        if tool_name in self._tools:
            raise ValueError(f"a tool named {tool_name!r} is already registered")
        if timeout is not None and not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds")
        limiter = RateLimit(rate_limit) if rate_limit is not None else None
        if isinstance(scopes, str):
            raise ValueError("scopes is a list of scope names, not a string")
        needed = tuple(dict.fromkeys(scopes or ()))
        if any(not scope or not _SCOPE_CHARS.issuperset(scope) for scope in needed):
            raise ValueError(
                f"invalid scopes {list(needed)!r}: each is one or more printable ASCII characters, no spaces, quotes or backslashes"
            )
        meta = tool_ui_meta(meta, ui, visibility)
        signature = inspect_function(fn, skip_types=(Context,))
        if not blocking:
            if signature.is_async:
                raise TypeError(
                    f"{tool_name}: blocking=False is for def tools; an async def tool never blocks a thread"
                )
            signature = dataclasses.replace(signature, inline=True)
        use_output = signature.output_schema is not None and structured_output is not False
        definition = Tool(
            name=tool_name,
            input_schema=input_schema if input_schema is not None else signature.input_schema,
            title=title,
            description=description if description is not None else signature.description or None,
            output_schema=signature.output_schema if use_output and signature.output_schema else None,
            annotations=annotations,
            icons=icons,
            meta=meta,
            execution={"taskSupport": task_support} if task_support != "forbidden" else None,
        )
        mirrored = mirrored_parameters(signature.input_schema)  # raises ValueError for a bad x-mcp-header
        self._tools[tool_name] = RegisteredTool(
            fn,
            signature,
            msgspec.to_builtins(definition),
            task_support,
            mirrored,
            defer_task,
            timeout,
            limiter,
            scopes=needed,
            repeatable=is_repeatable(repeatable, annotations),
        )
        self._tools[tool_name].tags = frozenset(tags)
        if not use_output:
            self._tools[tool_name].signature = without_output(signature)
        if ui is not None or visibility is not None:
            self._tools[tool_name].app_only = app_only(self._tools[tool_name].wire)
            self._serves_apps = True
        self._changed("tools")
        return definition

    def add_raw_tool(
        self,
        definition: Tool | dict[str, Any],
        fn: Callable[[dict[str, Any], Context], Awaitable[Any]],
        *,
        tags: Collection[str] = (),
        timeout: float | None = None,
        repeatable: bool | None = None,
    ) -> Tool:
        """Register a tool from its wire *definition* and ``async fn(arguments, ctx)``.

        For tools whose schema is not a Python signature (an OpenAPI operation, a proxied tool):
        *fn* gets the call's ``arguments`` as sent (a dict, not checked against ``inputSchema``)
        and returns what a tool function may (a value, content blocks, a ``CallToolResult``).
        """
        tool = definition if isinstance(definition, Tool) else msgspec.convert(definition, Tool)
        name = tool.name
        if not 0 < len(name) <= 128 or not _TOOL_NAME_CHARS.issuperset(name):
            raise ValueError(f"invalid tool name {name!r}: use 1 to 128 of A-Z a-z 0-9 _ - .")
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        if timeout is not None and not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds")
        signature = raw_signature(tool.input_schema, tool.description)

        async def call(arguments: dict[str, Any], ctx: Context) -> Any:
            return await fn(arguments, ctx)  # positionally: the user's parameters may be named anyhow

        registered = RegisteredTool(
            call,
            signature,
            msgspec.to_builtins(tool),
            timeout=timeout,
            repeatable=is_repeatable(repeatable, tool.annotations),
        )
        registered.tags = frozenset(tags)
        self._tools[name] = registered
        self._changed("tools")
        return tool

    def mirrored_parameters(self, tool: str) -> dict[str, tuple[str, ...]]:
        registered = self._tools.get(tool)
        return registered.mirrored if registered is not None else {}

    def repeatable(self, tool: str) -> bool:
        """Whether a call of *tool* may run again when its process died mid-call (a fleet)."""
        registered = self._tools.get(tool)
        return registered is not None and registered.repeatable

    def remove_tool(self, name: str) -> None:
        """Unregister a tool. Raises ``KeyError`` if there is none of that name."""
        del self._tools[name]
        self._changed("tools")

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, in ``tools/list`` order."""
        return [msgspec.convert(t.wire, Tool) for t in self._tools.values()]

    def required_scopes(self, method: str, params: dict[str, Any]) -> tuple[str, ...]:
        """The scopes a request needs beyond the server-wide ones: a tool's ``scopes`` for its
        ``tools/call``. A protected HTTP app asks before handling the request (see
        :class:`mcpkit.transports.http.server.auth.ScopedEndpoint`)."""
        if method != "tools/call":
            return ()
        name = params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None
        return tool.scopes if tool is not None else ()

    def _own_tool_names(self, ctx: Context) -> list[str]:
        """This server's own tools that *ctx*'s caller may see (views-only ones need views; on a
        protected server, the scopes the token grants)."""
        names = list(self._tools)
        if not ctx.supports_ui:  # a tool for views only has no use without them (see .apps)
            names = [name for name in names if not self._tools[name].app_only]
        auth = ctx.auth
        if auth is not None and self.hide_unauthorized_tools:
            names = [name for name in names if auth.has_scopes(self._tools[name].scopes)]
        return names

    async def _list_tools(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        hiding = ctx.auth is not None and self.hide_unauthorized_tools
        if self._composed or session_filter(ctx):
            result = await self._list_page("tools", params, ctx)
        else:
            names = self._own_tool_names(ctx)
            shown, next_cursor = paginate(names, params.get("cursor"), self.page_size)
            result = {"tools": [shape_tool(self._tools[n].wire, ctx.scope) for n in shown]}
            if next_cursor is not None:
                result["nextCursor"] = next_cursor
        if hiding and ctx.scope.stateless:
            result["cacheScope"] = "private"  # this list is this caller's: no shared cache may keep it
        return result

    async def _call_tool(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call requires params.name (a string)")
        if self._composed or session_filter(ctx):
            return await self._call_composed(name, params, ctx)
        tool = self._tools.get(name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}")
        return await self._call_own(tool, name, params, ctx)

    async def _call_own(
        self, tool: RegisteredTool, name: str, params: dict[str, Any], ctx: Context
    ) -> dict[str, Any]:
        """``tools/call`` of this server's own *tool* (found by *name*)."""
        if tool.scopes and ctx.auth is not None and not ctx.auth.has_scopes(tool.scopes):
            # The HTTP layer answers 403 before this; a path that skipped it still never runs the tool.
            raise InvalidRequest(
                f"Forbidden: tool {name} needs the scopes: {' '.join(tool.scopes)}",
                {"error": "insufficient_scope", "scope": " ".join(tool.scopes)},
            )
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams("tools/call params.arguments must be an object")
        scope = ctx.scope
        if scope.has("tasks"):  # 2025-11-25: the client asks for a task with params.task
            wants_task = isinstance(params.get("task"), dict)
            if wants_task and tool.task_support == "forbidden":
                raise MethodNotFound(f"tool {name!r} cannot run as a task")
            if not wants_task and tool.task_support == "required":
                raise MethodNotFound(f"tool {name!r} must run as a task (add params.task)")
            if wants_task:
                record = await self._start_task(
                    self._runner(tool, name, arguments), ctx, params["task"].get("ttl")
                )
                return {"task": record.wire_v1()}
        elif scope.has("tasks_extension") and tool.task_support != "forbidden":
            if not declares_tasks(scope):
                if tool.task_support == "required":  # "-32021 ... when the client did not declare" it
                    raise MissingClientCapability.for_capabilities({"extensions": {TASKS_EXTENSION: {}}})
            elif tool.defer_task:
                ctx.tasks = self.tasks
                try:
                    result = await self._run_tool(tool, name, arguments, ctx)
                except BecomeTask:
                    record = await self._start_task(self._runner(tool, name, arguments), ctx, None)
                    return {"resultType": "task", **record.wire_v2(detailed=False)}
                return shape_call_result(result, scope)
            else:
                # 2026-07-28: the server decides; a legacy params.task is tolerated but never needed.
                record = await self._start_task(self._runner(tool, name, arguments), ctx, None)
                return {"resultType": "task", **record.wire_v2(detailed=False)}
        result = await self._run_tool(tool, name, arguments, ctx)
        return shape_call_result(result, ctx.scope)

    def _runner(
        self, tool: RegisteredTool, name: str, arguments: dict[str, Any] | None
    ) -> Callable[[Context], Awaitable[dict[str, Any]]]:
        """The tool's call, for :meth:`_start_task` to run as a task with the task's Context."""
        return functools.partial(self._run_tool, tool, name, arguments)

    async def _run_tool(
        self, tool: RegisteredTool, name: str, arguments: dict[str, Any] | None, ctx: Context
    ) -> dict[str, Any]:
        signature = tool.signature
        try:
            kwargs = signature.bind(arguments)
        except ArgumentError as exc:
            return error_result(str(exc))
        if tool.rate_limit is not None and not tool.rate_limit.allows(ctx):
            return error_result(
                f"Rate limit exceeded for tool {name} ({tool.rate_limit.spec}); try again later"
            )
        timeout = tool.timeout if tool.timeout is not None else self.tool_timeout
        deadline: asyncio.Timeout | None = None
        try:
            if timeout is None and signature.is_async and not signature.skipped:
                value = await tool.fn(**kwargs)  # the hot path: what invoke() does, inline
            elif timeout is None:  # no extra task, timer or lock
                value = await invoke(tool.fn, signature, kwargs, ctx)
            else:
                # asyncio.timeout cancels this task at the deadline: an async tool is cancelled
                # where it awaits; a sync tool's thread runs on and its result is dropped.
                async with asyncio.timeout(timeout) as deadline:
                    value = await invoke(tool.fn, signature, kwargs, ctx)
        except ToolError as exc:
            return error_result(str(exc))
        except (RPCError, asyncio.CancelledError):
            raise
        except Exception as exc:
            if deadline is not None and isinstance(exc, TimeoutError) and deadline.expired():
                logger.warning("tool %r timed out after %g s", name, timeout)
                return error_result(f"Tool {name} timed out after {timeout:g} s")
            return tool_failed(name, exc, self.mask_errors)
        return to_call_result(value, signature)


ToolsAPI._plain_call_tool = ToolsAPI._call_tool
ToolsAPI._plain_run_tool = ToolsAPI._run_tool
