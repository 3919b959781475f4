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
from .._middleware import ENDPOINT, Call, Middleware, from_call_result, handed_on
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
        self,
        request: jsonrpc.Request,
        scope: Scope,
        outbound: Outbound,
        conn: ServerConnection,
        answering: LowLevelServer | None = None,
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

        A call of a mounted server's tool starts that server's shortest way (*answering*, the
        server the client asked, completes its 2026-07-28 result); ``tools/call`` middleware of an
        ``async def`` tool runs here too (:meth:`_call_layered`).
        """
        answering = self if answering is None else answering
        if request.method != "tools/call":
            return None
        params = request.params
        # A 2026-07-28 retry (with requestState) opens the sealed answers in handle().
        if not isinstance(params, dict) or (scope.stateless and "requestState" in params):
            return None
        name: Any = params.get("name")  # a str wherever a tool is found
        tool = self._tools.get(name) if isinstance(name, str) else None
        layers = self._middleware.layers_for("tools/call") if self._middleware is not None else None
        if tool is None:
            if self._mounts and not layers:
                return self._start_mounted(request, params, name, scope, outbound, conn, answering)
            return None
        if (
            (self._composed and self._reshaped())
            or (conn is not None and conn.session_state is not None)
            or self.telemetry is not None
            or "task" in params
            or tool.signature.inline
            or tool.timeout is not None
            or self.tool_timeout is not None
            or tool.rate_limit is not None
            or tool.scopes
            or tool.task_support != "forbidden"
        ):
            return None
        if not self._answers_plainly():
            return None
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            return None
        signature = tool.signature
        if signature.skipped and scope.stateless and not layers:
            return None  # its Context may ask the client for input: handle()'s rounds answer that
        if layers and not signature.is_async:
            return None  # a def tool's thread hand-off and middleware: handle() does both
        try:
            kwargs = signature.bind(arguments)
        except ArgumentError:
            return None  # handle() answers it
        if signature.skipped:
            ctx = self._context_of(outbound, request.id, scope, params, conn)
            for param in signature.skipped:
                kwargs[param] = ctx
        if layers:
            # The Context is made when first asked for: by the tool (above), or by a middleware.
            layered = (
                Call("tools/call", params, ctx)
                if signature.skipped
                else Call(
                    "tools/call",
                    params,
                    None,
                    functools.partial(self._context_of, outbound, request.id, scope, params, conn),
                )
            )
            return self._call_layered(layers, tool.fn, kwargs, name, signature, scope, layered, answering)
        if signature.is_async:
            call: Awaitable[dict[str, Any]] = self._call_now(
                tool.fn, kwargs, name, signature, scope, params, answering
            )
            return call

        finish = functools.partial(self._call_outcome, name, signature, scope, params, answering)
        if not isinstance(outbound, Peer):
            return run_sync(tool.fn, kwargs, finish)
        # The peer knows its loop: asking asyncio for it costs a getpid(2) system call per call. A
        # lone call's answer goes out from the worker thread where the transport can take it
        # there (stdio): finish then runs on that thread, and is safe to (it shapes a value).
        return run_sync(tool.fn, kwargs, finish, outbound.event_loop(), outbound.thread_answerer(request.id))

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

    def _reshaped(self) -> bool:
        """Whether anything is hidden or transformed (what a mount alone never does)."""
        hidden = self.hidden  # its sets read directly: Filter.__bool__ is a call of its own
        return bool(hidden.names or hidden.tags or self._tool_transforms)

    def _answers_plainly(self) -> bool:
        """Whether ``tools/call`` is answered by :meth:`_call_tool` and :meth:`_run_tool` as
        written, not a handler set in its place or an override: then a shorter way answers alike.
        The bound method registered is one object: once it has passed, its identity says so."""
        handler = self._handlers.get("tools/call")
        if handler is not self._our_call_handler:
            if (
                getattr(handler, "__func__", None) is not type(self)._plain_call_tool
                or getattr(handler, "__self__", None) is not self
            ):
                return False
            self._our_call_handler = handler
        return getattr(type(self), "_run_tool", None) is type(self)._plain_run_tool

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

    def _start_mounted(
        self,
        request: jsonrpc.Request,
        params: dict[str, Any],
        name: Any,
        scope: Scope,
        outbound: Outbound,
        conn: ServerConnection,
        answering: LowLevelServer,
    ) -> Awaitable[Any] | None:
        """A mounted server's tool, by that server's shortest way (when nothing here stands
        between: no telemetry, nothing hidden or transformed, no session filter)."""
        if (
            not isinstance(name, str)
            or self.telemetry is not None
            or self._reshaped()
            or (conn is not None and conn.session_state is not None)
            or not self._answers_plainly()
        ):
            return None
        routed = self._route(name)
        if routed is None:
            return None
        mount, own = routed
        child = mount.server
        if not isinstance(child, PlainCalls):
            return None
        inner = jsonrpc.Request(id=request.id, method="tools/call", params={**params, "name": own})
        return child.start_now(inner, scope, outbound, conn, answering)

    async def _call_layered(
        self,
        layers: list[Middleware],
        fn: Callable[..., Any],
        kwargs: dict[str, Any],
        name: str,
        signature: ToolSignature,
        scope: Scope,
        call: Call,
        answering: LowLevelServer,
    ) -> dict[str, Any]:
        """An ``async def`` tool's plain call through ``tools/call`` middleware, in one task: what
        :meth:`_handle` and :meth:`_call_tool` would do, less their lookups."""
        params = call.params
        outcome: list[Any] = []  # the tool's result as a dict and as handed on (see handed_on)

        async def endpoint(call: Call) -> Any:
            if call.params is not params:  # a middleware passed on other params: the whole way
                result = await self._call_tool(call.params, call.context)
            else:
                try:
                    value = await fn(**kwargs)
                except asyncio.CancelledError:
                    raise
                except InputRequired:
                    raise  # through the middleware, as in handle()
                except BaseException as exc:
                    result = shape_call_result(self._outcome(name, signature, exc, None), scope)
                else:
                    result = shape_call_result(self._outcome(name, signature, None, value), scope)
            return handed_on(result, outcome)

        assert self._middleware is not None
        token = ENDPOINT.set(endpoint)
        try:
            returned = await self._middleware.chain(layers, True)(call)
        except ToolError as exc:  # refused by the outermost middleware
            returned = CallToolResult(content=[TextContent(text=str(exc))], is_error=True)
        except InputRequired as need:
            if not scope.stateless:
                raise InternalError("tools/call cannot ask the client for input") from None
            result = answering._input_required("tools/call", params, call.context.answers, need)
            answering._complete_stateless("tools/call", result, scope)
            return result
        finally:
            ENDPOINT.reset(token)
        shaped: dict[str, Any] = from_call_result(returned, outcome, scope)
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
