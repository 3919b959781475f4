"""The gateway: a :class:`~mcpkit.host.Host` served as one MCP server, to callers of every revision.

It is an mcpkit :class:`~mcpkit.Server` whose list, call, read and prompt handlers forward to the
host, so everything a server does for its clients (both eras, every transport, ``list_changed`` to
handshake sessions and 2026-07-28 ``subscriptions/listen`` streams, results shaped per revision)
holds for the aggregate. Policy, consent (put to the calling user with ``ctx.elicit``), rate
limits and audit are ``tools/call`` middleware (:mod:`.governance`); upstream questions are
relayed by :mod:`.bridge`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import msgspec

from .._compat import shape_call_result, shape_listed, shape_prompt_result, shape_tool
from .._connection import META_SERVER_INFO
from .._errors import (
    InvalidParams,
    MCPError,
    RequestTimeout,
    RPCError,
)
from ..context import Context
from ..host import Host, HostConfig, Unavailable
from ..host.governance import INPUT_ROUND
from ..host.pool import Lease
from ..server import Server
from ..session import Peer
from .bridge import PARK_PREFIX, Bridge, CallScope
from .governance import Governance, note_failure
from .subscriptions import Subscribers

__all__ = ["Gateway"]


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


class Gateway:
    """Serves *config*'s servers as one MCP server (``gateway.server``), with a host inside.

    ::

        gateway = Gateway(load_config("mcp.json"))
        async with gateway:                      # connects to the servers
            await gateway.server.serve_stdio()   # or gateway.server.http_app() in any ASGI server
    """

    def __init__(
        self,
        config: HostConfig,
        *,
        name: str = "mcpkit-gateway",
        stderr: Any = None,
        server: Server | None = None,
        **host_options: Any,
    ) -> None:
        """*server*: serve on this server's handler table instead of a new one (a proxy, whose
        server outlives each gateway its lifespan starts); *host_options* go to the :class:`Host`."""
        self.bridge = Bridge(config.roots)
        self.server = (
            server
            if server is not None
            else Server(name, instructions="Tools of several MCP servers, named SERVER__TOOL.")
        )
        self.host = Host(
            config,
            sampling=self.bridge.sampling,
            elicitation=self.bridge.elicitation,
            roots=self.bridge.list_roots,
            on_change=self._changed,
            on_notification=self._notified,
            caller="gateway",
            stderr=stderr,
            **host_options,
        )
        self._background: set[asyncio.Task[None]] = set()
        self.subscribers = Subscribers(self.host)
        for method, handler in (
            ("tools/list", self._list_tools),
            ("tools/call", self._call_tool),
            ("resources/list", self._list_resources),
            ("resources/templates/list", self._list_templates),
            ("resources/read", self._read_resource),
            ("resources/subscribe", self._subscribe),
            ("resources/unsubscribe", self._unsubscribe),
            ("prompts/list", self._list_prompts),
            ("prompts/get", self._get_prompt),
            ("completion/complete", self._complete),
        ):
            self.server.set_handler(method, handler)
        # Policy, consent, rate limits and audit: middleware around the calls (see .governance).
        self.server.add_middleware(Governance(self.host, self.bridge), methods=["tools/call"])
        # A 2026-07-28 caller subscribes to resources on its listen stream: subscribe upstream too,
        # then let the server's own listen handler run the stream.
        self._listen = self.server._listen
        self.server.set_handler("subscriptions/listen", self._listen_and_subscribe)

    async def __aenter__(self) -> Gateway:
        await self.host.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for parked in list(self.bridge.parked.values()):  # callers that will not come back now
            parked.cancel()
        self.bridge.parked.clear()
        await self.server.close_subscriptions()
        self.subscribers.close()
        await self.host.aclose()

    # -- what the servers tell us ------------------------------------------------------------------

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _changed(self, kind: str) -> None:
        with contextlib.suppress(RuntimeError):  # no loop: nobody is listening yet
            self._spawn(self.server.notify_list_changed(kind))

    async def _notified(self, server: str, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            self._spawn(self.server.notify_resource_updated(params["uri"]))
        elif method == "notifications/message":
            scope = self.bridge.log_target(server)
            if scope is not None:  # a log line of a call in flight goes to its caller
                level = str(params.get("level", "info"))
                self._spawn(scope.ctx.log(level, params.get("data"), logger=params.get("logger") or server))

    # -- tools -------------------------------------------------------------------------------------

    async def _list_tools(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"tools": [shape_tool(_dump(tool), ctx.scope) for tool in self.host.tools()]}

    async def _call_tool(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call requires params.name (a string)")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParams("tools/call params.arguments must be an object")
        scope = self.bridge.resume(ctx)
        if scope is None:
            try:
                routed = self.host.route(name)
            except Unavailable as exc:  # a tool of a server that is down: say so, as a tool error
                return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
            scope = self._start_call(name, arguments, routed.server, ctx)
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
            return {"content": [{"type": "text", "text": f"{name}: {exc}"}], "isError": True}
        return shape_call_result(_dump(result), ctx.scope)

    def _start_call(
        self, name: str, arguments: dict[str, Any] | None, server: str, ctx: Context
    ) -> CallScope:
        """Start the host's call for this caller; its progress goes to whichever round is current."""
        upstream = self.host.upstreams[server]
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
        guard = self.bridge.guard(scope) if lease is None else None
        with self.bridge.calling(scope):
            scope.call = asyncio.ensure_future(
                self.host.forward_tool(name, arguments, on_progress=progress, guard=guard, lease=lease)
            )
        return scope

    # -- resources, prompts, completion ------------------------------------------------------------

    async def _list_resources(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"resources": [shape_listed(_dump(r), ctx.scope) for r in self.host.resources()]}

    async def _list_templates(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        templates = self.host.resource_templates()
        return {"resourceTemplates": [shape_listed(_dump(t), ctx.scope) for t in templates]}

    async def _read_resource(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read requires params.uri (a string)")
        return _dump(await self.host.read_resource(uri))

    async def _subscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("params.uri (a string) is required")
        listener = self.server.session_listener(ctx.connection) if ctx.connection is not None else None
        if listener is not None:
            listener.uris.add(uri)
        if ctx.connection is not None:
            self.subscribers.until(ctx.connection, ctx.peer.closed)  # a caller that goes unsubscribes
            await self.subscribers.add(ctx.connection, [uri])
        return {}

    async def _listen_and_subscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        wanted = params.get("notifications")
        listed = wanted.get("resourceSubscriptions") if isinstance(wanted, dict) else None
        uris = [uri for uri in listed if isinstance(uri, str)] if isinstance(listed, list) else []
        stream = object()  # this listen stream, as a subscriber
        await self.subscribers.add(stream, uris)
        try:
            return await self._listen(params, ctx)
        finally:  # the stream ended (or the caller cancelled it, or went away)
            self._spawn(self.subscribers.remove(stream, uris))

    async def _unsubscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = str(params.get("uri"))
        listener = self.server.session_listener(ctx.connection) if ctx.connection is not None else None
        if listener is not None:
            listener.uris.discard(uri)
        if ctx.connection is not None:
            await self.subscribers.remove(ctx.connection, [uri])
        return {}

    async def _list_prompts(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"prompts": [shape_listed(_dump(p), ctx.scope) for p in self.host.prompts()]}

    async def _get_prompt(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("prompts/get requires params.name (a string)")
        arguments = params.get("arguments")
        result = await self.host.get_prompt(name, arguments if isinstance(arguments, dict) else None)
        return shape_prompt_result(_dump(result), ctx.scope)

    async def _complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise InvalidParams("completion/complete requires params.ref and params.argument")
        context = params.get("context")
        chosen = context.get("arguments") if isinstance(context, dict) else None
        completion = await self.host.complete(
            ref, str(argument.get("name", "")), str(argument.get("value", "")), chosen
        )
        return {"completion": _dump(completion)}


def _lease(scope: CallScope, ctx: Context) -> Lease:
    """The pooled session a call asks for: its connection's (a stdio connection or a handshake-era
    HTTP session, until it ends), else (a 2026-07-28 HTTP request) one for the call alone."""
    if isinstance(ctx.peer, Peer) and ctx.connection is not None:
        return Lease(ctx.connection, scope, ends=ctx.peer.closed)
    return Lease(scope, scope, keep=False)
