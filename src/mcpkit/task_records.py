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
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

import msgspec

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
    #: Whose task it is (see :func:`requestor`): only that requestor gets, lists, cancels, updates
    #: or reads it; ``None``: whoever knows its id (a 2026-07-28 task started without authorization).
    requestor: str | None = None
    #: Listed under its requestor in the fleet's shared state already.
    indexed: bool = False

    def belongs_to(self, who: str | None) -> bool:
        """Whether the requestor *who* (see :func:`requestor`) may reach this task: its own, or
        one bound to nobody. Another's answers as an unknown task would."""
        return self.requestor is None or self.requestor == who

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
    """The part of a fleet's shared state (:class:`~mcpkit.fleet.SharedState`) that
    tasks use: keys with expiry, queues and a channel."""

    async def get(self, key: str) -> bytes | None: ...
    async def put(self, key: str, value: bytes, ttl: float | None = None) -> None: ...
    async def push(self, key: str, value: bytes, limit: int, ttl: float | None = None) -> None: ...
    async def peek(self, key: str) -> list[bytes]: ...
    async def publish(self, channel: str, data: bytes) -> None: ...
    async def subscribe(self, channel: str, listener: Callable[[bytes], None]) -> Any: ...


def requestor(auth: AuthInfo | None, session_id: str | None, connection: object | None = None) -> str | None:
    """Whom a task belongs to: the key of the caller's authorization context, else of its session,
    else of its connection; ``None`` where there is none of these (nobody in particular).

    2025-11-25 (basic/utilities/tasks, Security Considerations): "When an authorization context is
    provided, receivers MUST bind tasks to said context", and then "MUST reject tasks/get,
    tasks/result, and tasks/cancel requests for tasks that do not belong to the same authorization
    context as the requestor"; tasks/list "includes only tasks associated with the requestor's
    authorization context". The context is the token's issuer and subject, or its client where it
    names no subject; a token naming neither is no context, and the session or connection binds.

    *connection* is the server's object for one connection (a stdio process, an in-memory pair):
    it keys tasks where no session id does (a random key per object, kept while the object lives,
    never its ``id()``, which a later connection may reuse). Pass ``None`` for a 2026-07-28 request
    without authorization: it has no session, and its connection "is not a conversation or
    session" (basic, Statelessness); its task id alone is the capability ("A server MAY use task
    IDs as bearer tokens", tasks extension, Security Considerations)."""
    if auth is not None and (auth.subject is not None or auth.client_id is not None):
        # JSON, so that no issuer or subject can be written to look like another pair.
        if auth.subject is not None:
            return "auth:" + msgspec.json.encode([auth.issuer, "sub", auth.subject]).decode()
        return "auth:" + msgspec.json.encode([auth.issuer, "client", auth.client_id]).decode()
    if session_id is not None:
        return f"session:{session_id}"
    if connection is not None:
        key = _CONNECTION_KEYS.get(connection)
        if key is None:
            key = _CONNECTION_KEYS[connection] = _random_key()
        return f"connection:{key}"
    return None


#: The key of each live connection that has started or asked for a task (see :func:`requestor`).
_CONNECTION_KEYS: Final[weakref.WeakKeyDictionary[object, str]] = weakref.WeakKeyDictionary()


def _random_key() -> str:
    import secrets  # here: it is the only user, and imports hashlib and random a server rarely needs

    return secrets.token_urlsafe(16)


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
