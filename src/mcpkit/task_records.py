"""Task records and where they live: one task's state (:class:`TaskRecord`), its lifecycle, the
store protocol with its in-memory default, and the part of a fleet's shared state tasks use.
:mod:`mcpkit.tasks` runs the tasks (and re-exports all of this).

Status lifecycle (basic/utilities/tasks): "From working: may move to input_required, completed,
failed, or cancelled. From input_required: may move to working, completed, failed, or cancelled.
Tasks with a completed, failed, or cancelled status are in a terminal state".
"""

from __future__ import annotations

import asyncio
import datetime
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from .auth._info import AuthInfo

__all__ = [
    "RELATED_TASK",
    "TASKS_EXTENSION",
    "TERMINAL",
    "InMemoryTaskStore",
    "TaskRecord",
    "TaskShare",
    "TaskStatus",
    "TaskStore",
    "requestor",
]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
_NEXT: Final[dict[str, frozenset[str]]] = {
    "working": frozenset({"input_required", "completed", "failed", "cancelled"}),
    "input_required": frozenset({"working", "completed", "failed", "cancelled"}),
}


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class TaskRecord:
    """One task: its state, and once terminal its outcome."""

    task_id: str
    ttl_ms: int | None
    poll_interval_ms: int
    status: TaskStatus = "working"
    status_message: str | None = None
    created_at: str = field(default_factory=_now)
    last_updated_at: str = field(default_factory=_now)
    expires: float | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    #: Questions the task waits on (2026-07-28): key -> {"method", "params"}.
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    answers: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    runner: asyncio.Task[None] | None = None
    #: Called after each status change (2025-11-25 sends notifications/tasks/status with it).
    on_change: Callable[[TaskRecord], Awaitable[None]] | None = None
    #: Read from the fleet's shared state: the task runs in another process.
    remote: bool = False
    #: In a fleet: the node running the task (whose heartbeat says it still runs).
    node: str | None = None
    #: Whose ``tasks/list`` shows the task (see :func:`requestor`); ``None``: nobody's in particular.
    requestor: str | None = None
    #: Listed under its requestor in the fleet's shared state already.
    indexed: bool = False

    def move(self, status: TaskStatus, message: str | None = None) -> bool:
        """Change status if the lifecycle allows it; False (and no change) otherwise."""
        if status != self.status and status not in _NEXT.get(self.status, frozenset()):
            return False
        self.status = status
        self.status_message = message
        self.last_updated_at = _now()
        if status in TERMINAL:
            self.done.set()
        return True

    def wire_v1(self) -> dict[str, Any]:
        """The ``Task`` object of 2025-11-25."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttl": self.ttl_ms,
            "pollInterval": self.poll_interval_ms,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        return task

    def wire_v2(self, *, detailed: bool) -> dict[str, Any]:
        """The task as the 2026-07-28 extension shows it (``detailed``: as ``tasks/get`` does)."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        if detailed:
            if self.status == "completed" and self.result is not None:
                task["result"] = self.result
            elif self.status == "failed" and self.error is not None:
                task["error"] = self.error
            elif self.status == "input_required":
                task["inputRequests"] = dict(self.input_requests)
        return task


class TaskStore(Protocol):
    """Where task records live. mcpkit's runner keeps the live part (the asyncio task) itself."""

    def add(self, record: TaskRecord) -> None: ...
    def get(self, task_id: str) -> TaskRecord | None: ...
    def all(self) -> list[TaskRecord]: ...
    def remove(self, task_id: str) -> None: ...


class TaskShare(Protocol):
    """The part of a fleet's shared state (:class:`~mcpkit.transports.fleet.SharedState`) that
    tasks use: keys with expiry, queues and a channel."""

    async def get(self, key: str) -> bytes | None: ...
    async def put(self, key: str, value: bytes, ttl: float | None = None) -> None: ...
    async def push(self, key: str, value: bytes, limit: int, ttl: float | None = None) -> None: ...
    async def peek(self, key: str) -> list[bytes]: ...
    async def publish(self, channel: str, data: bytes) -> None: ...
    async def subscribe(self, channel: str, listener: Callable[[bytes], None]) -> Any: ...


def requestor(auth: AuthInfo | None, session_id: str | None) -> str | None:
    """Whose tasks a ``tasks/list`` shows: "Receivers MUST bind tasks to the authorization context
    when one is provided" (the token's issuer and subject, or its client); without one, the session."""
    if auth is not None:
        who = f"sub:{auth.subject}" if auth.subject is not None else f"client:{auth.client_id}"
        return f"auth:{auth.issuer} {who}"
    return f"session:{session_id}" if session_id is not None else None


class InMemoryTaskStore:
    """The default store: a dict, swept of expired tasks as it is used."""

    def __init__(self) -> None:
        self._tasks: dict[str, TaskRecord] = {}

    def _sweep(self) -> None:
        now = time.monotonic()
        for key in [k for k, r in self._tasks.items() if r.expires is not None and r.expires < now]:
            del self._tasks[key]

    def add(self, record: TaskRecord) -> None:
        self._sweep()
        self._tasks[record.task_id] = record

    def get(self, task_id: str) -> TaskRecord | None:
        self._sweep()
        return self._tasks.get(task_id)

    def all(self) -> list[TaskRecord]:
        self._sweep()
        return list(self._tasks.values())

    def remove(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)
