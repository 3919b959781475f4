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
from .._mrtr import InputRequired
from .._signature import ArgumentError, ToolSignature
from ..context import Context
from ..session import Peer
from ._base import ServerBase
from ._results import error_result, to_call_result, tool_failed
from ._threads import run_sync

if TYPE_CHECKING:
    from ..kernel import Outbound

__all__ = ["PlainCalls"]

UNCHECKED: Final = object()  # no tools/call handler checked yet (None is no handler at all)


class PlainCalls(ServerBase):
    """:meth:`start_now` and what it shares with the tools' full path (:class:`~.tools.ToolsAPI`)."""

    #: The tools/call handler start_now found to be ours (see there): checked once, not per call.
    _our_call_handler: object = UNCHECKED
    #: ToolsAPI's own handler and runner (set there): start_now serves only calls they would answer.
    _plain_call_tool: Callable[..., Any]
    _plain_run_tool: Callable[..., Any]

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
        """
        if request.method != "tools/call":
            return None
        params = request.params
        # A 2026-07-28 retry (with requestState) opens the sealed answers in handle().
        if not isinstance(params, dict) or (scope.stateless and "requestState" in params):
            return None
        name: Any = params.get("name")  # a str wherever a tool is found
        tool = self._tools.get(name) if isinstance(name, str) else None
        if (
            tool is None
            or self._middleware is not None
            or self._composed
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
        # What handle() would run must be ours, not a handler set in its place or an override. The
        # bound method registered is one object: once it has passed, its identity says it is ours.
        handler = self._handlers.get("tools/call")
        if handler is not self._our_call_handler:
            if (
                getattr(handler, "__func__", None) is not type(self)._plain_call_tool
                or getattr(handler, "__self__", None) is not self
            ):
                return None
            self._our_call_handler = handler
        if getattr(type(self), "_run_tool", None) is not type(self)._plain_run_tool:
            return None
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            return None
        signature = tool.signature
        if signature.skipped and scope.stateless:
            return None  # its Context may ask the client for input: handle()'s rounds answer that
        try:
            kwargs = signature.bind(arguments)
        except ArgumentError:
            return None  # handle() answers it
        if signature.skipped:
            meta = params.get("_meta")
            ctx = Context(
                outbound, request.id, "tools/call", scope, meta if isinstance(meta, dict) else {}, conn
            )
            ctx.lifespan = self.running.value
            for param in signature.skipped:
                kwargs[param] = ctx
        if signature.is_async:
            call: Awaitable[dict[str, Any]] = self._call_now(tool.fn, kwargs, name, signature, scope, params)
            return call

        finish = functools.partial(self._call_outcome, name, signature, scope, params)
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
    ) -> dict[str, Any]:
        # An async tool's plain call in one coroutine (the tool is called here, in the request's
        # task, as _run_tool calls it).
        try:
            value = await fn(**kwargs)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # InputRequired is one
            return self._call_outcome(name, signature, scope, params, exc, None)
        return self._call_outcome(name, signature, scope, params, None, value)

    def _call_outcome(
        self,
        name: str,
        signature: ToolSignature,
        scope: Scope,
        params: dict[str, Any],
        exc: BaseException | None,
        value: Any,
    ) -> dict[str, Any]:
        """What _run_tool, _call_tool and handle() make of a plain call's outcome (its exception,
        or its value): the result, or the error to answer. start_now's two ways share it."""
        if exc is None:
            result = to_call_result(value, signature)
        elif isinstance(exc, ToolError):
            result = error_result(str(exc))
        elif isinstance(exc, InputRequired):
            if not scope.stateless:
                raise InternalError("tools/call cannot ask the client for input") from None
            # A first round (start_now takes no retry): nothing answered yet.
            result = self._input_required("tools/call", params, {}, exc)
            self._complete_stateless("tools/call", result, scope)
            return result
        elif isinstance(exc, RPCError) or not isinstance(exc, Exception):
            raise exc
        else:
            result = tool_failed(name, exc, self.mask_errors)
        shaped = shape_call_result(result, scope)
        if scope.stateless:
            self._complete_stateless("tools/call", shaped, scope)
        return shaped
