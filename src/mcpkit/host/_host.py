"""The :class:`Host`: many servers, one set of tools, every call governed and written down.

::

    async with Host(load_config("claude_desktop_config.json"), ask=confirm) as host:
        for tool in host.tools():
            print(tool.name)                      # weather__get_weather, notes__add_note...
        result = await host.call_tool("weather__get_weather", {"location": "Paris"})

Every server connects concurrently with a :class:`~mcpkit.Client` of its own (:mod:`.upstream`); a
slow or dead one holds up neither the start nor the others' calls. What they offer is listed,
named and routed by a :class:`~mcpkit.Server` (``host.server``) with one forwarder per server mounted
under its key (:mod:`._forward`): the server catalogue's rules, which the gateway serves as they are.
A tool call goes: consent policy (``deny`` answers a refusal, ``ask`` puts the question to the
``ask`` callback), rate limits, then the server; the audit log gets a line whatever happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, NamedTuple, Self, cast

import msgspec

from .._errors import InvalidParams, MCPError, ResourceNotFound
from ..client import Client
from ..client.exchange import ProgressCallback
from ..server import Server
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
from ._forward import Forwarder, install
from .audit import AuditLog, default_audit_path
from .bridge import Bridge
from .governance import AskCallback, ConsentRequest, RootsCallback, ServerRequestCallback, governed
from .model import DEFAULT_REDACT, HostConfig
from .restarts import MAX_RESTARTS
from .subscriptions import Subscriptions
from .upstream import ClientFactory, ServerStatus, Upstream, UpstreamHooks

__all__ = ["Host", "Routed"]


class Routed(NamedTuple):
    """Where a host tool name leads: the server's key and its own name for the tool."""

    server: str
    name: str


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
        server: a server the host is served through (the gateway's, a proxy's): the forwarders are
            mounted on it, the servers' questions go to its callers (:mod:`.bridge`, in place of
            *sampling*, *elicitation* and *roots*), and their list changes, resource updates and
            log lines too (in place of *on_change* and *on_notification*). Default: a plain server
            of the host's own, which it lists and routes through.
        mounted: *server* has forwarders of this host's servers already (a proxy's, mounted once
            for all its runs): they are not mounted again, and the host lists nothing itself.
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
        server: Server | None = None,
        mounted: bool = False,
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
        self.bridge = Bridge(config.roots)
        self.subscriptions = Subscriptions(self.upstreams)
        self._serving = server is not None
        if server is not None:  # its callers are asked, and told (see *server* above)
            self.sampling, self.elicitation = self.bridge.sampling, self.bridge.elicitation
            self.roots, self.on_change = self.bridge.list_roots, self._relay_change
            self.on_notification = self._relay_notification
        self.server = server if server is not None else Server("mcpkit-host")
        if not mounted:
            install(self.server, self, config, prefixed=prefixed)
        self._view: Client | None = None  # the host's own in-process client of its server
        self._listed: dict[str, list[Any]] = {}
        self._published: dict[str, Any] = {}
        self._relisting = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()
        self._lists_only = mounted

    @property
    def forwarders(self) -> list[Forwarder]:
        """The server's forwarders, one per configured server (config order)."""
        return [m.server for m in self.server._mounts if isinstance(m.server, Forwarder)]

    @property
    def host(self) -> Host:
        """The host itself: what its forwarders read (a proxy's read the host of its current run)."""
        return self

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
        self._published = self._fingerprint()
        if not self._lists_only:
            self._view = Client(self.server)
            await self._view.connect()
            await self._relist()

    async def aclose(self) -> None:
        """Close every connection (stdio servers get EOF, then SIGTERM, then SIGKILL)."""
        if self._serving:
            for parked in list(self.bridge.parked.values()):  # callers that will not come back now
                parked.cancel()
            self.bridge.parked.clear()
            await self.server.close_subscriptions()
        self.subscriptions.close()
        for task in self._background:
            task.cancel()
        view, self._view = self._view, None
        if view is not None:
            with contextlib.suppress(Exception):
                await view.aclose()
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
        asks = (("sampling", self.sampling), ("elicitation", self.elicitation), ("roots", self.roots))
        options: dict[str, Any] = {name: functools.partial(fn, key) for name, fn in asks if fn is not None}
        if self.roots is None and self.config.roots:
            from ..types import Root

            options["roots"] = [
                Root(uri=uri, name=uri.rsplit("/", 1)[-1] or uri) for uri in self.config.roots
            ]
        return options

    async def _notified(self, key: str, method: str, params: dict[str, Any]) -> None:
        if self.on_notification is not None:
            await self.on_notification(key, method, params)

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _relay_change(self, kind: str) -> None:
        with contextlib.suppress(RuntimeError):  # no loop: nobody is listening yet
            self._spawn(self.server.notify_list_changed(kind))

    async def _relay_notification(self, server: str, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            self._spawn(self.server.notify_resource_updated(params["uri"]))
        elif method == "notifications/message":
            scope = self.bridge.log_target(server)
            if scope is not None:  # a log line of a call in flight goes to its caller
                level = str(params.get("level", "info"))
                self._spawn(scope.ctx.log(level, params.get("data"), logger=params.get("logger") or server))

    def _lists_changed(self, key: str) -> None:
        self.subscriptions.reconnected(key)
        if not self._published:
            return  # start() reads the lists once the servers are up
        published = self._fingerprint()
        changed = [kind for kind, value in published.items() if self._published.get(kind) != value]
        self._published = published
        if self._view is None:
            self._tell(changed)
            return
        self._spawn(self._relist(changed))

    def _fingerprint(self) -> dict[str, Any]:
        """What the servers list now, by name: a change of it is a change of the host's lists."""
        ups = self.upstreams.values()
        return {
            "tools": [(u.config.key, t.name) for u in ups for t in u.tools],
            "prompts": [(u.config.key, p.name) for u in ups for p in u.prompts],
            "resources": [(u.config.key, r.uri) for u in ups for r in u.resources]
            + [(u.config.key, t.uri_template) for u in ups for t in u.templates],
        }

    async def _relist(self, changed: Sequence[str] = ()) -> None:
        """Read the host's lists again through its server (one reading at a time), then tell.

        The lists are replaced together once all are read, and told of at once: whoever reads them
        never sees the new tools beside the old prompts, nor a change before it is told."""
        view = self._view
        async with self._relisting:
            if view is None:
                return
            listed: dict[str, list[Any]] = {}
            for kind, fetch in (
                ("tools", view.list_tools),
                ("prompts", view.list_prompts),
                ("resources", view.list_resources),
                ("templates", view.list_resource_templates),
            ):
                try:
                    listed[kind] = list(await fetch())
                except MCPError:
                    listed[kind] = []
            self._listed.update(listed)
        self._tell(changed)

    def _tell(self, changed: Sequence[str]) -> None:
        if self.on_change is not None:
            for kind in changed:
                self.on_change(kind)

    # -- the aggregate: the server's lists, read through it ----------------------------------------

    def tools(self) -> list[Tool]:
        """Every tool of every connected server, under the host's names (config order)."""
        return list(self._listed.get("tools", ()))

    def prompts(self) -> list[Prompt]:
        return list(self._listed.get("prompts", ()))

    def resources(self) -> list[Resource]:
        return list(self._listed.get("resources", ()))

    def resource_templates(self) -> list[ResourceTemplate]:
        return list(self._listed.get("templates", ()))

    def conflicts(self) -> list[str]:
        """Resources left out because another server (earlier in config order) lists their URI."""
        return [
            f"resource {r.uri!r} of {f.key!r} left out: {holder!r} has it"
            for f in self.forwarders
            for r in f.upstream.resources
            if (holder := f.holder(r.uri)) != f.key
        ]

    def _origin(self, name: str, kind: str = "tool") -> tuple[Forwarder, str] | None:
        """The forwarder and its server's own name a host tool (or prompt) name leads to, by the
        server's routing: transforms undone, a name renamed away leading nowhere."""
        server = self.server
        if kind == "tool":
            transform = server._tool_transforms.get(name)
            if transform is not None and transform.name != name:
                return None  # listed and called under its new name only
            name = server._untransformed(name)
        else:
            if name in self.config.rename:
                return None
            name = {new: old for old, new in self.config.rename.items()}.get(name, name)
        found = server._route(name)
        if found is None or not isinstance(found[0].server, Forwarder):
            return None
        return found[0].server, found[1]

    def decision(self, name: str) -> tuple[str, str]:
        """What the policy says of a call to the host tool *name* (``allow``/``deny``/``ask``), and
        which rule says it; before any call, so a shell or a listing can show it."""
        routed, hints = self.tool_facts(name)
        return self.config.policy.decide(routed.server, routed.name, hints)

    def route(self, name: str) -> Routed:
        """Which server and which of its tools a host tool name stands for.

        Raises:
            InvalidParams: no such tool (-32602, as a server answers an unknown tool).
        """
        return self.tool_facts(name)[0]

    def tool_facts(self, name: str) -> tuple[Routed, dict[str, Any]]:
        """Where the host tool *name* leads, and its annotations (what the policy reads).

        Raises:
            InvalidParams: no such tool; Unavailable: its server is not connected.
        """
        origin = self._origin(name)
        if origin is None:
            raise InvalidParams(f"Unknown tool: {name}")
        forwarder, own = origin
        tool = forwarder.allowed().get(own)
        if tool is None:
            raise forwarder.unknown("tool", own)
        annotations = msgspec.to_builtins(tool.annotations) if tool.annotations is not None else {}
        return Routed(forwarder.key, own), annotations

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
    ) -> CallToolResult:
        """Call a host tool: the policy decides, the rate limits apply, the server answers.

        A refusal (denied, not confirmed, rate limited) is a tool error result saying why, so that
        the model reads it. *ask* overrides the host's consent callback for this call.

        Raises:
            InvalidParams: no tool of that name.
            Unavailable: its server is not connected, or died during the call.
            MCPError: the server answered with a protocol error, or did not answer in time.
        """
        routed, annotations = self.tool_facts(name)
        arguments = arguments or {}
        request = ConsentRequest(routed.server, routed.name, name, arguments, annotations, "")
        upstream = self.upstreams[routed.server]

        async def run() -> CallToolResult:
            return await upstream.call(
                lambda client: client.call_tool(
                    routed.name, arguments, timeout=timeout, on_progress=on_progress
                )
            )

        result = await governed(
            self.config.policy, self.audit, request, caller or self.caller, ask or self.ask, run
        )
        return cast("CallToolResult", result)

    def _reader(self, uri: str) -> Forwarder | None:
        return next((f for f in self.forwarders if f.reads(uri)), None)

    def _through(self) -> Client:
        """The host's own client of its server: reads, prompts and completion are routed by the
        server's catalogue, as the gateway's callers' are."""
        if self._view is None:
            raise MCPError("the host is not started (use 'async with Host(...)')")
        return self._view

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read a resource from the server that lists it (or whose template matches it).

        Raises:
            ResourceNotFound: no server offers *uri*.
        """
        try:
            return await self._through().read_resource(uri)
        except InvalidParams as exc:  # how 2026-07-28 says "resource not found"
            raise ResourceNotFound(str(exc), {"uri": uri}) from None

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> GetPromptResult:
        return await self._through().get_prompt(name, arguments)

    async def complete(
        self, ref: dict[str, str], argument: str, value: str, context: dict[str, str] | None = None
    ) -> Completion:
        """Completion for a host prompt (``ref/prompt`` with the host's name) or resource template."""
        return await self._through().complete(ref, argument, value, context)

    async def subscribe(self, uri: str) -> bool:
        """Subscribe to *uri* on its server (handshake-era servers that offer it); False otherwise.
        A server that reconnects is subscribed again."""
        reader = self._reader(uri)
        if reader is None:
            return False
        await self.subscriptions.add(self, reader.key, [uri])
        return uri in self.subscriptions.subscribed

    async def unsubscribe(self, uri: str) -> bool:
        """Undo :meth:`subscribe` of *uri*; False if there was none (or the server is not connected:
        the subscription went with its connection)."""
        had = uri in self.subscriptions.subscribed
        await self.subscriptions.remove(self, [uri])
        return had and uri not in self.subscriptions.subscribed

    @property
    def subscribed(self) -> dict[str, str]:
        """The URIs subscribed to on the servers (by the host or its server's callers), and where."""
        return self.subscriptions.subscribed
