"""One upstream server of a :class:`~mcpkit.host.Host`, as a server: the gateway's building block.

A :class:`Forwarder` answers tools, prompts, resources and completion for one server key of the
host, under that server's own names; :func:`install` mounts one per key on a
:class:`~mcpkit.Server` (under the key as namespace, so ``key__tool`` as the host names it, or
without one for a proxy of a single server) and adds what a gateway adds on top: renames, the
governance middleware, and resource subscriptions passed on to the servers.

What a forwarder lists is exactly the host's table for its key (:mod:`mcpkit.host.aggregate`): the
config's ``allowTools``/``denyTools`` filters have applied, and a resource URI two servers list is
listed by the first one only (in config order, as :meth:`~mcpkit.host.Host.conflicts` says), so the
mounted catalogue never has two holders of one URI to tell apart.

The forwarders reach the host through a *link*: any object with ``host``, ``bridge`` and
``subscribers`` attributes (a :class:`._relay.Relay` such as the :class:`~mcpkit.gateway.Gateway`,
or a proxy, whose relay is made anew each time it starts serving), read on every request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from .. import _naming as naming
from .._compat import shape_call_result, shape_listed, shape_prompt_result, shape_tool
from .._connection import META_SERVER_INFO
from .._errors import InvalidParams, MCPError, RequestTimeout, ResourceNotFound, RPCError
from .._middleware import Call
from ..host import Host, Unavailable
from ..host.governance import INPUT_ROUND
from ..host.pool import Lease
from ..lowlevel import LowLevelServer
from ..session import Peer
from .bridge import PARK_PREFIX, Bridge, CallScope
from .governance import Governance, note_failure

if TYPE_CHECKING:
    from .._middleware import CallNext
    from ..context import Context
    from ..host.model import HostConfig
    from ..server import Server
    from .subscriptions import Subscribers

__all__ = ["Forwarder", "Link", "install"]


class Link(Protocol):
    """What the forwarders reach the servers through (see the module)."""

    @property
    def host(self) -> Host: ...
    @property
    def bridge(self) -> Bridge: ...
    @property
    def subscribers(self) -> Subscribers: ...


def _dump(value: Any) -> dict[str, Any]:
    """A result of an upstream as ours: its ``serverInfo`` metadata names the upstream, not us."""
    built: dict[str, Any] = msgspec.to_builtins(value)
    meta = built.get("_meta")
    if isinstance(meta, dict) and META_SERVER_INFO in meta:
        meta = {k: v for k, v in meta.items() if k != META_SERVER_INFO}
        if meta:
            built["_meta"] = meta
        else:
            del built["_meta"]
    return built


class Forwarder(LowLevelServer):
    """The host's server *key* as a server: its tools and prompts under their own names.

    A gateway mounts one per server under its key; a proxy of one server mounts its one without:

    >>> from mcpkit import Server
    >>> from mcpkit.compose.proxy import proxy
    >>> mirror = proxy(Server("notes"))  # not serving yet: nothing is connected
    >>> [(mount.namespace, mount.server.key) for mount in mirror._mounts]
    [(None, 'notes')]
    """

    def __init__(self, link: Link, key: str) -> None:
        super().__init__(key, max_in_flight=None)
        self.link = link
        self.key = key
        # Own name -> the host's name, for tools and prompts; rebuilt when the host's tables are.
        self._index: tuple[object, dict[str, str], dict[str, str]] | None = None
        for method, handler in (
            ("tools/list", self._list_tools),
            ("tools/call", self._call_tool),
            ("resources/list", self._list_resources),
            ("resources/templates/list", self._list_templates),
            ("resources/read", self._read_resource),
            ("prompts/list", self._list_prompts),
            ("prompts/get", self._get_prompt),
            ("completion/complete", self._complete),
        ):
            self.set_handler(method, handler)

    def _names(self) -> tuple[dict[str, str], dict[str, str]]:
        """This server's tools and prompts: own name -> the host's name (renames applied)."""
        tables = self.link.host.tables
        if self._index is None or self._index[0] is not tables:
            key = self.key
            tools = {
                routed.name: exposed for exposed, (routed, _) in tables.tools.items() if routed.server == key
            }
            prompts = {
                routed.name: exposed
                for exposed, (routed, _) in tables.prompts.items()
                if routed.server == key
            }
            self._index = (tables, tools, prompts)
        return self._index[1], self._index[2]

    def _unknown(self, kind: str, own: str) -> MCPError:
        host = self.link.host
        upstream = host.upstreams[self.key]
        if upstream.status.state != "ready":
            return upstream.unavailable()
        return InvalidParams(
            f"Unknown {kind}: {naming.exposed_name(self.key, own) if host.prefixed else own}"
        )

    # -- tools -------------------------------------------------------------------------------------

    async def _list_tools(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        key, tables = self.key, self.link.host.tables
        return {
            "tools": [
                shape_tool({**_dump(tool), "name": routed.name}, ctx.scope)
                for routed, tool in tables.tools.values()
                if routed.server == key
            ]
        }

    async def _call_tool(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call requires params.name (a string)")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams("tools/call params.arguments must be an object")
        bridge = self.link.bridge
        scope = bridge.resume(ctx)
        exposed = self._names()[0].get(name)
        if scope is None:
            if exposed is None:
                problem = self._unknown("tool", name)
                if isinstance(problem, Unavailable):  # a server that is down: say so, as a tool error
                    return {"content": [{"type": "text", "text": str(problem)}], "isError": True}
                raise problem
            scope = self._start_call(exposed, arguments, ctx)
        call = scope.call
        assert call is not None
        try:
            waits: set[asyncio.Future[Any]] = {call, scope.needs}
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the caller cancelled: so does the upstream call
            call.cancel()
            raise
        if scope.needs.done():
            need = scope.needs.result()
            if not any(key.startswith(PARK_PREFIX) for key in need.requests):
                # Asked in a way that cannot wait for the retry: end the call, replay it then.
                call.cancel(INPUT_ROUND)
                with contextlib.suppress(BaseException):
                    await call
            raise need  # the call, parked, waits for the retry that answers (see .bridge)
        try:
            result = call.result()
        except (Unavailable, RequestTimeout) as exc:
            # The model should read why, and the caller's other calls go on: a tool error.
            note_failure(str(exc))
            return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
        except MCPError as exc:
            if isinstance(exc, RPCError):
                raise  # the upstream's own answer, code and all
            note_failure(str(exc))
            return {"content": [{"type": "text", "text": f"{exposed or name}: {exc}"}], "isError": True}
        return shape_call_result(_dump(result), ctx.scope)

    def _start_call(self, exposed: str, arguments: dict[str, Any] | None, ctx: Context) -> CallScope:
        """Start the host's call for this caller; its progress goes to whichever round is current."""
        host, bridge = self.link.host, self.link.bridge
        upstream = host.upstreams[self.key]
        client = upstream.client
        handshake_upstream = client is not None and client.protocol_version < "2026"
        scope = CallScope(ctx)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            await scope.ctx.report_progress(done, total, message)

        # A handshake-era upstream's questions name no call: a caller that can be asked gets an
        # upstream session of its own (see .bridge and mcpkit.host.pool).
        # (No pool, no lease: a server reached through one given Client, which cannot be copied.)
        pooled = handshake_upstream and scope.can_be_asked and upstream.config.max_sessions > 0
        lease = _lease(scope, ctx) if pooled else None
        guard = bridge.guard(scope) if lease is None else None
        with bridge.calling(scope):
            scope.call = asyncio.ensure_future(
                host.forward_tool(exposed, arguments, on_progress=progress, guard=guard, lease=lease)
            )
        return scope

    # -- resources ---------------------------------------------------------------------------------

    async def _list_resources(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        key, tables = self.key, self.link.host.tables
        listed = [
            shape_listed(_dump(r), ctx.scope) for server, r in tables.resources.values() if server == key
        ]
        return {"resources": listed}

    async def _list_templates(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        key, tables = self.key, self.link.host.tables
        listed = [shape_listed(_dump(t), ctx.scope) for server, t, _ in tables.templates if server == key]
        return {"resourceTemplates": listed}

    async def _read_resource(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read requires params.uri (a string)")
        if not self._reads(uri):
            raise ResourceNotFound(f"Resource not found: {uri}", {"uri": uri})
        upstream = self.link.host.upstreams[self.key]
        return _dump(await upstream.call(lambda client: client.read_resource(uri)))

    def _reads(self, uri: str) -> bool:
        """Whether *uri* is this server's: listed by it (first in config order), else one of its
        templates expands to it."""
        tables = self.link.host.tables
        listed = tables.resources.get(uri)
        if listed is not None:
            return listed[0] == self.key
        return any(
            server == self.key and compiled is not None and compiled.match(uri) is not None
            for server, _, compiled in tables.templates
        )

    async def _subscriptions_changed(
        self, holder: object, uris: Collection[str], wanted: bool, ends: asyncio.Event | None = None
    ) -> None:
        """The server this one is mounted on says *holder* (a caller's session, or a listen stream)
        subscribes to *uris*, or no longer: this server's are subscribed to on it, while any
        holder wants them (:mod:`.subscriptions`); a session's go when *ends* is set."""
        subscribers = self.link.subscribers
        if not wanted:
            await subscribers.remove(holder, uris)
            return
        mine = [uri for uri in uris if self._reads(uri)]
        if mine:
            if ends is not None:
                subscribers.until(holder, ends)  # a caller that goes unsubscribes
            await subscribers.add(holder, mine)

    # -- prompts, completion -----------------------------------------------------------------------

    async def _list_prompts(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        key, tables = self.key, self.link.host.tables
        return {
            "prompts": [
                shape_listed({**_dump(prompt), "name": routed.name}, ctx.scope)
                for routed, prompt in tables.prompts.values()
                if routed.server == key
            ]
        }

    async def _get_prompt(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("prompts/get requires params.name (a string)")
        exposed = self._names()[1].get(name)
        if exposed is None:
            raise self._unknown("prompt", name)
        arguments = params.get("arguments")
        result = await self.link.host.get_prompt(exposed, arguments if isinstance(arguments, dict) else None)
        return shape_prompt_result(_dump(result), ctx.scope)

    async def _complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise InvalidParams("completion/complete requires params.ref and params.argument")
        context = params.get("context")
        chosen = context.get("arguments") if isinstance(context, dict) else None
        if ref.get("type") == "ref/prompt":
            exposed = self._names()[1].get(str(ref.get("name")))
            if exposed is None:
                raise InvalidParams(f"Unknown prompt: {ref.get('name')}")
            ref = {**ref, "name": exposed}
        else:
            uri = str(ref.get("uri", ""))
            tables = self.link.host.tables
            if not (
                any(server == self.key and t.uri_template == uri for server, t, _ in tables.templates)
                or self._reads(uri)
            ):
                raise InvalidParams(f"Unknown resource template: {uri}")  # another server's, perhaps
            return {"completion": _dump(await self._complete_here(ref, argument, chosen))}
        completion = await self.link.host.complete(
            ref, str(argument.get("name", "")), str(argument.get("value", "")), chosen
        )
        return {"completion": _dump(completion)}

    async def _complete_here(self, ref: dict[str, Any], argument: dict[str, Any], chosen: Any) -> Any:
        upstream = self.link.host.upstreams[self.key]
        name, value = str(argument.get("name", "")), str(argument.get("value", ""))
        return await upstream.call(lambda client: client.complete(ref, name, value, chosen))


def _lease(scope: CallScope, ctx: Context) -> Lease:
    """The pooled session a call asks for: its connection's (a stdio connection or a handshake-era
    HTTP session, until it ends), else (a 2026-07-28 HTTP request) one for the call alone."""
    if isinstance(ctx.peer, Peer) and ctx.connection is not None:
        return Lease(ctx.connection, scope, ends=ctx.peer.closed)
    return Lease(scope, scope, keep=False)


# -- the server the forwarders are mounted on --------------------------------------------------------


def install(server: Server, link: Link, config: HostConfig, *, prefixed: bool = True) -> list[Forwarder]:
    """Mount a :class:`Forwarder` per server of *config* on *server*, and add the gateway's parts.

    - *prefixed*: each under its key as namespace (``key__tool``); else (one server) names kept;
    - the config's ``rename`` map: a tool by :meth:`~mcpkit.Server.transform_tool`, a prompt by a
      small middleware (transforms are for tools);
    - policy, consent, rate limits and audit: :class:`~.governance.Governance`, outermost.

    A caller's resource subscriptions (``resources/subscribe``, or a ``subscriptions/listen``
    stream's) reach the forwarders as they reach any mounted server, and are made on the server
    that has the URI (:meth:`Forwarder._subscriptions_changed`).
    """
    forwarders = [Forwarder(link, key) for key in config.servers]
    for forwarder in forwarders:
        server.mount(forwarder, namespace=forwarder.key if prefixed else None)
    # Policy, consent, rate limits and audit: middleware around the calls, outermost (.governance).
    server.add_middleware(Governance(link, _resolver(server)), methods=["tools/call"])
    for old, new in config.rename.items():
        with contextlib.suppress(ValueError):  # two renames to one name: the host keeps the first
            server.transform_tool(old, name=new)
    if config.rename:
        server.add_middleware(
            _PromptRenames(config.rename), methods=["prompts/list", "prompts/get", "completion/complete"]
        )
    return forwarders


def _resolver(server: Server) -> Callable[[str, Context], str | None]:
    """The host's name for a tool called on *server* (see :class:`~.governance.Governance`)."""

    def resolve(name: str, ctx: Context) -> str | None:
        if not server._composed:
            return name
        if server._is_hidden("tools", name, ctx):
            return None  # refused as unknown by the server: not a call to govern
        transform = server._tool_transforms.get(name)
        if transform is not None and transform.name != name:
            return None  # listed and called under its new name only
        return server._untransformed(name)

    return resolve


class _PromptRenames:
    """The config's ``rename`` for prompts: listed and asked for under the new name only."""

    def __init__(self, rename: dict[str, str]) -> None:
        self.rename = rename
        self.back = {new: old for old, new in rename.items()}

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        method, params = call.method, call.params
        if method == "prompts/get":
            name = params.get("name")
            if isinstance(name, str) and (name in self.back or name in self.rename):
                if name in self.rename:  # renamed away: the host knows it no more
                    raise InvalidParams(f"Unknown prompt: {name}")
                call = Call(method, {**params, "name": self.back[name]}, call.context)
            return await call_next(call)
        if method == "completion/complete":
            ref = params.get("ref")
            if isinstance(ref, dict) and ref.get("type") == "ref/prompt" and ref.get("name") in self.back:
                call = Call(method, {**params, "ref": {**ref, "name": self.back[ref["name"]]}}, call.context)
            return await call_next(call)
        result = await call_next(call)
        prompts = result.get("prompts") if isinstance(result, dict) else None
        if isinstance(prompts, list):
            renamed = [
                {**p, "name": self.rename[p["name"]]}
                if isinstance(p, dict) and p.get("name") in self.rename
                else p
                for p in prompts
            ]
            return {**result, "prompts": renamed}
        return result
