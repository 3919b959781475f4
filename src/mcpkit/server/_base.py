"""What every part of the server shares: its state, calling user functions, announcing changes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._connection import Scope
from .._prompts import PromptRegistry
from .._resources import ResourceRegistry
from .._signature import ToolSignature
from ..context import Context
from ..lowlevel import LowLevelServer
from ..tasks import TASKS_EXTENSION, TaskRunner
from ..types import ToolAnnotations
from ._threads import run_sync

if TYPE_CHECKING:
    from .._ratelimit import Rate
    from ..skills import SkillLibrary


F = TypeVar("F", bound=Callable[..., Any])

TaskSupport = Literal["forbidden", "optional", "required"]


def _monotonic() -> float:
    return time.monotonic()  # looked up at each call: a test may give the module a clock of its own


class RateLimit:
    """A tool's ``rate_limit=``: a token bucket per caller (``"10/s"`` allows bursts of 10 and 10
    calls a second), kept by :class:`mcpkit.middleware.RateLimit`, whose rules say who a caller
    is: a lasting connection (stdio, in process, a handshake-era session), else the verified token's
    subject, else one bucket shared by every 2026-07-28 request of the tool. Buckets of a
    connection go with it (weak keys), so the table does not grow with closed sessions."""

    __slots__ = ("_caller", "limiter", "spec")

    def __init__(self, spec: str) -> None:
        # Imported with the first rate-limited tool: the rate's pattern is compiled at import, and
        # most servers (each spawned at a host's start) limit nothing.
        from ..middleware.ratelimit import RateLimit as Buckets
        from ..middleware.ratelimit import caller_of_context

        self.limiter = Buckets(spec, clock=_monotonic)
        self.spec = self.limiter.rate.spec
        self._caller = caller_of_context

    @property
    def rate(self) -> Rate:
        return self.limiter.rate

    def allows(self, ctx: Context) -> bool:
        """Spend one token of the caller's bucket; ``False`` when it is empty."""
        return self.limiter.take(self._caller(ctx)) == 0.0


class RegisteredTool:
    """A tool as registered: its function, what its signature says, and how it is listed and run.

    A plain class: as a dataclass its __init__, __repr__ and __eq__ (which nothing uses) were
    compiled from source at every server's start-up."""

    __slots__ = (
        "app_only",
        "defer_task",
        "fn",
        "mirrored",
        "rate_limit",
        "repeatable",
        "scopes",
        "signature",
        "tags",
        "task_support",
        "timeout",
        "wire",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        signature: ToolSignature,
        wire: dict[str, Any],  # the Tool as the newest revision lists it
        task_support: TaskSupport = "forbidden",
        mirrored: dict[str, tuple[str, ...]] | None = None,  # x-mcp-header (None: none)
        defer_task: bool = False,
        timeout: float | None = None,  # seconds; None: the server's tool_timeout
        rate_limit: RateLimit | None = None,
        app_only: bool = False,  # MCP Apps: visibility ["app"], listed only to clients that show views
        scopes: tuple[str, ...] = (),  # OAuth scopes a caller needs, on a protected server (see .tools)
        repeatable: bool = False,  # a fleet may run it again when its node died mid-call
    ) -> None:
        self.fn = fn
        self.signature = signature
        self.wire = wire
        self.task_support = task_support
        self.mirrored: dict[str, tuple[str, ...]] = {} if mirrored is None else mirrored
        self.defer_task = defer_task
        self.timeout = timeout
        self.rate_limit = rate_limit
        self.app_only = app_only
        self.scopes = scopes
        self.repeatable = repeatable
        #: Labels for filtering (``server.disable(tags=...)``); never sent to clients.
        self.tags: frozenset[str] = frozenset()


def _raw_arguments(arguments: Any) -> dict[str, Any]:
    return {"arguments": dict(arguments)}


def _unserialized(value: Any) -> Any:
    return value


def raw_signature(input_schema: dict[str, Any], description: str | None) -> ToolSignature:
    """The signature of ``async fn(arguments, ctx)``: the arguments are passed as sent, as one dict."""
    return ToolSignature(
        input_schema=input_schema,
        output_schema=None,
        wrapped_output=False,
        skipped={"ctx": Context},
        description=description,
        is_async=True,
        _bind=_raw_arguments,
        _serialize=_unserialized,
    )


def is_repeatable(option: bool | None, annotations: ToolAnnotations | None) -> bool:
    """A tool's ``repeatable=`` option, or what its annotations imply when it is not given: a tool
    that only reads, or whose repeated calls do what one does, may be run a second time."""
    if option is not None:
        return option
    return annotations is not None and bool(annotations.read_only_hint or annotations.idempotent_hint)


class ServerBase(LowLevelServer):
    """The state every part of :class:`~mcpkit.Server` shares, and how a change is announced."""

    page_size: int | None
    #: Seconds a tool may run before its call answers a tool error (``None``: no limit); a tool's
    #: own ``timeout=`` wins.
    tool_timeout: float | None = None
    #: Send the peer ``Error executing tool NAME`` only; the exception goes to the log either way.
    mask_errors: bool = False
    tasks: TaskRunner
    _tools: dict[str, RegisteredTool]
    _resources: ResourceRegistry
    _prompts: PromptRegistry
    _completers: dict[tuple[str, str, str], tuple[Callable[..., Any], bool]]  # fn, takes a Context
    _skills: SkillLibrary | None
    _background: set[asyncio.Task[None]]
    _closing: asyncio.Event | None
    #: An MCP App is served (a ui:// resource or a tool bound to one): the extension is declared.
    _serves_apps: bool = False

    #: The servers this one is mounted in (see :meth:`~mcpkit.Server.mount`): told of its changes.
    _mounted_in: list[Any] = []  # noqa: RUF012 - read only; a server that is mounted has its own
    #: Lists and calls go through the catalogue (:mod:`.catalog`): mounts, transforms, hidden parts.
    _composed: bool = False

    def _changed(self, kind: str) -> None:
        """Announce a change of a list to whoever listens. Safe from sync tools' worker threads."""
        for parent in self._mounted_in:
            parent._child_changed(kind, self)
        loop = self.loop
        if loop is None or (not self.listeners and self.shared is None):
            return  # not serving yet, or nobody to tell (in a fleet, other processes may listen)

        def announce() -> None:
            task = loop.create_task(self._announce_list_changed(kind))  # parents were told above
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


async def invoke(
    fn: Callable[..., Any], signature: ToolSignature, kwargs: dict[str, Any], ctx: Context
) -> Any:
    """Call a user function with its bound arguments and its context parameters filled in."""
    for param in signature.skipped:
        kwargs[param] = ctx
    if signature.is_async:
        return await fn(**kwargs)
    if signature.inline:
        return fn(**kwargs)
    # Sync functions run in a worker thread so that they never block the event loop; in a copy of
    # this task's context, as asyncio.to_thread does, so context variables (current_auth) hold there.
    return await run_sync(fn, kwargs)


def declares_tasks(scope: Scope) -> bool:
    extensions = scope.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
