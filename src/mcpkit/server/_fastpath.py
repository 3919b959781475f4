"""The shortest way through a plain ``tools/call``: no coroutine chain for a ``def`` tool, one
coroutine for an ``async def`` one (see :meth:`PlainCalls.start_now`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from .. import _jsonrpc as jsonrpc
from .._compat import shape_call_result
from .._connection import Scope, ServerConnection
from .._errors import InternalError, RPCError, ToolError
from .._middleware import Call, Middleware, as_call_result, from_call_result, refused
from .._mrtr import InputRequired
from .._signature import ArgumentError, ToolSignature
from ..context import Context
from ..session import Peer
from ..types import CallToolResult, TextContent
from ._results import error_result, to_call_result, tool_failed
from ._threads import run_sync
from .transforms import TransformsAPI

if TYPE_CHECKING:
    from ..kernel import Outbound
    from ..lowlevel import LowLevelServer

__all__ = ["PlainCalls"]

UNCHECKED: Final = object()  # no tools/call handler checked yet (None is no handler at all)


class PlainCalls(TransformsAPI):
    """:meth:`start_now` and what it shares with the tools' full path (:class:`~.tools.ToolsAPI`)."""

    #: The tools/call handler start_now found to be ours (see there): checked once, not per call.
    _our_call_handler: object = UNCHECKED
    #: ToolsAPI's own handler and runner (set there): start_now serves only calls they would answer.
    _plain_call_tool: Callable[..., Any]
    _plain_run_tool: Callable[..., Any]
    if TYPE_CHECKING:

        async def _call_tool(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]: ...

    def start_now(
        self, request: jsonrpc.Request, scope: Scope, outbound: Outbound, conn: ServerConnection
    ) -> Awaitable[Any] | None:
        """A ``tools/call`` of a plain tool: a ``def`` tool's as the future of its worker thread's
        job, an ``async def`` tool's as one coroutine.

        Otherwise such a call is a task whose coroutines (``handle`` down to ``invoke``) wait for
        the thread and are resumed on the loop to shape its result: more than the tool itself costs
        when it is small. Here what they would do after the thread is done runs in the job's
        *finish*, on the loop, and nothing is resumed. An ``async def`` tool's call skips the
        checks and lookups of :meth:`_handle` and :meth:`_call_tool` made here already, and its
        Context when the tool takes none. Only the plainest calls come this way (no telemetry,
        timeout, rate limit, scopes or tasks, arguments that bind, in 2026-07-28 a first round of a
        tool that takes no Context, and ``tools/call`` still answered by :meth:`_call_tool` and
        :meth:`_run_tool` as written here);
        every other takes :meth:`handle`, which answers the same call the same way.

        A call of a mounted server's tool goes straight to that server's shortest way
        (:meth:`_start_named`); ``tools/call`` middleware of an ``async def`` tool runs here too
        (:meth:`_call_layered`).
        """
        if request.method != "tools/call":
            return None
        params = request.params
        # A 2026-07-28 retry (with requestState) opens the sealed answers in handle().
        if (
            not isinstance(params, dict)
            or "task" in params
            or (conn is not None and conn.session_state is not None)
            or ("requestState" in params and scope.stateless)
        ):
            return None
        name: Any = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(name, str) or (arguments is not None and not isinstance(arguments, dict)):
            return None
        return self._start_named(name, params, arguments, request.id, scope, outbound, conn, params, self)

    def _start_named(
        self,
        name: str,
        params: dict[str, Any],
        arguments: dict[str, Any] | None,
        request_id: Any,
        scope: Scope,
        outbound: Outbound,
        conn: ServerConnection,
        asked: dict[str, Any],
        answering: LowLevelServer,
    ) -> Awaitable[Any] | None:
        """:meth:`start_now` of the tool this server calls *name* (*params* as it sees them), once
        the request itself qualifies. A mounted server's tool is started by that server's own
        :meth:`_start_named` under its own name: no second request, no second look at the
        request. *asked* is the request's params as the client sent them (what a 2026-07-28
        ``input_required`` seals), and *answering* the server the client asked (it completes a
        2026-07-28 result)."""
        # tools/call answered by _call_tool and _run_tool as written here (see _answers_plainly):
        # once found ours, one identity test per call.
        if self._handlers.get("tools/call") is not self._our_call_handler and not self._answers_plainly():
            return None
        if self.telemetry is not None:
            return None
        if self._composed:
            hidden = self.hidden  # its sets read directly: Filter.__bool__ is a call of its own
            if hidden.names or hidden.tags or self._tool_transforms:
                return None  # something is hidden or transformed: the catalogue decides
        tool = self._tools.get(name)
        middleware = self._middleware
        layers = middleware.for_tools if middleware is not None else None
        if tool is None:
            if not self._mounts or layers:
                return None
            # Memoised routes: a namespaced name's mount, found once (see CatalogAPI._route).
            routed = self._routes.get(name) or self._route(name)
            if routed is None:
                return None
            mount, own = routed
            child = mount.server
            if not isinstance(child, PlainCalls):
                return None
            # params still say the name asked for here: read for their _meta only, or copied with
            # the mounted server's name where its middleware sees them.
            return child._start_named(
                own, params, arguments, request_id, scope, outbound, conn, asked, answering
            )
        signature = tool.signature
        if (
            signature.inline
            or tool.timeout is not None
            or self.tool_timeout is not None
            or tool.rate_limit is not None
            or tool.scopes
            or tool.task_support != "forbidden"
        ):
            return None
        if signature.skipped and scope.stateless and not layers:
            return None  # its Context may ask the client for input: handle()'s rounds answer that
        if layers and not signature.is_async:
            return None  # a def tool's thread hand-off and middleware: handle() does both
        try:
            kwargs = signature.bind(arguments)
        except ArgumentError:
            return None  # handle() answers it
        if layers:
            if params.get("name") != name:  # a mounted server's middleware sees its own name
                params = {**params, "name": name}
            layered = ToolCall(
                "tools/call", params, None, None, self, tool.fn, kwargs, name, signature, scope, outbound,
                request_id, conn,
            )  # fmt: skip
            if signature.skipped:  # the tool takes a Context: made now (else when asked for)
                ctx = layered.context
                for param in signature.skipped:
                    kwargs[param] = ctx
            return self._call_layered(layers, layered, asked, answering)
        if signature.skipped:
            ctx = self._context_of(outbound, request_id, scope, params, conn)
            for param in signature.skipped:
                kwargs[param] = ctx
        if signature.is_async:
            call: Awaitable[dict[str, Any]] = self._call_now(
                tool.fn, kwargs, name, signature, scope, asked, answering
            )
            return call

        finish = functools.partial(self._call_outcome, name, signature, scope, asked, answering)
        if not isinstance(outbound, Peer):
            return run_sync(tool.fn, kwargs, finish)
        # The peer knows its loop: asking asyncio for it costs a getpid(2) system call per call. A
        # lone call's answer goes out from the worker thread where the transport can take it
        # there (stdio): finish then runs on that thread, and is safe to (it shapes a value).
        return run_sync(tool.fn, kwargs, finish, outbound.event_loop(), outbound.thread_answerer(request_id))

    async def _call_now(
        self,
        fn: Callable[..., Any],
        kwargs: dict[str, Any],
        name: str,
        signature: ToolSignature,
        scope: Scope,
        params: dict[str, Any],
        answering: LowLevelServer,
    ) -> dict[str, Any]:
        # An async tool's plain call in one coroutine (the tool is called here, in the request's
        # task, as _run_tool calls it).
        try:
            value = await fn(**kwargs)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # InputRequired is one
            return self._call_outcome(name, signature, scope, params, answering, exc, None)
        return self._call_outcome(name, signature, scope, params, answering, None, value)

    def _answers_plainly(self) -> bool:
        """Whether ``tools/call`` is answered by :meth:`_call_tool` and :meth:`_run_tool` as
        written, not a handler set in its place or an override: then a shorter way answers alike.
        The bound method registered is one object: once it has passed, its identity says so."""
        handler = self._handlers.get("tools/call")
        if handler is self._our_call_handler:
            return True
        if (
            getattr(handler, "__func__", None) is not type(self)._plain_call_tool
            or getattr(handler, "__self__", None) is not self
            or getattr(type(self), "_run_tool", None) is not type(self)._plain_run_tool
        ):
            return False
        self._our_call_handler = handler  # remembered only when both hold: its identity says so
        return True

    def _context_of(
        self,
        outbound: Outbound,
        request_id: Any,
        scope: Scope,
        params: dict[str, Any],
        conn: ServerConnection,
    ) -> Context:
        meta = params.get("_meta")
        ctx = Context(outbound, request_id, "tools/call", scope, meta if isinstance(meta, dict) else {}, conn)
        ctx.lifespan = self.running.value
        return ctx

    async def _call_layered(
        self, layers: list[Middleware], call: ToolCall, asked: dict[str, Any], answering: LowLevelServer
    ) -> dict[str, Any]:
        """An ``async def`` tool's plain call through ``tools/call`` middleware, in one task: what
        :meth:`_handle` and :meth:`_call_tool` would do, less their lookups (see :class:`ToolCall`)."""
        scope = call._scope
        try:
            if len(layers) == 1:  # the usual: the one middleware gets the tool's step as call_next
                returned = await layers[0](call, call.run_next)
            else:
                assert self._middleware is not None
                returned = await self._middleware.through(layers, call, call.run_next, True)
        except ToolError as exc:  # refused by the outermost middleware
            returned = refused(exc)
        except InputRequired as need:
            if not scope.stateless:
                raise InternalError("tools/call cannot ask the client for input") from None
            result = answering._input_required("tools/call", asked, call.context.answers, need)
            answering._complete_stateless("tools/call", result, scope)
            return result
        wire = call._wire
        # The struct handed back unchanged: the dict it was made from (nothing to convert).
        shaped: dict[str, Any] = (
            wire if returned is call._built and wire is not None else from_call_result(returned, [], scope)
        )
        if scope.stateless:
            answering._complete_stateless("tools/call", shaped, scope)
        return shaped

    def _call_outcome(
        self,
        name: str,
        signature: ToolSignature,
        scope: Scope,
        params: dict[str, Any],
        answering: LowLevelServer,
        exc: BaseException | None,
        value: Any,
    ) -> dict[str, Any]:
        """What _run_tool, _call_tool and handle() make of a plain call's outcome (its exception,
        or its value): the result, or the error to answer. start_now's two ways share it."""
        if isinstance(exc, InputRequired):
            if not scope.stateless:
                raise InternalError("tools/call cannot ask the client for input") from None
            # A first round (start_now takes no retry): nothing answered yet.
            result = answering._input_required("tools/call", params, {}, exc)
            answering._complete_stateless("tools/call", result, scope)
            return result
        shaped = shape_call_result(self._outcome(name, signature, exc, value), scope)
        if scope.stateless:
            answering._complete_stateless("tools/call", shaped, scope)
        return shaped

    def _outcome(
        self, name: str, signature: ToolSignature, exc: BaseException | None, value: Any
    ) -> dict[str, Any]:
        """A tool's outcome as a ``CallToolResult`` dict (unshaped); protocol errors raised."""
        if exc is None:
            return to_call_result(value, signature)
        if isinstance(exc, ToolError):
            return error_result(str(exc))
        if isinstance(exc, RPCError) or not isinstance(exc, Exception):
            raise exc
        return tool_failed(name, exc, self.mask_errors)


class ToolCall(Call):
    """A plain tool's call on its way through ``tools/call`` middleware: the :class:`Call` they
    see, carrying what running the tool needs, and :meth:`run_next`, the innermost
    ``call_next``. One struct (made in C) per call, where closures over the same values cost
    several times more; the Context is made when first asked for (a middleware that never reads
    ``call.context``, around a tool that takes none, does not pay for it)."""

    # Always given (positionally, after Call's own fields, which have defaults: so have these).
    _server: PlainCalls = None  # type: ignore[assignment]
    _fn: Callable[..., Any] = None  # type: ignore[assignment]
    _kwargs: dict[str, Any] = None  # type: ignore[assignment]
    _name: str = ""
    _signature: ToolSignature = None  # type: ignore[assignment]
    _scope: Scope = None  # type: ignore[assignment]
    _outbound: Outbound = None  # type: ignore[assignment]
    _request_id: Any = None
    _conn: ServerConnection = None  # type: ignore[assignment]
    _wire: dict[str, Any] | None = None  # the tool's result as the wire has it (see run_next)
    _built: Any = None  # ... and as handed to the middleware

    def __repr__(self) -> str:
        return f"Call(method={self.method!r}, params={self.params!r})"

    @property
    def context(self) -> Context:
        """The request's :class:`~mcpkit.Context`, made when first asked for."""
        context = self._context
        if context is None:
            context = self._server._context_of(
                self._outbound, self._request_id, self._scope, self.params, self._conn
            )
            self._context = context
        return context

    async def run_next(self, call: Call) -> Any:
        """The tool, as the innermost ``call_next``: its result as a ``CallToolResult`` (or, where
        a middleware passed on other params, what ``tools/call`` answers those)."""
        server, scope = self._server, self._scope
        if call.params is not self.params:  # a middleware passed on other params: the whole way
            result = await server._call_tool(call.params, call.context)
            if (
                type(result) is not dict
                or "content" not in result
                or "task" in result
                or "resultType" in result
            ):
                return result  # a task's creation (see handed_on)
        else:
            try:
                value = await self._fn(**self._kwargs)
            except asyncio.CancelledError:
                raise
            except InputRequired:
                raise  # through the middleware, as in handle()
            except BaseException as exc:
                result = shape_call_result(server._outcome(self._name, self._signature, exc, None), scope)
            else:
                result = shape_call_result(server._outcome(self._name, self._signature, None, value), scope)
                if type(value) is str:  # the usual: one text block of it (to_call_result), in any revision
                    self._wire = result
                    built = self._built = CallToolResult(
                        [TextContent(value)], result.get("structuredContent")
                    )
                    return built
        self._wire = result
        built = self._built = as_call_result(result)
        return built
