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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._connection import META_SUBSCRIPTION_ID, Scope
from .._errors import InvalidParams
from .._prompts import PromptRegistry
from .._resources import ResourceRegistry
from ..context import Context
from ..lowlevel import Listener
from ..tasks import TASKS_EXTENSION, TaskRunner
from ..types import UI_EXTENSION
from ._base import RegisteredTool
from ._tool_search_api import ToolSearchAPI
from .apps import AppsAPI
from .prompts import PromptsAPI
from .tools import ToolOptions, ToolsAPI

if TYPE_CHECKING:
    from ..skills import SkillLibrary

__all__ = ["Server", "ToolOptions"]


class Server(ToolsAPI, AppsAPI, PromptsAPI, ToolSearchAPI):
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
        self._tools: dict[str, RegisteredTool] = {}
        self._resources = ResourceRegistry()
        self._prompts = PromptRegistry()
        self._completers: dict[tuple[str, str, str], tuple[Callable[..., Any], bool]] = {}
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
        # Updates of one resource: by resources/subscribe in the handshake era, by a listen
        # stream's resourceSubscriptions in 2026-07-28; `subscribe` declares either.
        if "resources" in caps and (scope.has("resource_subscribe") or scope.has("subscriptions_listen")):
            caps["resources"]["subscribe"] = True
        if any(tool.task_support != "forbidden" for tool in self._tools.values()):
            if scope.has("tasks"):
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            elif scope.has("tasks_extension"):
                caps["extensions"] = {**caps.get("extensions", {}), TASKS_EXTENSION: {}}
        if self._skills is not None:  # the skills extension, declared in both eras
            caps["extensions"] = {**caps.get("extensions", {}), **self._skills.capability()}
        if self._serves_apps:  # MCP Apps, declared in both eras as the extension says
            caps["extensions"] = {**caps.get("extensions", {}), UI_EXTENSION: {}}
            self.warn_missing_views()
        return caps

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
        mounted = sorted(subscribed) if self._mounts else []  # told to mounted servers, first
        if mounted:
            await self._subscriptions_changed(listener, mounted, True)
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
            if mounted:
                await asyncio.shield(self._subscriptions_changed(listener, mounted, False))
        # The server ends the subscription: a graceful close is a result carrying the id.
        return {"_meta": {META_SUBSCRIPTION_ID: ctx.request_id}}

    async def close_subscriptions(self) -> None:
        """End every ``subscriptions/listen`` stream gracefully (e.g. before shutting down)."""
        if self._closing is not None:
            self._closing.set()
            self._closing = None
