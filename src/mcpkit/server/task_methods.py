"""The ``tasks/*`` methods of both eras, each answering only the caller's own tasks.

A task belongs to whoever started it (:func:`mcpkit.tasks.requestor`): on a protected server the
caller's authorization context (the token's issuer and subject, or its client), else the session
(``Mcp-Session-Id``), else the connection (stdio); a 2026-07-28 request without authorization has
no session ("an open connection, such as a STDIO process, is not a conversation or session"), so
its task belongs to nobody and the task id, 128 random bits, is what reaches it ("A server MAY use
task IDs as bearer tokens", the tasks extension's Security Considerations).

Every method works out the caller's requestor the same way and hands it to the runner, which
answers another requestor's task exactly as an unknown one: the same ``-32602`` error with the
same message and data, before anything else is looked at (so not "already cancelled", nor a
``tasks/result`` that waits), and ``tasks/list`` lists the caller's tasks only. 2025-11-25, basic/
utilities/tasks: "receivers MUST reject tasks/get, tasks/result, and tasks/cancel requests for
tasks that do not belong to the same authorization context as the requestor".
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from .._compat import shape_call_result
from .._errors import ConnectionClosed, InvalidParams, MissingClientCapability, RPCError
from .._pagination import page, paginate
from ..context import Context
from ..tasks import RELATED_TASK, TASKS_EXTENSION, TERMINAL, TaskRecord, requestor
from ._base import ServerBase, declares_tasks

__all__ = ["TaskMethods", "requestor_of"]


def requestor_of(ctx: Context) -> str | None:
    """Whose tasks the caller's are (see :func:`mcpkit.tasks.requestor`)."""
    conn = ctx.connection
    if conn is None:
        return requestor(ctx.auth, None)
    # A 2026-07-28 request's connection object is its own (one per POST over HTTP), and over stdio
    # the connection is no session either: nothing but authorization binds its tasks.
    return requestor(ctx.auth, conn.session_id, None if ctx.scope.stateless else conn)


class TaskMethods(ServerBase):
    """Starting a handler as a task, and ``tasks/get|result|list|cancel|update``."""

    async def _start_task(
        self, run: Callable[[Context], Awaitable[dict[str, Any]]], ctx: Context, ttl: Any
    ) -> TaskRecord:
        """Start ``run(task_ctx)`` (a ``CallToolResult`` dict) as the caller's task."""
        task_ctx = Context(ctx.peer, ctx.request_id, ctx.method, ctx.scope, ctx.meta, ctx.connection)
        task_ctx.lifespan = ctx.lifespan
        task_ctx.tasks = self.tasks
        task_ctx.auth = ctx.auth
        task_ctx.answers = ctx.answers  # a deferred task replays the rounds answered before it

        async def work(record: TaskRecord) -> dict[str, Any]:
            task_ctx.task = record
            result = shape_call_result(await run(task_ctx), ctx.scope)
            if not ctx.scope.stateless:
                result["_meta"] = {**result.get("_meta", {}), RELATED_TASK: {"taskId": record.task_id}}
            return result

        on_change = None
        if not ctx.scope.stateless:

            async def on_change(record: TaskRecord) -> None:
                with contextlib.suppress(ConnectionClosed, OSError):
                    await ctx.peer.notify("notifications/tasks/status", record.wire_v1())

        record = self.tasks.create(ttl, on_change, requestor_of(ctx))
        try:
            await self.tasks.saved(record)  # in a fleet, any process can find it before the answer goes out
        except BaseException:
            # Not saved (the shared state is away): the caller is told to try again, so this attempt
            # must never run, or a retry would run the tool a second time.
            self.tasks.store.remove(record.task_id)
            raise
        self.tasks.begin(record, work)
        return record

    def _gate_tasks(self, ctx: Context) -> None:
        # "the server MUST reject tasks/get, tasks/update, and tasks/cancel with a
        # MissingRequiredClientCapability error" for requests without the extension.
        if ctx.scope.stateless and not declares_tasks(ctx.scope):
            raise MissingClientCapability.for_capabilities({"extensions": {TASKS_EXTENSION: {}}})

    async def _task_get(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        self._gate_tasks(ctx)
        record = await self.tasks.lookup(params, requestor_of(ctx))
        return record.wire_v2(detailed=True) if ctx.scope.stateless else record.wire_v1()

    async def _task_result(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        record = await self.tasks.lookup(params, requestor_of(ctx))
        # "it MUST block the response until the task reaches a terminal status"
        await self.tasks.until_done(record)
        if record.status == "completed" and record.result is not None:
            return record.result
        if record.error is not None:
            raise RPCError.from_wire(record.error)
        raise RPCError(-32603, f"task {record.task_id} was {record.status}", {"taskId": record.task_id})

    async def _task_list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        who = requestor_of(ctx)
        ids = await self.tasks.listed(who)  # in a fleet: every node's
        shown, cursor = paginate(ids, params.get("cursor"), self.page_size)
        return page("tasks", [record.wire_v1() for record in await self.tasks.find_many(shown, who)], cursor)

    async def _task_cancel(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        self._gate_tasks(ctx)
        record = await self.tasks.lookup(params, requestor_of(ctx))
        if ctx.scope.stateless:
            await self.tasks.cancel(record)  # idempotent: an empty acknowledgement either way
            return {}
        if record.status in TERMINAL:
            raise InvalidParams(f"task {record.task_id} is already {record.status}")
        await self.tasks.cancel(record)
        return record.wire_v1()

    async def _task_update(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        self._gate_tasks(ctx)
        record = await self.tasks.lookup(params, requestor_of(ctx))
        await self.tasks.update(record, params.get("inputResponses"))
        return {}
