"""Tasks: long-running tool calls that the client polls instead of waiting on.

Two wire forms share one store and one runner:

* 2025-11-25 (core, experimental): the client adds ``task: {ttl}`` to ``tools/call`` and gets a
  ``CreateTaskResult`` (``{"task": {...}}``); it polls ``tasks/get``, blocks on ``tasks/result``,
  and may ``tasks/list`` and ``tasks/cancel``.
* 2026-07-28, the ``io.modelcontextprotocol/tasks`` extension: a client that declares the extension
  may get ``resultType: "task"`` back from ``tools/call`` (the server decides); ``tasks/get`` returns
  the task with its result or error inlined, and ``inputRequests`` while it waits for the client,
  who answers with ``tasks/update``; ``tasks/cancel`` is acknowledged with an empty result.

A task is a tool call running in an asyncio task of its own. Its record lives in a
:class:`TaskStore` (in memory by default; implement the protocol to keep tasks elsewhere).

In a fleet (several processes behind a load balancer) the runner is also given the fleet's shared
state (:meth:`TaskRunner.share`): each record is written there as a snapshot at every change, so a
``tasks/get`` or ``tasks/result`` on another process reads it (:meth:`TaskRunner.lookup`), and a
``tasks/cancel`` or ``tasks/update`` there is published on the ``tasks`` channel, where the process
running the task hears it and acts. The task itself runs where it started, and its snapshot names
that process (its fleet node). If that process dies (its heartbeat ``node:<id>`` lapses, see
:mod:`mcpkit.fleet.node`), the next process to read the unfinished snapshot moves the
task to ``failed`` with an error saying so: re-running a tool call elsewhere is not safe in general
(it may have done half its work), and a task that stayed ``working`` for ever would never let a
``tasks/result`` return. A snapshot that is terminal is never written over, so a process that was
only cut off from the store, and judged dead meanwhile, cannot revive the task later.

Each task belongs to its requestor (:func:`requestor`): the caller's authorization context (the
token's issuer and subject, or its client) on a protected server, else its session, else its
connection (stdio); a 2026-07-28 task started without authorization belongs to nobody, and its id
(128 random bits) is what reaches it. Every ``tasks/*`` method is given the caller's requestor, and
another requestor's task is answered exactly as an unknown one (the same ``-32602`` error, and
nothing of its status or result), on this process and, through the owner each snapshot carries, on
any other; ``tasks/list`` lists the caller's tasks only (in a fleet, from an index per requestor).

The records, their lifecycle and the store protocol are in :mod:`mcpkit.task_records` (re-exported
here).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec

from ._errors import InvalidParams, RPCError
from .task_records import (
    RELATED_TASK,
    TASKS_EXTENSION,
    TERMINAL,
    InMemoryTaskStore,
    TaskRecord,
    TaskShare,
    TaskStatus,
    TaskStore,
    requestor,
)

logger = logging.getLogger("mcpkit.tasks")

__all__ = [
    "RELATED_TASK",
    "TASKS_EXTENSION",
    "TERMINAL",
    "InMemoryTaskStore",
    "TaskRecord",
    "TaskRunner",
    "TaskShare",
    "TaskStatus",
    "TaskStore",
    "requestor",
]

_SNAPSHOT_FIELDS: Final = (
    "task_id",
    "ttl_ms",
    "poll_interval_ms",
    "status",
    "status_message",
    "created_at",
    "last_updated_at",
    "result",
    "error",
    "input_requests",
    "node",
    "requestor",
)
#: The owner of a snapshot written before snapshots named theirs: nobody's key, so nobody reaches it.
_UNKNOWN_OWNER: Final = "unknown:"
#: How long a process that cancels or answers another's task waits for that one to say it did.
_REMOTE_CANCEL_WAIT: Final = 5.0
#: The most tasks ``tasks/list`` shows one requestor in a fleet (the oldest are dropped first).
LISTED: Final = 1000
#: The error of a task whose node died before it ended.
NODE_DIED: Final = (
    "The server process running this task stopped before the task ended; its outcome is unknown."
)


class TaskRunner:
    """Starts tool calls as tasks and answers the ``tasks/*`` methods of both wire forms.

    Args:
        store: where records live.
        default_ttl_ms: a task's lifetime when the client names none (``None``: unlimited).
        max_ttl_ms: the longest lifetime granted ("Receivers MAY override the requested ttl").
        poll_interval_ms: the polling interval suggested to clients.
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        default_ttl_ms: int | None = 3_600_000,
        max_ttl_ms: int = 86_400_000,
        poll_interval_ms: int = 500,
    ) -> None:
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        #: The fleet's shared state, once :meth:`share` was called, and this process's node id.
        self.shared: TaskShare | None = None
        self.node: str | None = None
        self._chores: set[asyncio.Task[None]] = set()
        #: One snapshot write at a time per task, each of the state at its writing: two writes in
        #: flight at once could land in either order and leave an older state behind.
        self._writing: dict[str, asyncio.Lock] = {}

    # -- in a fleet --------------------------------------------------------------------------------

    async def share(self, shared: TaskShare, node: str | None = None) -> None:
        """Keep snapshots of tasks in *shared*, and act on what other processes ask of ours.

        *node* is this process's id in the fleet, whose heartbeat (``node:<id>`` in *shared*) says
        it is alive: with it, another process that finds one of our tasks unfinished after we died
        fails it. Without it, our tasks are never judged orphaned."""
        self.shared = shared
        self.node = node
        await shared.subscribe("tasks", self._heard)

    async def saved(self, record: TaskRecord) -> None:
        """Write *record*'s snapshot to the shared state (nothing to do outside a fleet)."""
        if self.shared is None or record.remote:
            return
        record.node = self.node
        lock = self._writing.setdefault(record.task_id, asyncio.Lock())
        async with lock:
            stored = await self._load(record.task_id, judge=False)
            if stored is not None and stored.status in TERMINAL and stored.status != record.status:
                # Ended elsewhere (cancelled, or failed when this process was judged dead): that
                # is what every poller was told, so it stands, here too, and the work stops (unless
                # this is the work itself, ending).
                finishing = record.status in TERMINAL
                self._refresh(record, stored)
                runner = record.runner
                ending = finishing and runner is asyncio.current_task()
                if runner is not None and not runner.done() and not ending:
                    runner.cancel()
            else:
                await self._write(record)
            if record.requestor is not None and not record.indexed:
                record.indexed = True
                ttl = self.max_ttl_ms / 1000
                await self.shared.push(f"tasks-of:{record.requestor}", record.task_id.encode(), LISTED, ttl)
        if record.status in TERMINAL and not lock.locked():
            self._writing.pop(record.task_id, None)

    async def _write(self, record: TaskRecord) -> None:
        assert self.shared is not None
        snapshot = {name: getattr(record, name) for name in _SNAPSHOT_FIELDS}
        ttl = None if record.expires is None else max(1.0, record.expires - time.monotonic())
        await self.shared.put(f"task:{record.task_id}", msgspec.json.encode(snapshot, enc_hook=str), ttl)

    async def _load(self, task_id: str, *, judge: bool = True) -> TaskRecord | None:
        """The shared snapshot of *task_id*; with *judge*, an unfinished task whose node died is
        failed first (and the failure written for every other process)."""
        data = await self.shared.get(f"task:{task_id}") if self.shared is not None else None
        if data is None:
            return None
        fields = msgspec.json.decode(data)
        record = TaskRecord(**{name: fields.get(name) for name in _SNAPSHOT_FIELDS}, remote=True)
        if "requestor" not in fields:  # fail closed: whose it was is not known
            record.requestor = _UNKNOWN_OWNER
        if record.input_requests is None:
            record.input_requests = {}
        if record.ttl_ms is not None:  # at most that long from now: the snapshot expires anyway
            record.expires = time.monotonic() + record.ttl_ms / 1000
        if record.status in TERMINAL:
            record.done.set()
        elif judge and record.node is not None and record.node != self.node and await self._dead(record.node):
            logger.warning("task %s: its node %s died; the task failed", task_id, record.node)
            record.error = {"code": -32603, "message": NODE_DIED, "data": {"taskId": task_id}}
            record.input_requests = {}
            record.move("failed", NODE_DIED)
            await self._write(record)
        return record

    async def _dead(self, node: str) -> bool:
        # The heartbeat every node of a fleet writes (mcpkit.fleet.node).
        assert self.shared is not None
        return await self.shared.get(f"node:{node}") is None

    async def listed(self, who: str | None) -> list[str]:
        """The ids of *who*'s tasks (see :func:`requestor`), oldest first: this process's, or in a
        fleet those listed under *who* on every node. None for ``None`` (a requestor that cannot be
        told apart lists nothing: the tasks bound to nobody are no one's to list)."""
        if who is None:
            return []
        if self.shared is None:
            return [record.task_id for record in self.store.all() if record.requestor == who]
        ids = [value.decode() for value in await self.shared.peek(f"tasks-of:{who}")]
        return list(dict.fromkeys(ids))

    async def find_many(self, task_ids: list[str], who: str | None = None) -> list[TaskRecord]:
        """*who*'s tasks among those named, this process's or (in a fleet) the snapshots of
        others'; those gone (expired), and any other requestor's, are left out."""
        found = []
        for task_id in task_ids:
            record = self.store.get(task_id)
            if record is None and self.shared is not None:
                record = await self._load(task_id)
            if record is not None and who is not None and record.requestor == who:
                found.append(record)
        return found

    def _heard(self, data: bytes) -> None:
        """A request from another process about one of the tasks: act if it runs here."""
        try:
            message = msgspec.json.decode(data)
            record = self.store.get(message["taskId"])
        except (ValueError, KeyError, TypeError):
            logger.warning("ignoring a malformed task message from the fleet")
            return
        if record is None or record.remote or record.runner is None:
            return  # not ours
        if message.get("op") == "cancel":
            chore = asyncio.get_running_loop().create_task(self.cancel(record))
            self._chores.add(chore)
            chore.add_done_callback(self._chores.discard)
        elif message.get("op") == "update":
            with contextlib.suppress(InvalidParams):
                self.answer(record, message.get("inputResponses"))

    async def lookup(self, params: dict[str, Any], who: str | None = None) -> TaskRecord:
        """The task named by ``params.taskId`` if *who* may reach it (:meth:`TaskRecord.belongs_to`):
        this process's, else (in a fleet) the shared snapshot of another's. Raises
        ``InvalidParams`` for an unknown one, and the very same for another requestor's."""
        try:
            return self.find(params, who)
        except InvalidParams:
            task_id = params.get("taskId")
            if self.shared is None or not isinstance(task_id, str):
                raise
            record = await self._load(task_id)
            if record is None or not record.belongs_to(who):
                raise
            return record

    async def until_done(self, record: TaskRecord) -> None:
        """Until *record* is terminal (another process's: its snapshot is polled)."""
        while not record.done.is_set():
            if not record.remote:
                await record.done.wait()
                return
            await asyncio.sleep(min(record.poll_interval_ms, 250) / 1000)
            fresh = await self._load(record.task_id)
            if fresh is None:
                raise InvalidParams(f"Unknown task: {record.task_id}", {"taskId": record.task_id})
            self._refresh(record, fresh)

    @staticmethod
    def _refresh(record: TaskRecord, fresh: TaskRecord) -> None:
        for name in _SNAPSHOT_FIELDS:
            if name != "node" or fresh.node is not None:
                setattr(record, name, getattr(fresh, name))
        if record.status in TERMINAL:
            record.done.set()

    async def update(self, record: TaskRecord, responses: Any) -> None:
        """``tasks/update``: deliver the answers here, or to the process running the task."""
        if not isinstance(responses, dict):
            raise InvalidParams("tasks/update requires params.inputResponses (an object)")
        answered = {key for key in responses if key in record.input_requests}
        if not record.remote:
            self.answer(record, responses)
            if self.shared is None:
                return
        else:
            assert self.shared is not None
            message = {"op": "update", "taskId": record.task_id, "inputResponses": responses}
            await self.shared.publish("tasks", msgspec.json.encode(message))
        # "the resulting task state is observed via the next tasks/get", on whichever process it
        # lands: acknowledge once the shared snapshot no longer asks the answered questions, or
        # after a bounded wait if the running process does not write it in time. (Answered here,
        # the task drops them when it next runs, and writes its snapshot after that. Answers given
        # here stand even with the store away: other processes only see them later.)
        with contextlib.suppress(TimeoutError if record.remote else Exception):
            async with asyncio.timeout(_REMOTE_CANCEL_WAIT):
                while answered and not record.done.is_set():
                    await asyncio.sleep(0.01)
                    fresh = await self._load(record.task_id)
                    if fresh is None:
                        return
                    if record.remote:
                        self._refresh(record, fresh)
                    answered &= fresh.input_requests.keys()

    def start(
        self,
        work: Callable[[TaskRecord], Awaitable[dict[str, Any]]],
        ttl_ms: Any = None,
        on_change: Callable[[TaskRecord], Awaitable[None]] | None = None,
        requestor: str | None = None,
    ) -> TaskRecord:
        """Create a task running ``work(record)``; it is in the store before this returns.
        *requestor*: whose task it is (see :func:`requestor`): only they reach and list it."""
        record = self.create(ttl_ms, on_change, requestor)
        self.begin(record, work)
        return record

    def create(
        self,
        ttl_ms: Any = None,
        on_change: Callable[[TaskRecord], Awaitable[None]] | None = None,
        requestor: str | None = None,
    ) -> TaskRecord:
        """A task's record, in the store, with nothing running yet: :meth:`begin` starts its work.
        (In a fleet the record is saved first: a task the shared state never heard of must not run,
        since the client is told to try again.)"""
        ttl = (
            ttl_ms
            if isinstance(ttl_ms, int) and not isinstance(ttl_ms, bool) and ttl_ms > 0
            else self.default_ttl_ms
        )
        if ttl is not None:
            ttl = min(ttl, self.max_ttl_ms)
        record = TaskRecord(
            task_id=_new_task_id(),
            ttl_ms=ttl,
            poll_interval_ms=self.poll_interval_ms,
            on_change=on_change,
            requestor=requestor,
        )
        if ttl is not None:
            record.expires = time.monotonic() + ttl / 1000
        self.store.add(record)  # durable before the CreateTaskResult goes out (in a fleet: saved())
        return record

    def begin(self, record: TaskRecord, work: Callable[[TaskRecord], Awaitable[dict[str, Any]]]) -> None:
        """Start the work of a task made by :meth:`create`."""
        record.runner = asyncio.get_running_loop().create_task(self._run(record, work))

    async def _run(self, record: TaskRecord, work: Callable[[TaskRecord], Awaitable[dict[str, Any]]]) -> None:
        try:
            result = await work(record)
        except asyncio.CancelledError:
            await self._set(record, "cancelled", "The task was cancelled.")
            return
        except RPCError as exc:
            record.error = exc.to_wire()
            await self._set(record, "failed", exc.message)
            return
        except Exception as exc:  # a crash is a protocol-level failure, not a tool error
            record.error = {"code": -32603, "message": f"Internal error: {type(exc).__name__}: {exc}"}
            await self._set(record, "failed", record.error["message"])
            return
        record.result = result
        await self._set(record, "completed")

    async def set_status(self, record: TaskRecord, status: TaskStatus, message: str | None = None) -> None:
        """Move *record* to *status* (if the lifecycle allows) and tell whoever follows it."""
        await self._set(record, status, message)

    async def _set(self, record: TaskRecord, status: TaskStatus, message: str | None = None) -> None:
        if record.move(status, message):
            with contextlib.suppress(Exception):  # a fleet whose store is away: the task goes on
                await self.saved(record)
            if record.on_change is not None:
                await record.on_change(record)

    def find(self, params: dict[str, Any], who: str | None = None) -> TaskRecord:
        """This process's task named by ``params.taskId``, if *who* may reach it. Raises
        ``InvalidParams`` for an unknown one, and the very same for another requestor's ("receivers
        MUST reject tasks/get, tasks/result, and tasks/cancel requests for tasks that do not belong
        to the same authorization context as the requestor": rejected as unknown, so that nothing,
        not even that the id exists, is told)."""
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise InvalidParams("params.taskId (a string) is required")
        record = self.store.get(task_id)
        if record is None or not record.belongs_to(who):
            raise InvalidParams(f"Unknown task: {task_id}", {"taskId": task_id})
        return record

    async def cancel(self, record: TaskRecord) -> None:
        """Stop the task and mark it cancelled ("MUST transition the task to cancelled status
        before sending the response")."""
        if record.status in TERMINAL:
            return
        if record.remote:
            await self._cancel_remote(record)
            return
        await self._set(record, "cancelled", "The task was cancelled by request.")
        if record.runner is not None:
            record.runner.cancel()

    async def _cancel_remote(self, record: TaskRecord) -> None:
        # The process running it cancels it and saves the terminal snapshot; wait for that (if it
        # is gone, record the cancellation here: nobody else will).
        assert self.shared is not None
        await self.shared.publish("tasks", msgspec.json.encode({"op": "cancel", "taskId": record.task_id}))
        try:
            await asyncio.wait_for(self.until_done(record), _REMOTE_CANCEL_WAIT)
        except TimeoutError:
            record.move("cancelled", "The task was cancelled by request.")
            await self._write(record)

    async def ask(self, record: TaskRecord, key: str, request: dict[str, Any]) -> Any:
        """Park the task on a question for the client (2026-07-28) until ``tasks/update`` answers."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        record.input_requests[key] = request
        record.answers[key] = future
        await self._set(record, "input_required")
        try:
            return await future
        finally:
            record.input_requests.pop(key, None)
            record.answers.pop(key, None)
            if not record.input_requests and record.status == "input_required":
                await self._set(record, "working")
            elif record.input_requests and self.shared is not None:
                # Still waiting on other questions: the snapshot every process reads drops this one.
                with contextlib.suppress(Exception):  # a fleet whose store is away: the task goes on
                    await self.saved(record)

    def answer(self, record: TaskRecord, responses: Any) -> None:
        """Deliver ``tasks/update`` answers to the questions they name; others are ignored."""
        if not isinstance(responses, dict):
            raise InvalidParams("tasks/update requires params.inputResponses (an object)")
        for key, value in responses.items():
            future = record.answers.get(key)
            if future is not None and not future.done():
                future.set_result(value)


def _new_task_id() -> str:
    import secrets  # here: it is the only user, and imports hashlib and random a server rarely needs

    return secrets.token_urlsafe(16)
