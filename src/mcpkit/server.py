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
import contextlib
import dataclasses
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, TypeVar, Unpack, overload

import msgspec

from ._compat import shape_call_result, shape_listed, shape_prompt_result, shape_tool
from ._connection import META_SUBSCRIPTION_ID, Scope
from ._errors import (
    ConnectionClosed,
    InvalidParams,
    MethodNotFound,
    MissingClientCapability,
    RPCError,
    ToolError,
)
from ._headers import mirrored_parameters
from ._mrtr import BecomeTask
from ._prompts import PromptRegistry, to_messages
from ._resources import ResourceRegistry, to_contents
from ._signature import ArgumentError, ToolSignature, inspect_function
from .context import Context
from .lowlevel import Listener, LowLevelServer
from .tasks import RELATED_TASK, TASKS_EXTENSION, TERMINAL, TaskRecord, TaskRunner
from .types import (
    CONTENT_TYPES,
    Annotations,
    CallToolResult,
    Completion,
    Icon,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
)

if TYPE_CHECKING:
    from os import PathLike

    from .skills import Skill, SkillLibrary

__all__ = ["Server", "ToolOptions"]

F = TypeVar("F", bound=Callable[..., Any])

# "The following SHOULD be the only allowed characters: uppercase and lowercase ASCII letters (A-Z,
# a-z), digits (0-9), underscore (_), hyphen (-), and dot (.)"; "between 1 and 128 characters".
_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_json_encode: Final = msgspec.json.Encoder().encode


TaskSupport = Literal["forbidden", "optional", "required"]


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


@dataclass(slots=True)
class _RegisteredTool:
    fn: Callable[..., Any]
    signature: ToolSignature
    wire: dict[str, Any]  # the Tool as the newest revision lists it
    task_support: TaskSupport = "forbidden"
    mirrored: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)  # x-mcp-header
    defer_task: bool = False


class Server(LowLevelServer):
    """An MCP server whose tools are typed Python functions.

    Args:
        name: the server's name in ``serverInfo``.
        version: its version.
        page_size: how many items one page of a list result holds (``None``: all in one page).
        **kwargs: ``title``, ``instructions``, ``icons``, ``website_url`` (see :class:`LowLevelServer`).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        page_size: int | None = None,
        tasks: TaskRunner | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, version, **kwargs)
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.page_size = page_size
        self._background: set[asyncio.Task[None]] = set()
        self._closing: asyncio.Event | None = None  # set to end every listen stream
        self._tools: dict[str, _RegisteredTool] = {}
        self._resources = ResourceRegistry()
        self._prompts = PromptRegistry()
        self._completers: dict[tuple[str, str, str], Callable[..., Any]] = {}
        self._skills: SkillLibrary | None = None  # made by add_skills
        self.set_handler("tools/list", self._list_tools)
        self.set_handler("tools/call", self._call_tool)
        self.set_handler("subscriptions/listen", self._listen)
        #: Runs tools started as tasks; pass ``tasks=TaskRunner(store=...)`` to keep them elsewhere.
        self.tasks = tasks if tasks is not None else TaskRunner()
        for method, handler in (
            ("tasks/get", self._task_get),
            ("tasks/result", self._task_result),
            ("tasks/list", self._task_list),
            ("tasks/cancel", self._task_cancel),
            ("tasks/update", self._task_update),
        ):
            self.set_handler(method, handler)

    @property
    def list_changed_kinds(self) -> frozenset[str]:  # type: ignore[override]
        # A list that can change at run time is announced: tools always; the others once used.
        kinds = {"tools"}
        if "prompts/list" in self._handlers:
            kinds.add("prompts")
        if "resources/list" in self._handlers:
            kinds.add("resources")
        return frozenset(kinds)

    def capabilities(self, scope: Scope) -> dict[str, Any]:
        caps = super().capabilities(scope)
        for kind in self.list_changed_kinds:
            caps[kind] = {**caps.get(kind, {}), "listChanged": True}
        if "resources" in caps and scope.has("resource_subscribe"):
            caps["resources"]["subscribe"] = True
        if any(tool.task_support != "forbidden" for tool in self._tools.values()):
            if scope.has("tasks"):
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            elif scope.has("tasks_extension"):
                caps["extensions"] = {**caps.get("extensions", {}), TASKS_EXTENSION: {}}
        if self._skills is not None:  # the skills extension, declared in both eras
            caps["extensions"] = {**caps.get("extensions", {}), **self._skills.capability()}
        return caps

    def _changed(self, kind: str) -> None:
        """Announce a change of a list to whoever listens. Safe from sync tools' worker threads."""
        loop = self.loop
        if loop is None or not self.listeners:
            return  # not serving yet, or nobody to tell

        def announce() -> None:
            task = loop.create_task(self.notify_list_changed(kind))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            announce()
        else:
            loop.call_soon_threadsafe(announce)

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
    ) -> Tool:
        """Register *fn* as a tool and return its definition.

        ``task_support="optional"`` lets clients run it as a task (2025-11-25 ``task`` parameter;
        in 2026-07-28 the server runs it as one for clients of the tasks extension);
        ``"required"`` means it only runs as a task where the revision has tasks.
        ``defer_task=True``: for a 2026-07-28 client the handler starts inline (so it can gather
        input over multi round-trip rounds) and becomes a task when it calls ``ctx.become_task()``.
        ``input_schema``: a hand-written JSON Schema to list (any 2020-12 keywords); arguments are
        still bound and checked by the signature, so keep the two in agreement.

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
            input_schema=input_schema if input_schema is not None else signature.input_schema,
            title=title if title is not None else msgspec.UNSET,
            description=description if description is not None else (signature.description or msgspec.UNSET),
            output_schema=signature.output_schema
            if use_output and signature.output_schema
            else msgspec.UNSET,
            annotations=annotations if annotations is not None else msgspec.UNSET,
            icons=icons if icons is not None else msgspec.UNSET,
            meta=meta if meta is not None else msgspec.UNSET,
            execution={"taskSupport": task_support} if task_support != "forbidden" else msgspec.UNSET,
        )
        mirrored = mirrored_parameters(signature.input_schema)  # raises ValueError for a bad x-mcp-header
        self._tools[tool_name] = _RegisteredTool(
            fn, signature, msgspec.to_builtins(definition), task_support, mirrored, defer_task
        )
        if not use_output:
            self._tools[tool_name].signature = _without_output(signature)
        self._changed("tools")
        return definition

    def mirrored_parameters(self, tool: str) -> dict[str, tuple[str, ...]]:
        registered = self._tools.get(tool)
        return registered.mirrored if registered is not None else {}

    def remove_tool(self, name: str) -> None:
        """Unregister a tool. Raises ``KeyError`` if there is none of that name."""
        del self._tools[name]
        self._changed("tools")

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
        scope = ctx.scope
        if scope.has("tasks"):  # 2025-11-25: the client asks for a task with params.task
            wants_task = isinstance(params.get("task"), dict)
            if wants_task and tool.task_support == "forbidden":
                raise MethodNotFound(f"tool {name!r} cannot run as a task")
            if not wants_task and tool.task_support == "required":
                raise MethodNotFound(f"tool {name!r} must run as a task (add params.task)")
            if wants_task:
                record = self._start_task(tool, name, arguments, ctx, params["task"].get("ttl"))
                return {"task": record.wire_v1()}
        elif scope.has("tasks_extension") and tool.task_support != "forbidden":
            if not _declares_tasks(scope):
                if tool.task_support == "required":  # "-32021 ... when the client did not declare" it
                    raise MissingClientCapability.for_capabilities({"extensions": {TASKS_EXTENSION: {}}})
            elif tool.defer_task:
                ctx.tasks = self.tasks
                try:
                    result = await self._run_tool(tool, name, arguments, ctx)
                except BecomeTask:
                    record = self._start_task(tool, name, arguments, ctx, None)
                    return {"resultType": "task", **record.wire_v2(detailed=False)}
                return shape_call_result(result, scope)
            else:
                # 2026-07-28: the server decides; a legacy params.task is tolerated but never needed.
                record = self._start_task(tool, name, arguments, ctx, None)
                return {"resultType": "task", **record.wire_v2(detailed=False)}
        result = await self._run_tool(tool, name, arguments, ctx)
        return shape_call_result(result, ctx.scope)

    # -- tasks -------------------------------------------------------------------------------------

    def _start_task(
        self, tool: _RegisteredTool, name: str, arguments: dict[str, Any] | None, ctx: Context, ttl: Any
    ) -> TaskRecord:
        task_ctx = Context(ctx.peer, ctx.request_id, ctx.method, ctx.scope, ctx.meta, ctx.connection)
        task_ctx.tasks = self.tasks
        task_ctx.answers = ctx.answers  # a deferred task replays the rounds answered before it

        async def work(record: TaskRecord) -> dict[str, Any]:
            task_ctx.task = record
            result = shape_call_result(await self._run_tool(tool, name, arguments, task_ctx), ctx.scope)
            if not ctx.scope.stateless:
                result["_meta"] = {**result.get("_meta", {}), RELATED_TASK: {"taskId": record.task_id}}
            return result

        on_change = None
        if not ctx.scope.stateless:

            async def on_change(record: TaskRecord) -> None:
                with contextlib.suppress(ConnectionClosed, OSError):
                    await ctx.peer.notify("notifications/tasks/status", record.wire_v1())

        return self.tasks.start(work, ttl, on_change)

    def _gate_tasks(self, ctx: Context) -> None:
        # "the server MUST reject tasks/get, tasks/update, and tasks/cancel with a
        # MissingRequiredClientCapability error" for requests without the extension.
        if ctx.scope.stateless and not _declares_tasks(ctx.scope):
            raise MissingClientCapability.for_capabilities({"extensions": {TASKS_EXTENSION: {}}})

    async def _task_get(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        self._gate_tasks(ctx)
        record = self.tasks.find(params)
        return record.wire_v2(detailed=True) if ctx.scope.stateless else record.wire_v1()

    async def _task_result(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        record = self.tasks.find(params)
        # "it MUST block the response until the task reaches a terminal status"
        await record.done.wait()
        if record.status == "completed" and record.result is not None:
            return record.result
        if record.error is not None:
            raise RPCError.from_wire(record.error)
        raise RPCError(-32603, f"task {record.task_id} was {record.status}", {"taskId": record.task_id})

    async def _task_list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        records = {r.task_id: r for r in self.tasks.store.all()}
        page, cursor = _paginate(list(records), params.get("cursor"), self.page_size)
        return _page("tasks", [records[task_id].wire_v1() for task_id in page], cursor)

    async def _task_cancel(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        self._gate_tasks(ctx)
        record = self.tasks.find(params)
        if ctx.scope.stateless:
            await self.tasks.cancel(record)  # idempotent: an empty acknowledgement either way
            return {}
        if record.status in TERMINAL:
            raise InvalidParams(f"task {record.task_id} is already {record.status}")
        await self.tasks.cancel(record)
        return record.wire_v1()

    async def _task_update(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        self._gate_tasks(ctx)
        self.tasks.answer(self.tasks.find(params), params.get("inputResponses"))
        return {}

    async def _run_tool(
        self, tool: _RegisteredTool, name: str, arguments: dict[str, Any] | None, ctx: Context
    ) -> dict[str, Any]:
        signature = tool.signature
        try:
            kwargs = signature.bind(arguments)
        except ArgumentError as exc:
            return _error_result(str(exc))
        try:
            value = await _invoke(tool.fn, signature, kwargs, ctx)
        except ToolError as exc:
            return _error_result(str(exc))
        except (RPCError, asyncio.CancelledError):
            raise
        except Exception as exc:
            return _error_result(f"Error executing tool {name}: {type(exc).__name__}: {exc}")
        return _to_call_result(value, signature)

    # -- resources ---------------------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Register a function that reads the resource *uri*, a plain URI or an RFC 6570 template.

        For a template (``notes://{id}``) the function's parameters are its variables.
        """

        def register(fn: F) -> F:
            self.add_resource(
                fn, uri, name=name, title=title, description=description, mime_type=mime_type,
                size=size, annotations=annotations, icons=icons, meta=meta,
            )  # fmt: skip
            return fn

        return register

    def add_resource(self, fn: Callable[..., Any], uri: str, **options: Any) -> Resource | ResourceTemplate:
        """Register *fn* as the reader of *uri* (see :meth:`resource` for the options)."""
        options.setdefault("name", None)
        for key in ("title", "description", "mime_type", "size", "annotations", "icons", "meta"):
            options.setdefault(key, None)
        definition = self._resources.add(fn, uri, skip_types=(Context,), **options)
        if "resources/list" not in self._handlers:
            self.set_handler("resources/list", self._list_resources)
            self.set_handler("resources/templates/list", self._list_templates)
            self.set_handler("resources/read", self._read_resource)
            self.set_handler("resources/subscribe", self._subscribe)
            self.set_handler("resources/unsubscribe", self._unsubscribe)
        self._changed("resources")
        return definition

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource or resource template. Raises ``KeyError``."""
        self._resources.remove(uri)
        self._changed("resources")

    async def resource_updated(self, uri: str) -> None:
        """Tell subscribers that the resource at *uri* changed (``notifications/resources/updated``)."""
        await self.notify_resource_updated(uri)

    async def _list_resources(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        readers = self._resources.fixed
        page, cursor = _paginate(list(readers), params.get("cursor"), self.page_size)
        return _page("resources", [shape_listed(readers[u].wire, ctx.scope) for u in page], cursor)

    async def _list_templates(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        readers = self._resources.templates
        page, cursor = _paginate(list(readers), params.get("cursor"), self.page_size)
        return _page("resourceTemplates", [shape_listed(readers[u].wire, ctx.scope) for u in page], cursor)

    async def _read_resource(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read requires params.uri (a string)")
        reader, kwargs = self._resources.find(uri)
        value = await _invoke(reader.fn, reader.signature, kwargs, ctx)
        return {"contents": to_contents(value, uri, reader.mime_type)}

    async def _subscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        listener = self._listener_for(params, ctx)
        listener.uris.add(params["uri"])
        return {}

    async def _unsubscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        self._listener_for(params, ctx).uris.discard(params["uri"])
        return {}

    def _listener_for(self, params: dict[str, Any], ctx: Context) -> Listener:
        if not isinstance(params.get("uri"), str):
            raise InvalidParams("params.uri (a string) is required")
        listener = self.session_listener(ctx.connection) if ctx.connection is not None else None
        if listener is None:
            raise InvalidParams("resource subscriptions need an initialized session")
        return listener

    # -- skills (the io.modelcontextprotocol/skills extension, SEP-2640) ----------------------------

    def add_skills(
        self, path: str | PathLike[str], *, prefix: str | None = None, directory_read: bool = True
    ) -> list[Skill]:
        """Serve the Agent Skills under *path*: each folder below it holding a ``SKILL.md`` (or *path*
        itself) is a skill, and its files become ``skill://<skill-path>/<file>`` resources.

        Args:
            path: the folder of skills (or of one skill).
            prefix: segments to put before every skill path (``"acme/billing"``).
            directory_read: also answer ``resources/directory/read`` (``directoryRead: true``).

        Returns:
            The entries of the skills added, as ``skills/list`` sends them.

        Raises:
            ValueError: no skill there, a ``SKILL.md`` without valid frontmatter, a name that breaks
                the naming rules or differs from its folder's, a skill over the size limits, or a
                URI already served.
        """
        from .skills import SkillLibrary

        library = self._skills if self._skills is not None else SkillLibrary(self)
        added = library.add(path, prefix=prefix, directory_read=directory_read)
        self._skills = library  # declared once something is served
        return added

    # -- prompts -----------------------------------------------------------------------------------

    def prompt(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Any:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=..., title=...)``."""

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, title=title, description=description, icons=icons, meta=meta)
            return fn

        return register(fn) if fn is not None else register

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        """Register *fn* as a prompt (see :meth:`prompt` for the options)."""
        for key in ("name", "title", "description", "icons", "meta"):
            options.setdefault(key, None)
        definition = self._prompts.add(fn, skip_types=(Context,), **options)
        if "prompts/list" not in self._handlers:
            self.set_handler("prompts/list", self._list_prompts)
            self.set_handler("prompts/get", self._get_prompt)
        self._changed("prompts")
        return definition

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt. Raises ``KeyError``."""
        del self._prompts.prompts[name]
        self._changed("prompts")

    async def _list_prompts(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        prompts = self._prompts.prompts
        page, cursor = _paginate(list(prompts), params.get("cursor"), self.page_size)
        return _page("prompts", [shape_listed(prompts[n].wire, ctx.scope) for n in page], cursor)

    async def _get_prompt(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        prompt, kwargs = self._prompts.find(params.get("name"), params.get("arguments"))
        value = await _invoke(prompt.fn, prompt.signature, kwargs, ctx)
        result = to_messages(value)
        description = prompt.wire.get("description")
        if description is not None:
            result.setdefault("description", description)
        return shape_prompt_result(result, ctx.scope)

    # -- completion --------------------------------------------------------------------------------

    def completion(
        self, *, argument: str, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Register ``fn(value, arguments) -> list[str]`` suggesting values for an argument.

        Name either a *prompt* or a *resource* template, and the *argument* (or template variable).
        ``arguments`` holds the values the client has already filled in (``context.arguments``).
        """
        if (prompt is None) == (resource is None):
            raise ValueError("name exactly one of prompt= or resource=")
        key = (
            ("ref/prompt", prompt, argument)
            if prompt is not None
            else ("ref/resource", str(resource), argument)
        )

        def register(fn: F) -> F:
            self._completers[key] = fn
            self.set_handler("completion/complete", self._complete)
            return fn

        return register

    async def _complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        ref, argument = params.get("ref"), params.get("argument")
        if (
            not isinstance(ref, dict)
            or not isinstance(argument, dict)
            or not isinstance(argument.get("name"), str)
        ):
            raise InvalidParams("completion/complete requires params.ref and params.argument.name")
        kind = ref.get("type")
        target = ref.get("name") if kind == "ref/prompt" else ref.get("uri")
        if kind == "ref/prompt" and target not in self._prompts.prompts:
            raise InvalidParams(f"Unknown prompt: {target}")
        if (
            kind == "ref/resource"
            and target not in self._resources.templates
            and target not in self._resources.fixed
        ):
            raise InvalidParams(f"Unknown resource template: {target}")
        if kind not in ("ref/prompt", "ref/resource"):
            raise InvalidParams(f"unknown reference type {kind!r}")
        completer = self._completers.get((kind, target, argument["name"]))  # type: ignore[arg-type]
        if completer is None:
            return {"completion": {"values": [], "hasMore": False}}
        context = params.get("context")
        known = context.get("arguments", {}) if isinstance(context, dict) else {}
        value = argument.get("value", "")
        if asyncio.iscoroutinefunction(completer):
            found = await completer(value, known)
        else:
            found = completer(value, known)
        if isinstance(found, Completion):
            return {"completion": msgspec.to_builtins(found)}
        values = [str(v) for v in found]
        # "The server MUST NOT return more than 100 items": the rest is counted, not sent.
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}

    # -- subscriptions/listen (2026-07-28) ---------------------------------------------------------

    async def _listen(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise InvalidParams("subscriptions/listen requires params.notifications (an object)")
        agreed: dict[str, Any] = {}
        kinds: set[str] = set()
        for kind, flag in (
            ("tools", "toolsListChanged"),
            ("prompts", "promptsListChanged"),
            ("resources", "resourcesListChanged"),
        ):
            if wanted.get(flag) is True and kind in self.list_changed_kinds:
                agreed[flag] = True
                kinds.add(kind)
        uris = wanted.get("resourceSubscriptions")
        subscribed: set[str] = set()
        if isinstance(uris, list) and "resources/read" in self._handlers:
            subscribed = {u for u in uris if isinstance(u, str)}
            agreed["resourceSubscriptions"] = sorted(subscribed)
        listener = Listener(ctx.peer, kinds=kinds, uris=subscribed, subscription_id=ctx.request_id)
        # "The server MUST send notifications/subscriptions/acknowledged as the first message".
        await listener.send("notifications/subscriptions/acknowledged", {"notifications": agreed})
        self.add_listener(listener)
        if self._closing is None:
            self._closing = asyncio.Event()
        closing = asyncio.ensure_future(self._closing.wait())
        gone = asyncio.ensure_future(ctx.peer.closed.wait())  # the client went away: stop at once
        try:
            await asyncio.wait({closing, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
            gone.cancel()
            self.remove_listener(listener)
        # The server ends the subscription: a graceful close is a result carrying the id.
        return {"_meta": {META_SUBSCRIPTION_ID: ctx.request_id}}

    async def close_subscriptions(self) -> None:
        """End every ``subscriptions/listen`` stream gracefully (e.g. before shutting down)."""
        if self._closing is not None:
            self._closing.set()
            self._closing = None


async def _invoke(
    fn: Callable[..., Any], signature: ToolSignature, kwargs: dict[str, Any], ctx: Context
) -> Any:
    """Call a user function with its bound arguments and its context parameters filled in."""
    for param in signature.skipped:
        kwargs[param] = ctx
    if signature.is_async:
        return await fn(**kwargs)
    # Sync functions run in a worker thread so that they never block the event loop.
    return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, **kwargs))


def _declares_tasks(scope: Scope) -> bool:
    extensions = scope.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _without_output(signature: ToolSignature) -> ToolSignature:
    return dataclasses.replace(signature, output_schema=None, wrapped_output=False)


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


def _page(key: str, items: list[dict[str, Any]], cursor: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {key: items}
    if cursor is not None:
        result["nextCursor"] = cursor
    return result


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
