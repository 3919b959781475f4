"""One upstream server of a :class:`~mcpkit.host.Host`, as a server: the host's building block.

A :class:`Forwarder` answers tools, prompts, resources and completion for one server key of the
host, under that server's own names, from what the server last listed; :func:`install` mounts one
per key on a :class:`~mcpkit.Server` (under the key as namespace, so ``key__tool``, or without one
for a proxy of a single server) with the config's renames. The server's catalogue
(:mod:`mcpkit.server.catalog`) does the rest: the namespacing, the listing across servers, routing
a call by name, transforms, and passing callers' resource subscriptions on. The host lists and
routes through it, the gateway serves it, and a proxy mounts the forwarders of its one server.

A forwarder lists its server's tools as the config's ``allowTools``/``denyTools`` filters leave
them, and a resource URI two servers list only from the first in config order (the second is left
out, as :meth:`~mcpkit.host.Host.conflicts` says), so the catalogue never has two holders of one URI.

The forwarders reach the host through a *link*: any object with a ``host`` attribute (a host, a
gateway, or a proxy, whose host is made anew each time it starts serving), read on every request.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from .. import _naming as naming
from .._compat import shape_call_result, shape_listed, shape_prompt_result, shape_tool
from .._connection import META_SERVER_INFO
from .._errors import HeaderMismatch, InvalidParams, MCPError, RequestTimeout, ResourceNotFound, RPCError
from .._middleware import Call
from .._uritemplate import UriTemplate
from ..lowlevel import LowLevelServer
from ..session import Peer
from ..types import CallToolResult
from .bridge import PARK_PREFIX, CallScope
from .governance import INPUT_ROUND, note_failure
from .pool import Lease
from .upstream import Unavailable, Upstream

if TYPE_CHECKING:
    from .._middleware import CallNext
    from ..client import Client
    from ..context import Context
    from ..server import Server
    from ..types import Resource, Tool
    from .model import HostConfig, ServerConfig

__all__ = ["SESSION_KEY", "Forwarder", "install", "tool_allowed"]


class Link(Protocol):
    """What the forwarders reach the servers through (see the module): a host's parts."""

    @property
    def host(self) -> Any: ...


def tool_allowed(config: ServerConfig, name: str) -> bool:
    """The config's per-server filter: an allow glob (when there are any) and no deny glob."""
    if config.allow_tools and not any(fnmatch.fnmatchcase(name, g) for g in config.allow_tools):
        return False
    return not any(fnmatch.fnmatchcase(name, g) for g in config.deny_tools)


def _dump(value: Any) -> dict[str, Any]:
    """A result of an upstream as ours: its ``serverInfo`` metadata names the upstream, not us."""
    built: dict[str, Any] = msgspec.to_builtins(value)
    return _without_server_info(built)


def _without_server_info(built: dict[str, Any]) -> dict[str, Any]:
    meta = built.get("_meta")
    if isinstance(meta, dict) and META_SERVER_INFO in meta:
        meta = {k: v for k, v in meta.items() if k != META_SERVER_INFO}
        if meta:
            built["_meta"] = meta
        else:
            del built["_meta"]
    return built


_RESULT_FIELDS = frozenset({"content", "structuredContent", "isError", "_meta"})


def _result(raw: Any) -> dict[str, Any]:
    """An upstream's ``tools/call`` result as ours: checked against ``CallToolResult``, with its
    fields only (no ``resultType``: our own server says that) and no ``serverInfo`` of its own."""
    try:
        msgspec.convert(raw, CallToolResult)
    except msgspec.ValidationError as exc:
        raise MCPError(f"the server answered with a malformed result: {exc}") from None
    kept = {k: v for k, v in raw.items() if k in _RESULT_FIELDS and v is not None and v is not False}
    kept.setdefault("content", [])
    return _without_server_info(kept)


def _tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _failed(name: str, exc: MCPError) -> dict[str, Any]:
    """A failed upstream call as the model should read it, the caller's other calls going on: a
    tool error (the governing middleware is told why); the upstream's own error answer is passed on."""
    if isinstance(exc, (Unavailable, RequestTimeout)):
        text = str(exc)
    elif isinstance(exc, RPCError):
        raise exc
    else:
        text = f"{name}: {exc}"
    note_failure(str(exc))
    return _tool_error(text)


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
        self._compiled: dict[str, UriTemplate | None] = {}
        self._filtered: list[Tool] | None = None  # the listing self._allowed was worked out from
        self._allowed: dict[str, Tool] = {}
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

    @property
    def upstream(self) -> Upstream:
        upstream: Upstream = self.link.host.upstreams[self.key]
        return upstream

    # -- what this server lists --------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        upstream = self.upstream
        return [tool for tool in upstream.tools if tool_allowed(upstream.config, tool.name)]

    def allowed(self) -> dict[str, Tool]:
        """This server's tools that the config's filters keep, by name: worked out once per listing
        (the server's list is replaced, never changed in place, when it is read again)."""
        listed = self.upstream.tools
        if listed is not self._filtered:
            self._filtered = listed
            self._allowed = {}
            for tool in reversed(self.tools()):  # the first of two of one name wins, as in a listing
                self._allowed[tool.name] = tool
        return self._allowed

    def holder(self, uri: str) -> str | None:
        """The server (config order) that lists the resource *uri* first, if any does."""
        for key, upstream in self.link.host.upstreams.items():
            if any(resource.uri == uri for resource in upstream.resources):
                return str(key)
        return None

    def resources(self) -> list[Resource]:
        """This server's resources, but those an earlier server (config order) lists too."""
        return [r for r in self.upstream.resources if self.holder(r.uri) == self.key]

    def reads(self, uri: str) -> bool:
        """Whether *uri* is this server's: listed by it first, else one of its templates expands to it."""
        holder = self.holder(uri)
        if holder is not None:
            return holder == self.key
        return any(
            (compiled := self._template(t.uri_template)) is not None and compiled.match(uri) is not None
            for t in self.upstream.templates
        )

    def _template(self, text: str) -> UriTemplate | None:
        if text not in self._compiled:
            try:
                self._compiled[text] = UriTemplate(text)
            except ValueError:
                self._compiled[text] = None  # listed, but reads of it are routed by exact match only
        return self._compiled[text]

    def unknown(self, kind: str, own: str) -> MCPError:
        """Why *own* is not there: this server is down (Unavailable), or it has no such thing."""
        upstream = self.upstream
        if upstream.status.state != "ready":
            return upstream.unavailable()
        shown = naming.exposed_name(self.key, own) if self.link.host.prefixed else own
        return InvalidParams(f"Unknown {kind}: {shown}")

    async def _list_tools(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"tools": [shape_tool(_dump(tool), ctx.scope) for tool in self.tools()]}

    async def _list_resources(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"resources": [shape_listed(_dump(r), ctx.scope) for r in self.resources()]}

    async def _list_templates(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        listed = [shape_listed(_dump(t), ctx.scope) for t in self.upstream.templates]
        return {"resourceTemplates": listed}

    async def _list_prompts(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"prompts": [shape_listed(_dump(p), ctx.scope) for p in self.upstream.prompts]}

    # -- tools -------------------------------------------------------------------------------------

    async def _call_tool(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call requires params.name (a string)")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams("tools/call params.arguments must be an object")
        scope = self.link.host.bridge.resume(ctx) if ctx.answers else None
        if scope is None:
            if name not in self.allowed():
                problem = self.unknown("tool", name)
                if isinstance(problem, Unavailable):  # a server that is down: say so, as a tool error
                    return _tool_error(str(problem))
                raise problem
            scope = CallScope(ctx)
            if not (ctx.scope.stateless and scope.can_be_asked):
                # Nothing can end this round early (only a 2026-07-28 caller is asked in rounds):
                # the upstream call runs in the caller's own task, cancelled with it.
                try:
                    result = _result(await self._upstream_call(scope, name, arguments))
                except MCPError as exc:
                    return _failed(name, exc)
                return shape_call_result(result, ctx.scope)
            self._start_call(scope, name, arguments)
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
            result = _result(call.result())
        except MCPError as exc:
            return _failed(name, exc)
        return shape_call_result(result, ctx.scope)

    def _start_call(self, scope: CallScope, own: str, arguments: dict[str, Any] | None) -> None:
        """Start the upstream call in a task of its own, which a question for a 2026-07-28 caller
        that can be asked does not end: the caller's round ends, and the call waits for the retry."""
        scope.call = asyncio.ensure_future(self._upstream_call(scope, own, arguments))

    async def _upstream_call(self, scope: CallScope, own: str, arguments: dict[str, Any] | None) -> Any:
        """The upstream call for this caller (its raw result); its progress goes to whichever
        round is current."""
        upstream = self.upstream
        client = upstream.client

        async def relay(done: float, total: float | None, message: str | None) -> None:
            await scope.ctx.report_progress(done, total, message)

        # Progress is asked of the upstream only when someone may read it: this round's caller
        # asked for it, or the call may go on into later rounds (whose callers may ask).
        asked = "progressToken" in scope.ctx.meta or (scope.ctx.scope.stateless and scope.can_be_asked)
        progress = relay if asked else None

        async def work(client: Client) -> Any:
            call = {"name": own, "arguments": arguments or {}}
            try:
                return await client.request("tools/call", call, on_progress=progress)
            except HeaderMismatch:
                # A 2026-07-28 server whose tool's headers changed: read its list again, retry once.
                await client.list_tools()
                return await client.request("tools/call", call, on_progress=progress)

        # A handshake-era upstream's questions name no call: a caller that can be asked gets an
        # upstream session of its own (see .bridge and .pool).
        # (No pool, no lease: a server reached through one given Client, which cannot be copied.)
        pooled = (
            client is not None
            and client.protocol_version < "2026"
            and upstream.config.max_sessions > 0
            and scope.can_be_asked
        )
        lease = _lease(scope, scope.ctx) if pooled else None
        return await self.link.host.bridge.relaying(
            scope, self.key, upstream.call(work, lease), lease is None
        )

    # -- resources ---------------------------------------------------------------------------------

    async def _read_resource(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read requires params.uri (a string)")
        if not self.reads(uri):
            raise ResourceNotFound(f"Resource not found: {uri}", {"uri": uri})
        return _dump(await self.upstream.call(lambda client: client.read_resource(uri)))

    async def _subscriptions_changed(
        self, holder: object, uris: Collection[str], wanted: bool, ends: asyncio.Event | None = None
    ) -> None:
        """The server this one is mounted on says *holder* (a caller's session, or a listen stream)
        subscribes to *uris*, or no longer: this server's are subscribed to on it, while any
        holder wants them (:class:`.subscriptions.Subscriptions`); a session's go when *ends* is set."""
        subscriptions = self.link.host.subscriptions
        if not wanted:
            await subscriptions.remove(holder, uris)
            return
        mine = [uri for uri in uris if self.reads(uri)]
        if mine:
            if ends is not None:
                subscriptions.until(holder, ends)  # a caller that goes unsubscribes
            await subscriptions.add(holder, self.key, mine)

    # -- prompts, completion -----------------------------------------------------------------------

    async def _get_prompt(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("prompts/get requires params.name (a string)")
        given = params.get("arguments")
        arguments = given if isinstance(given, dict) else None
        if not any(prompt.name == name for prompt in self.upstream.prompts):
            raise self.unknown("prompt", name)
        result = await self.upstream.call(lambda client: client.get_prompt(name, arguments))
        return shape_prompt_result(_dump(result), ctx.scope)

    async def _complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise InvalidParams("completion/complete requires params.ref and params.argument")
        context = params.get("context")
        chosen = context.get("arguments") if isinstance(context, dict) else None
        name, value = str(argument.get("name", "")), str(argument.get("value", ""))
        if ref.get("type") == "ref/prompt":
            if not any(prompt.name == ref.get("name") for prompt in self.upstream.prompts):
                raise InvalidParams(f"Unknown prompt: {ref.get('name')}")
        else:
            uri = str(ref.get("uri", ""))
            if not (any(t.uri_template == uri for t in self.upstream.templates) or self.reads(uri)):
                raise InvalidParams(f"Unknown resource template: {uri}")
        completion = await self.upstream.call(lambda client: client.complete(ref, name, value, chosen))
        return {"completion": _dump(completion)}


#: The ``_meta`` key under which a caller without a session of its own (a 2026-07-28 HTTP request)
#: names the upstream session it keeps across calls, when no authorization subject names it.
SESSION_KEY = "io.mcpkit/session"


def _lease(scope: CallScope, ctx: Context) -> Lease:
    """The pooled session a call asks for: its connection's (a stdio connection or a handshake-era
    HTTP session, until it ends); else (a 2026-07-28 HTTP request) the one its caller's identity
    keeps, the authorization subject's or the one named by ``_meta`` :data:`SESSION_KEY` (until
    idle too long); else one for the call alone."""
    if isinstance(ctx.peer, Peer) and ctx.connection is not None:
        return Lease(ctx.connection, scope, ends=ctx.peer.closed)
    auth = ctx.auth
    if auth is not None and auth.subject:
        return Lease(("subject", auth.subject), scope)
    named = ctx.meta.get(SESSION_KEY)
    if isinstance(named, str) and 0 < len(named) <= 256:
        return Lease(("key", named), scope)
    return Lease(scope, scope, keep=False)


# -- the server the forwarders are mounted on --------------------------------------------------------


def install(server: Server, link: Link, config: HostConfig, *, prefixed: bool = True) -> list[Forwarder]:
    """Mount a :class:`Forwarder` per server of *config* on *server*, with the config's renames.

    - *prefixed*: each under its key as namespace (``key__tool``); else (one server) names kept;
    - the config's ``rename`` map: a tool by :meth:`~mcpkit.Server.transform_tool`, a prompt by a
      small middleware (transforms are for tools).

    Middleware added to *server* before this runs around the renames (the gateway's governance).
    A caller's resource subscriptions (``resources/subscribe``, or a ``subscriptions/listen``
    stream's) reach the forwarders as they reach any mounted server, and are made on the server
    that has the URI (:meth:`Forwarder._subscriptions_changed`).
    """
    forwarders = [Forwarder(link, key) for key in config.servers]
    for forwarder in forwarders:
        server.mount(forwarder, namespace=forwarder.key if prefixed else None)
    for old, new in config.rename.items():
        with contextlib.suppress(ValueError):  # two renames to one name: the host keeps the first
            server.transform_tool(old, name=new)
    if config.rename:
        server.add_middleware(
            _PromptRenames(config.rename), methods=["prompts/list", "prompts/get", "completion/complete"]
        )
    return forwarders


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
