"""The low-level server: one handler per method, close to the wire.

Register an async function per method; it receives the request's ``params`` (a dict) and a
:class:`~mcpkit.Context`, and returns the result (a dict or a wire struct)::

    server = LowLevelServer("calc")

    @server.list_tools()
    async def list_tools() -> list[Tool]:
        return [Tool(name="add", input_schema={"type": "object", ...})]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[ContentBlock]:
        return [TextContent(text=str(arguments["a"] + arguments["b"]))]

    server.run()  # stdio

Everything that is the same for every server lives here, written once for both eras: the
``initialize`` handshake and ``server/discover``, ``ping`` and ``logging/setLevel``, which methods
exist in which revision, ``resultType`` and ``serverInfo`` on 2026-07-28 results, and the mapping of
handler exceptions to JSON-RPC errors.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import msgspec

from . import _jsonrpc as jsonrpc
from ._changes import Announcing
from ._connection import META_SERVER_INFO, Scope, ServerConnection
from ._entry import Entrypoints, run_async
from ._errors import InternalError, InvalidParams, MethodNotFound, ResourceNotFound
from ._methods import CACHEABLE_METHODS, METHOD_FEATURES, METHODS, MRTR_METHODS
from ._middleware import Call, MiddlewareAPI, MiddlewareStack
from ._mrtr import InputRequired, StateSealer, merge_answers
from ._transport import Transport
from ._versions import SUPPORTED_VERSIONS, has
from .context import LOG_LEVELS, Context
from .kernel import Outbound, ServerSession
from .lifespan import LifespanFn, Running
from .listeners import Listener
from .session import Peer, ready
from .types import CallToolResult, Icon, Implementation, Tool

if TYPE_CHECKING:
    from .fleet import SharedState
    from .telemetry import Telemetry

__all__ = ["Handler", "Listener", "LowLevelServer", "run_async"]

logger = logging.getLogger("mcpkit.server")

Handler = Callable[[dict[str, Any], Context], Awaitable[Any]]
H = TypeVar("H", bound=Handler)
F = TypeVar("F", bound=Callable[..., Any])

_DEFAULT_DRAIN_SECONDS: Final = 5.0
_to_builtins: Final = msgspec.to_builtins
#: The methods the server answers itself, and the handler that answers each one when middleware
#: runs around it.
_BUILTIN: Final = {
    "ping": "_ping",
    "server/discover": "_discover_handler",
    "logging/setLevel": "_set_level_handler",
}


class LowLevelServer(Announcing, MiddlewareAPI, Entrypoints):
    """An MCP server built from one handler per method.

    Args:
        name: the server's name in ``serverInfo``.
        version: its version in ``serverInfo``.
        title: a display name (2025-06-18 and later).
        instructions: guidance for the model on how to use this server.
        icons: icons for the implementation (2025-11-25 and later).
        website_url: a link for people (2025-11-25 and later).
        cache_ttl_ms: the ``ttlMs`` caching hint on cacheable 2026-07-28 results that do not set one
            (0: "immediately stale", the safe default for lists that can change).
        state_key: the HMAC key sealing ``requestState`` in multi round-trip requests; servers
            behind a load balancer must share one (default: random per process).
        cache_scope: the ``cacheScope`` hint likewise: ``"private"`` (only within one authorization
            context) unless you know the results are the same for every user.
        max_in_flight: requests one connection or session may have handled at once (stdio,
            HTTP+SSE, a handshake-era HTTP session); more are answered -32000 at once. ``None``: no
            limit. Answers to the server's own requests never count.
        telemetry: record OpenTelemetry spans and duration metrics for every request handled
            (``True``, or a :class:`~mcpkit.telemetry.Telemetry` with providers of your
            own); see :mod:`mcpkit.telemetry`. Off by default, and then never imported.
        lifespan: ``fn(server)`` returning an async context manager, entered once before the first
            request is handled and exited when the server stops serving; what it yields is
            ``ctx.lifespan`` in every handler (see :mod:`mcpkit.lifespan`).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        icons: list[Icon] | None = None,
        website_url: str | None = None,
        cache_ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "private",
        state_key: bytes | None = None,
        max_in_flight: int | None = 256,
        telemetry: bool | Telemetry = False,
        lifespan: LifespanFn | None = None,
    ) -> None:
        self.info = Implementation(
            name=name,
            version=version,
            title=title,
            icons=icons,
            website_url=website_url,
        )
        self.instructions = instructions
        self.state_sealer = StateSealer(state_key)
        self._own_state_key = state_key is not None
        #: The state shared with the other processes of a fleet, once joined (see :meth:`join_fleet`).
        self.shared: SharedState | None = None
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.max_in_flight = max_in_flight
        self.telemetry: Telemetry | None = None
        if telemetry is True:
            from .telemetry import Telemetry

            self.telemetry = Telemetry("server")
        elif telemetry is not False:
            self.telemetry = telemetry
        self._handlers: dict[str, Handler] = {}
        self._notification_handlers: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {}
        #: Extra capabilities merged into what the handlers imply (e.g. ``{"tools": {"listChanged": True}}``).
        self.extra_capabilities: dict[str, Any] = {}
        self._info_cache: dict[str, dict[str, Any]] = {}
        self.listeners: set[Listener] = set()
        #: The event loop serving this server (set by :meth:`serve`), for work from other threads.
        self.loop: asyncio.AbstractEventLoop | None = None
        self._session_listeners: dict[ServerConnection, Listener] = {}
        self._middleware: MiddlewareStack | None = None  # none until one is added: nothing to pay
        #: Whether the server is serving, and what its lifespan yielded (see :mod:`mcpkit.lifespan`).
        self.running = Running(lifespan, self)

    # -- registration ------------------------------------------------------------------------------

    def handler(self, method: str) -> Callable[[H], H]:
        """Register ``async def handler(params: dict, ctx: Context) -> result`` for *method*."""

        def register(fn: H) -> H:
            self.set_handler(method, fn)
            return fn

        return register

    def set_handler(self, method: str, fn: Handler) -> None:
        """Register (or replace) the handler of *method*."""
        self._handlers[method] = fn

    def notification_handler(self, method: str) -> Callable[[F], F]:
        """Register ``async def handler(params: dict) -> None`` for notifications named *method*."""

        def register(fn: F) -> F:
            self._notification_handlers[method] = fn
            return fn

        return register

    def list_tools(self) -> Callable[[F], F]:
        """Decorate ``async def () -> list[Tool]`` to answer ``tools/list``."""

        def register(fn: F) -> F:
            async def handle(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
                tools = await fn()
                return {"tools": [_to_builtins(t) if isinstance(t, Tool) else t for t in tools]}

            self.set_handler("tools/list", handle)
            return fn

        return register

    def call_tool(self) -> Callable[[F], F]:
        """Decorate ``async def (name, arguments) -> list[ContentBlock] | CallToolResult | dict``."""

        def register(fn: F) -> F:
            async def handle(params: dict[str, Any], ctx: Context) -> Any:
                name = params.get("name")
                if not isinstance(name, str):
                    raise InvalidParams("tools/call requires params.name (a string)")
                arguments = params.get("arguments") or {}
                result = await fn(name, arguments)
                if isinstance(result, list):
                    return CallToolResult(content=result)
                return result

            self.set_handler("tools/call", handle)
            return fn

        return register

    def mirrored_parameters(self, tool: str) -> dict[str, tuple[str, ...]]:
        """``{header: argument path}`` of a tool's ``x-mcp-header`` parameters (HTTP checks them)."""
        return {}

    # -- what the server offers --------------------------------------------------------------------

    def capabilities(self, scope: Scope) -> dict[str, Any]:
        """The server capabilities, as the revision of *scope* spells them."""
        caps: dict[str, Any] = {}
        for method in self._handlers:
            capability = METHODS[method].capability if method in METHODS else None
            # completion/complete exists from 2024-11-05, its capability only from 2025-03-26.
            if capability is not None and (
                capability != "completions" or scope.has("completions_capability")
            ):
                caps.setdefault(capability, {})
        caps["logging"] = {}
        for key, value in self.extra_capabilities.items():
            if key in caps and isinstance(value, dict):
                caps[key] = {**caps[key], **value}
            elif key not in caps and (key != "completions" or scope.has("completions_capability")):
                caps[key] = value
        return caps

    def _info(self, version: str) -> dict[str, Any]:
        # serverInfo as the revision knows it: titles and icons are later additions.
        cached = self._info_cache.get(version)
        if cached is None:
            cached = _to_builtins(self.info)
            if not has(version, "titles"):
                cached.pop("title", None)
            if not has(version, "icons"):
                for key in ("icons", "websiteUrl", "description"):
                    cached.pop(key, None)
            self._info_cache[version] = cached
        return cached

    # -- serving -----------------------------------------------------------------------------------

    async def serve(self, transport: Transport, *, drain_seconds: float = _DEFAULT_DRAIN_SECONDS) -> None:
        """Serve one connection until the peer closes it (the lifespan entered around it)."""
        try:
            await self.running.enter()
        except BaseException:
            await transport.aclose()
            raise
        try:
            session = self.connect(transport)
            try:
                await session.peer.run()
                await session.peer.drain(drain_seconds)
            finally:
                self.disconnect(session)
                await transport.aclose()
        finally:
            await self.running.exit()

    async def start_serving(self) -> None:
        """Serving begins (an HTTP app's start): enter the lifespan. Raises ``StartupError``."""
        await self.running.enter()

    async def stop_serving(self) -> None:
        """Serving ends (an HTTP app's shutdown): exit the lifespan."""
        await self.running.exit()

    def connect(self, transport: Transport) -> ServerSession:
        """Start a conversation over *transport* (see :class:`mcpkit.kernel.Endpoint`): drive its
        peer with :meth:`Peer.run <mcpkit.session.Peer.run>` or :meth:`Peer.deliver
        <mcpkit.session.Peer.deliver>`, then call :meth:`disconnect`."""
        conn = ServerConnection()
        peer: Peer

        def on_request(request: jsonrpc.Request) -> Awaitable[Any]:
            # Called in arrival order: the lifecycle sees messages in the order they came.
            scope = conn.admit(request)
            if request.method == "initialize":
                # Answered here, before the next message is read: whatever follows initialize on
                # the wire must already see the negotiated session.
                if self.telemetry is None:
                    return ready(self._open_session(conn, scope, peer))
                params = request.params if isinstance(request.params, dict) else {}
                with self.telemetry.request("initialize", params, request.id, scope.version, conn.session_id):
                    return ready(self._open_session(conn, scope, peer))
            return self.start(request, scope, peer, conn)

        async def on_notification(notification: jsonrpc.Notification) -> None:
            conn.notification_received(notification)
            handler = self._notification_handlers.get(notification.method)
            if handler is not None:
                await handler(notification.params if isinstance(notification.params, dict) else {})

        peer = Peer(
            transport,
            on_request=on_request,
            on_notification=on_notification,
            decode=conn.receive,
            max_in_flight=self.max_in_flight,
        )
        return ServerSession(peer, conn)

    def disconnect(self, session: ServerSession) -> None:
        """Forget *session*: its listener, every listen stream on its peer; fail what waits on it."""
        listener = self._session_listeners.pop(session.connection, None)
        if listener is not None:
            self.listeners.discard(listener)
        for other in [item for item in self.listeners if item.peer is session.peer]:
            self.listeners.discard(other)
        session.peer.close()

    def add_listener(self, listener: Listener) -> None:
        """Tell *listener* about changes from now on (until :meth:`remove_listener`)."""
        # Listeners are added on the serving loop: remember it, so that changes made in worker
        # threads (sync tools) can be announced there.
        self.loop = asyncio.get_running_loop()
        self.listeners.add(listener)

    def remove_listener(self, listener: Listener) -> None:
        self.listeners.discard(listener)

    def _open_session(self, conn: ServerConnection, scope: Scope, peer: Peer) -> dict[str, Any]:
        # Answer initialize on conn and start telling its session about changes.
        result = self._initialize(conn, scope)
        conn.changing = frozenset(self.list_changed_kinds)
        listener = Listener(peer, kinds=set(self.list_changed_kinds))
        self._session_listeners[conn] = listener
        self.add_listener(listener)
        return result

    def _initialize(self, conn: ServerConnection, scope: Scope) -> dict[str, Any]:
        try:
            result: dict[str, Any] = {
                "protocolVersion": scope.version,
                "capabilities": self.capabilities(scope),
                "serverInfo": self._info(scope.version),
            }
            if self.instructions is not None:
                result["instructions"] = self.instructions
        except BaseException:
            conn.initialize_answered(ok=False)
            raise
        conn.initialize_answered(ok=True)
        return result

    def start(
        self, request: jsonrpc.Request, scope: Scope, outbound: Outbound, conn: ServerConnection
    ) -> Awaitable[Any]:
        """Start an admitted request by the shortest way there is: what awaiting it gives is what
        :meth:`handle` would return (or raise). Every transport starts requests here."""
        # An overridden handle() sees every request; ours adds only telemetry to _handle(): without
        # either, one coroutine fewer per request, and start_now's shorter ways where it has one.
        if type(self).handle is LowLevelServer.handle:
            started = self.start_now(request, scope, outbound, conn)
            if started is not None:
                return started
            if self.telemetry is None:
                return self._handle(request, scope, outbound, conn)
        return self.handle(request, scope, outbound, conn)

    def start_now(
        self, request: jsonrpc.Request, scope: Scope, outbound: Outbound, conn: ServerConnection
    ) -> Awaitable[Any] | None:
        """Start an admitted request by a shorter way than :meth:`handle`, if this one has one (the
        friendly server's plainest tool calls): a future that carries the result with no coroutine
        of its own (``def`` tools), or one coroutine; ``None``: :meth:`handle` it. Its result is
        what :meth:`handle` would return, or its exception what it would raise; cancelling it
        cancels the request."""
        return None

    async def handle(
        self, request: jsonrpc.Request, scope: Scope, outbound: Outbound, conn: ServerConnection
    ) -> Any:
        """Run one admitted request to its result: the one dispatch every transport reaches, through
        a :class:`~mcpkit.session.Peer` or (2026-07-28 over HTTP) directly. Raises ``RPCError``."""
        if self.telemetry is not None:
            params = request.params if isinstance(request.params, dict) else {}
            with self.telemetry.request(request.method, params, request.id, scope.version, conn.session_id):
                return await self._handle(request, scope, outbound, conn)
        return await self._handle(request, scope, outbound, conn)

    async def _handle(
        self, request: jsonrpc.Request, scope: Scope, outbound: Outbound, conn: ServerConnection
    ) -> Any:
        method = request.method
        params = request.params if isinstance(request.params, dict) else {}
        feature = METHOD_FEATURES.get(method)  # feature_of(method), without the call
        if feature is not None and not scope.has(feature):
            raise MethodNotFound(
                f"Method not found: {method} (not part of protocol revision {scope.version})"
            )
        layers = self._middleware.layers_for(method) if self._middleware is not None else None
        if not layers and method in _BUILTIN:  # answered here, with no handler and no Context
            if method == "ping":
                return {}
            result: Any = (
                self._discover(scope) if method == "server/discover" else self._set_level(conn, params)
            )
        else:
            builtin = _BUILTIN.get(method)  # middleware sees the server's own answers as handlers
            handler = getattr(self, builtin) if builtin is not None else self._handlers.get(method)
            if handler is None:
                raise MethodNotFound(f"Method not found: {method}")
            meta = params.get("_meta")
            ctx = Context(outbound, request.id, method, scope, meta if isinstance(meta, dict) else {}, conn)
            ctx.lifespan = self.running.value
            multi_round = scope.stateless and method in MRTR_METHODS
            if multi_round:
                ctx.answers = merge_answers(self.state_sealer, method, params)
            try:
                if layers:
                    assert self._middleware is not None
                    result = await self._middleware.run(layers, Call(method, params, ctx), handler)
                else:
                    result = await handler(params, ctx)
            except InputRequired as need:
                if not multi_round:
                    raise InternalError(f"{method} cannot ask the client for input") from None
                result = self._input_required(method, params, ctx.answers, need)
            except ResourceNotFound as exc:
                if scope.stateless:  # 2026-07-28 names a missing resource -32602
                    raise InvalidParams(exc.message, exc.data) from None
                raise
            if method == "ping":
                return result
        if not isinstance(result, dict):
            result = _to_builtins(result)
        if scope.stateless:
            self._complete_stateless(method, result, scope)
        return result

    async def _ping(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {}

    async def _discover_handler(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return self._discover(ctx.scope)

    async def _set_level_handler(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        assert ctx.connection is not None
        return self._set_level(ctx.connection, params)

    def _input_required(
        self, method: str, params: dict[str, Any], answers: dict[str, Any], need: InputRequired
    ) -> dict[str, Any]:
        """The 2026-07-28 result asking the client for *need*'s input before it sends *params* again."""
        # Everything answered so far travels in the sealed state; the new question with it.
        return {
            "resultType": "input_required",
            "inputRequests": need.requests,
            "requestState": self.state_sealer.seal(method, params, answers, list(need.requests)),
        }

    def _complete_stateless(self, method: str, result: dict[str, Any], scope: Scope) -> None:
        """Add to a 2026-07-28 *result* what that revision's results carry: ``resultType``, the
        cache hints of a cacheable one, and ``serverInfo`` in its ``_meta``."""
        if result.setdefault("resultType", "complete") == "complete" and method in CACHEABLE_METHODS:
            result.setdefault("ttlMs", self.cache_ttl_ms)
            result.setdefault("cacheScope", self.cache_scope)
        result_meta = result.get("_meta")
        if isinstance(result_meta, dict):
            result_meta.setdefault(META_SERVER_INFO, self._info(scope.version))
        else:  # the usual: a result with no _meta of its own
            result["_meta"] = {META_SERVER_INFO: self._info(scope.version)}

    def _discover(self, scope: Scope) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self.capabilities(scope),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _set_level(self, conn: ServerConnection, params: dict[str, Any]) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise InvalidParams(f"invalid log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
        conn.set_log_level(level)
        return {}
