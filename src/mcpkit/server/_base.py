"""What every part of the server shares: its state, calling user functions, announcing changes."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._connection import Scope
from .._prompts import PromptRegistry
from .._resources import ResourceRegistry
from .._signature import ToolSignature
from ..context import Context
from ..lowlevel import LowLevelServer
from ..tasks import TASKS_EXTENSION, TaskRunner

if TYPE_CHECKING:
    from ..skills import SkillLibrary


F = TypeVar("F", bound=Callable[..., Any])

TaskSupport = Literal["forbidden", "optional", "required"]


@dataclass(slots=True)
class RegisteredTool:
    fn: Callable[..., Any]
    signature: ToolSignature
    wire: dict[str, Any]  # the Tool as the newest revision lists it
    task_support: TaskSupport = "forbidden"
    mirrored: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)  # x-mcp-header
    defer_task: bool = False


class ServerBase(LowLevelServer):
    """The state every part of :class:`~mcpkit.Server` shares, and how a change is announced."""

    page_size: int | None
    tasks: TaskRunner
    _tools: dict[str, RegisteredTool]
    _resources: ResourceRegistry
    _prompts: PromptRegistry
    _completers: dict[tuple[str, str, str], Callable[..., Any]]
    _skills: SkillLibrary | None
    _background: set[asyncio.Task[None]]
    _closing: asyncio.Event | None

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


async def invoke(
    fn: Callable[..., Any], signature: ToolSignature, kwargs: dict[str, Any], ctx: Context
) -> Any:
    """Call a user function with its bound arguments and its context parameters filled in."""
    for param in signature.skipped:
        kwargs[param] = ctx
    if signature.is_async:
        return await fn(**kwargs)
    # Sync functions run in a worker thread so that they never block the event loop.
    return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, **kwargs))


def declares_tasks(scope: Scope) -> bool:
    extensions = scope.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
