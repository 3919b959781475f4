"""The :class:`Host`: many servers, one set of tools, every call governed and written down.

::

    async with Host(load_config("claude_desktop_config.json"), ask=confirm) as host:
        for tool in host.tools():
            print(tool.name)                      # weather__get_weather, notes__add_note...
        result = await host.call_tool("weather__get_weather", {"location": "Paris"})

Every server connects concurrently with a :class:`~mcpkit.Client` of its own (:mod:`.upstream`); a
slow or dead one holds up neither the start nor the others' calls. A tool call goes: consent policy
(``deny`` answers a refusal, ``ask`` puts the question to the ``ask`` callback), rate limits, then
the server; the audit log gets a line whatever happened.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Self, cast

import msgspec

from .. import _naming as naming
from .._errors import InvalidParams, MCPError, ResourceNotFound
from ..client.exchange import ProgressCallback
from ..types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from . import aggregate
from .audit import AuditLog, default_audit_path
from .governance import (
    AskCallback,
    ConsentRequest,
    Guard,
    RootsCallback,
    ServerRequestCallback,
    governed,
)
from .model import DEFAULT_REDACT, HostConfig
from .pool import Lease
from .restarts import MAX_RESTARTS
from .subscriptions import Subscriptions
from .upstream import ClientFactory, ServerStatus, Upstream, UpstreamHooks

__all__ = ["Host"]


class Host:
    """Connects to every server of a :class:`~mcpkit.host.HostConfig` and serves them as one.

    Args:
        config: the servers and rules (:func:`~mcpkit.host.load_config`).
        ask: consent for calls the policy marks ``ask``; without it they are refused.
        sampling, elicitation: answer servers' ``sampling/createMessage`` / ``elicitation/create``
            (declared to the servers only when given).
        roots: the roots offered to servers (default: the config's ``roots``, when it has some).
        on_change: ``fn(kind)`` when the host's list of ``tools``, ``resources`` or ``prompts``
            changed (a server connected, went away, or sent ``list_changed``).
        on_notification: ``async fn(server, method, params)`` for the servers' other notifications.
        audit: where audit lines go (default: the config's ``audit``, else
            :func:`~mcpkit.host.audit.default_audit_path`).
        caller: who calls, in the audit log, when :meth:`call_tool` is not told.
        restart: reconnect servers that went away (with backoff).
        max_restarts: restarts in a row of a stdio server that never stays up a minute before it
            is given up on (state ``failed``); ``None``: no limit. A stdio server whose command
            is missing is never retried (see :mod:`mcpkit.host.restarts`).
        connect_timeout: seconds :meth:`start` waits for servers' first connection; a server still
            connecting then goes on in the background (its status says ``starting``).
        stderr: where stdio servers' stderr goes (default: ours).
        prefixed: name tools and prompts ``server__name`` (false: their own names, for a proxy of
            one server; see :mod:`mcpkit.compose.proxy`).
        client_factory: ``fn(config, options) -> Client`` making each connection to a server from
            the host's keyword arguments for :class:`~mcpkit.Client` (default: ``Client(config.target,
            **options)``); a proxy adds its caller's options, or hands over a ``Client`` of its own.
    """

    def __init__(
        self,
        config: HostConfig,
        *,
        ask: AskCallback | None = None,
        sampling: ServerRequestCallback | None = None,
        elicitation: ServerRequestCallback | None = None,
        roots: RootsCallback | None = None,
        on_change: Callable[[str], None] | None = None,
        on_notification: Callable[[str, str, dict[str, Any]], Awaitable[None]] | None = None,
        audit: AuditLog | None = None,
        caller: str = "host",
        restart: bool = True,
        max_restarts: int | None = MAX_RESTARTS,
        connect_timeout: float = 30.0,
        stderr: Any = None,
        prefixed: bool = True,
        client_factory: ClientFactory | None = None,
    ) -> None:
        self.config = config
        self.prefixed = prefixed
        self.ask = ask
        self.sampling = sampling
        self.elicitation = elicitation
        self.roots = roots
        self.on_change = on_change
        self.on_notification = on_notification
        self.caller = caller
        self.connect_timeout = connect_timeout
        if audit is None:
            settings = config.audit
            audit = (
                AuditLog(settings.path, settings.redact)
                if settings is not None
                else AuditLog(default_audit_path(), DEFAULT_REDACT)
            )
        self.audit = audit
        hooks = UpstreamHooks(self._client_options, self._notified, self._lists_changed)
        self.upstreams: dict[str, Upstream] = {
            key: Upstream(
                server,
                hooks,
                restart=restart,
                stderr=stderr,
                max_restarts=max_restarts,
                client_factory=client_factory,
            )
            for key, server in config.servers.items()
        }
        self._tables = aggregate.Tables()
        self._published: dict[str, Any] = {}
        self._subscriptions = Subscriptions(self.upstreams)

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Connect to every enabled server at once; return when each has connected or failed once
        (or after ``connect_timeout``)."""
        for upstream in self.upstreams.values():
            upstream.start()
        firsts = [asyncio.ensure_future(u.first_attempt.wait()) for u in self.upstreams.values()]
        if firsts:
            _, pending = await asyncio.wait(firsts, timeout=self.connect_timeout)
            for wait in pending:
                wait.cancel()
        self._rebuild()

    async def aclose(self) -> None:
        """Close every connection (stdio servers get EOF, then SIGTERM, then SIGKILL)."""
        self._subscriptions.close()
        await asyncio.gather(*(u.aclose() for u in self.upstreams.values()), return_exceptions=True)
        self.audit.close()

    async def wait_ready(self, *keys: str, timeout: float = 30.0) -> None:
        """Wait until the servers *keys* (default: all enabled) are connected.

        Raises:
            TimeoutError: one was not ready in time.
        """
        chosen = (
            [self.upstreams[k] for k in keys]
            if keys
            else [u for u in self.upstreams.values() if u.config.enabled]
        )
        async with asyncio.timeout(timeout):
            for upstream in chosen:
                await upstream.ready.wait()

    def status(self) -> dict[str, ServerStatus]:
        """Each server's state (``ready``, ``restarting``, ``failed``...), error and counts."""
        return {key: u.status for key, u in self.upstreams.items()}

    # -- what the servers asked of us, and told us -------------------------------------------------

    def _client_options(self, key: str) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.sampling is not None:
            sampling = self.sampling

            async def sample(params: dict[str, Any]) -> Any:
                return await sampling(key, params)

            options["sampling"] = sample
        if self.elicitation is not None:
            elicitation = self.elicitation

            async def elicit(params: dict[str, Any]) -> Any:
                return await elicitation(key, params)

            options["elicitation"] = elicit
        if self.roots is not None:
            roots = self.roots

            async def list_roots() -> Sequence[Any]:
                return await roots(key)

            options["roots"] = list_roots
        elif self.config.roots:
            from ..types import Root

            options["roots"] = [
                Root(uri=uri, name=uri.rsplit("/", 1)[-1] or uri) for uri in self.config.roots
            ]
        return options

    async def _notified(self, key: str, method: str, params: dict[str, Any]) -> None:
        if self.on_notification is not None:
            await self.on_notification(key, method, params)

    def _lists_changed(self, key: str) -> None:
        self._rebuild()
        self._subscriptions.reconnected(key)

    def _rebuild(self) -> None:
        live = [(u.config, u) for u in self.upstreams.values()]
        self._tables = aggregate.build(live, self.config.rename, prefixed=self.prefixed)
        published = {
            "tools": list(self._tables.tools),
            "prompts": list(self._tables.prompts),
            "resources": (
                list(self._tables.resources),
                [t.uri_template for _, t, _ in self._tables.templates],
            ),
        }
        for kind, value in published.items():
            if self._published and self._published.get(kind) != value and self.on_change is not None:
                self.on_change(kind)
        self._published = published

    # -- the aggregate -----------------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Every tool of every connected server, under the host's names (config order)."""
        return [tool for _, tool in self._tables.tools.values()]

    def prompts(self) -> list[Prompt]:
        return [prompt for _, prompt in self._tables.prompts.values()]

    def resources(self) -> list[Resource]:
        return [resource for _, resource in self._tables.resources.values()]

    def resource_templates(self) -> list[ResourceTemplate]:
        return [template for _, template, _ in self._tables.templates]

    @property
    def tables(self) -> aggregate.Tables:
        """The current tables (a new object each time a server's lists change): what each name
        stands for. The gateway's forwarders list and route from them."""
        return self._tables

    def conflicts(self) -> list[str]:
        """Names left out because another server's item took them first."""
        return list(self._tables.conflicts)

    def _unknown(self, kind: str, name: str) -> MCPError:
        """Why *name* is not there: its server is down (Unavailable), or there is no such thing."""
        if self.prefixed:
            parts = naming.split(name)
            upstream = self.upstreams.get(parts[0]) if parts is not None else None
        else:  # unprefixed names say nothing of their server: a lone server is the one meant
            lone = list(self.upstreams.values())
            upstream = lone[0] if len(lone) == 1 else None
        if upstream is not None and upstream.status.state != "ready":
            return upstream.unavailable()
        return InvalidParams(f"Unknown {kind}: {name}")

    def decision(self, name: str) -> tuple[str, str]:
        """What the policy says of a call to the host tool *name* (``allow``/``deny``/``ask``), and
        which rule says it; before any call, so a shell or a listing can show it."""
        routed, tool = self._tables.tools[name] if name in self._tables.tools else (self.route(name), None)
        hints = msgspec.to_builtins(tool.annotations) if tool is not None and tool.annotations else {}
        return self.config.policy.decide(routed.server, routed.name, hints)

    def route(self, name: str) -> aggregate.Routed:
        """Which server and which of its tools a host tool name stands for.

        Raises:
            InvalidParams: no such tool (-32602, as a server answers an unknown tool).
        """
        found = self._tables.tools.get(name)
        if found is None:
            raise self._unknown("tool", name)
        return found[0]

    # -- calls -------------------------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        caller: str | None = None,
        ask: AskCallback | None = None,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
        guard: Guard | None = None,
        lease: Lease | None = None,
    ) -> CallToolResult:
        """Call a host tool: the policy decides, the rate limits apply, the server answers.

        A refusal (denied, not confirmed, rate limited) is a tool error result saying why, so that
        the model reads it. *ask* overrides the host's consent callback for this call; *guard* is
        entered around the server's part of the call only (the gateway counts calls there); with a
        *lease* the call runs on a session of the lease's owner (:mod:`.pool`), not the shared one.

        Raises:
            InvalidParams: no tool of that name.
            Unavailable: its server is not connected, or died during the call.
            MCPError: the server answered with a protocol error, or did not answer in time.
        """
        routed, annotations = self.tool_facts(name)
        arguments = arguments or {}
        request = ConsentRequest(routed.server, routed.name, name, arguments, annotations, "")
        return cast(
            "CallToolResult",
            await governed(
                self.config.policy,
                self.audit,
                request,
                caller or self.caller,
                ask or self.ask,
                lambda: self.forward_tool(
                    name, arguments, timeout=timeout, on_progress=on_progress, guard=guard, lease=lease
                ),
            ),
        )

    def tool_facts(self, name: str) -> tuple[aggregate.Routed, dict[str, Any]]:
        """Where the host tool *name* leads, and its annotations (what the policy reads).

        Raises:
            InvalidParams: no such tool; Unavailable: its server is not connected.
        """
        found = self._tables.tools.get(name)
        if found is None:
            raise self._unknown("tool", name)
        routed, tool = found
        annotations = msgspec.to_builtins(tool.annotations) if tool.annotations is not None else {}
        return routed, annotations

    async def forward_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        guard: Guard | None = None,
        lease: Lease | None = None,
    ) -> CallToolResult:
        """Call a host tool on its server with no policy, limits or audit: :meth:`call_tool`'s
        last step, and what a gateway calls once its own middleware has governed the call."""
        routed, _ = self.tool_facts(name)
        upstream = self.upstreams[routed.server]
        async with guard(routed.server) if guard is not None else contextlib.nullcontext():
            return await upstream.call(
                lambda client: client.call_tool(
                    routed.name, arguments or {}, timeout=timeout, on_progress=on_progress
                ),
                lease,
            )

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read a resource from the server that lists it (or whose template matches it).

        Raises:
            ResourceNotFound: no server offers *uri*.
        """
        server = self._tables.server_for_uri(uri)
        if server is None:
            raise ResourceNotFound(f"Resource not found: {uri}", {"uri": uri})
        return await self.upstreams[server].call(lambda client: client.read_resource(uri))

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> GetPromptResult:
        found = self._tables.prompts.get(name)
        if found is None:
            raise self._unknown("prompt", name)
        routed = found[0]
        return await self.upstreams[routed.server].call(
            lambda client: client.get_prompt(routed.name, arguments)
        )

    async def complete(
        self, ref: dict[str, str], argument: str, value: str, context: dict[str, str] | None = None
    ) -> Completion:
        """Completion for a host prompt (``ref/prompt`` with the host's name) or resource template."""
        if ref.get("type") == "ref/prompt":
            found = self._tables.prompts.get(ref.get("name", ""))
            if found is None:
                raise InvalidParams(f"Unknown prompt: {ref.get('name')}")
            server, ref = found[0].server, {**ref, "name": found[0].name}
        else:
            uri = ref.get("uri", "")
            owners = [key for key, template, _ in self._tables.templates if template.uri_template == uri]
            server = owners[0] if owners else self._tables.server_for_uri(uri) or ""
            if not server:
                raise InvalidParams(f"Unknown resource template: {uri}")
        chosen = ref
        return await self.upstreams[server].call(
            lambda client: client.complete(chosen, argument, value, context)
        )

    async def subscribe(self, uri: str) -> bool:
        """Subscribe to *uri* on its server (handshake-era servers that offer it); False otherwise.
        A server that reconnects is subscribed again."""
        server = self._tables.server_for_uri(uri)
        return server is not None and await self._subscriptions.subscribe(uri, server)

    async def unsubscribe(self, uri: str) -> bool:
        """Undo :meth:`subscribe` of *uri* on the server it was made on; False if there was none
        (or the server is not connected: the subscription went with its connection)."""
        return await self._subscriptions.unsubscribe(uri)

    @property
    def subscribed(self) -> dict[str, str]:
        """The URIs :meth:`subscribe` subscribed to, and on which server."""
        return self._subscriptions.subscribed
