"""Middleware: functions run around a server's requests, outermost first.

::

    @server.middleware
    async def timing(call: Call, call_next: CallNext) -> Any:
        started = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            print(call.method, time.perf_counter() - started)

    @server.middleware("tools/call")
    async def no_deletes(call: Call, call_next: CallNext) -> Any:
        if call.params.get("name", "").startswith("delete"):
            raise ToolError("deleting is switched off")  # the tool does not run
        return await call_next(call)

A middleware gets the :class:`Call` (``method``, ``params``, ``context``) and ``call_next``, which
runs the rest of the chain and then the method, and returns its result: for ``tools/call`` a
:class:`~mcpkit.CallToolResult` (the middleware may return another, e.g. one made with
``msgspec.structs.replace``), for other methods the result as a dict. Raising
:class:`~mcpkit.ToolError` in a ``tools/call`` middleware answers the call with a tool error
(``isError``) and the tool does not run (the middleware around it get that result from
``call_next``, as they would a tool's own error); raising any other ``MCPError`` answers that error.

Both eras look the same from here: a handshake-era request and a 2026-07-28 one carry the same
``params`` (``_meta`` included), and each round of a multi round-trip request (2026-07-28
``input_required``) is a request of its own that the chain sees whole; a tool asking for input
raises through the chain (let it pass). A call the client starts as a task returns the task's
creation result (a dict) to the chain, not the tool's eventual result. The ``initialize``
handshake itself passes no middleware.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, overload

import msgspec

from ._compat import shape_call_result
from ._errors import MethodNotFound, ToolError
from .types import CallToolResult, TextContent

if TYPE_CHECKING:
    from .context import Context

__all__ = ["ENDPOINT", "Call", "CallNext", "Middleware", "MiddlewareAPI", "MiddlewareStack"]

CallNext = Callable[["Call"], Awaitable[Any]]
Middleware = Callable[["Call", CallNext], Awaitable[Any]]

_convert: Final = msgspec.convert
_to_builtins: Final = msgspec.to_builtins


class Call(msgspec.Struct, eq=False, repr_omit_defaults=True):
    """One request on its way through the middleware: what was asked, and its context.

    ``Call(method, params, context)``. ``params`` is the request's params (a dict; ``{}`` when it
    had none); a middleware may pass on a changed copy:
    ``await call_next(Call(call.method, {...}, call.context))``. (A struct, not a class with an
    ``__init__``: one is made per request, and a struct is made in C.)
    """

    method: str
    params: dict[str, Any]
    _context: Context | None = None
    _make: Callable[[], Context] | None = None  # makes the context when first asked for

    @property
    def context(self) -> Context:
        """The request's :class:`~mcpkit.Context` (made when first asked for, on a call's
        shortest way: a middleware that never reads it does not pay for it)."""
        context = self._context
        if context is None:
            if self._make is None:
                raise TypeError("this Call was made without the request's context")
            context = self._context = self._make()
        return context


#: The innermost step of the request being run through a cached chain (see :func:`_innermost`):
#: a chain is built once per list of middleware, and what it ends in is each request's own.
ENDPOINT: ContextVar[CallNext] = ContextVar("mcpkit_middleware_endpoint")


def _innermost(call: Call) -> Awaitable[Any]:
    return ENDPOINT.get()(call)


def _chain(middleware: list[Middleware], endpoint: CallNext, *, tool_calls: bool = False) -> CallNext:
    """*endpoint* wrapped in *middleware*, the first outermost."""
    wrapped = endpoint
    for index in range(len(middleware) - 1, -1, -1):
        # A tools/call layer's ToolError is a result for the layers around it; the outermost
        # one's is caught where the chain is run, so it needs no coroutine of its own.
        wrap = _tool_layer if tool_calls and index else _layer
        wrapped = wrap(middleware[index], wrapped)
    return wrapped


def _layer(layer: Middleware, inner: CallNext) -> CallNext:
    def through(call: Call) -> Awaitable[Any]:
        return layer(call, inner)

    return through


def _tool_layer(layer: Middleware, inner: CallNext) -> CallNext:
    # A ToolError raised in a tools/call middleware is the call's answer: the middleware around it
    # sees that tool error as a result, as it sees a tool's own.
    async def through(call: Call) -> Any:
        try:
            return await layer(call, inner)
        except ToolError as exc:
            return refused(exc)

    return through


def refused(exc: ToolError) -> CallToolResult:
    """The tool error result a ``tools/call`` middleware's *exc* answers (the tool does not run)."""
    return CallToolResult(content=[TextContent(text=str(exc))], is_error=True)


def as_call_result(result: dict[str, Any]) -> CallToolResult:
    """A ``CallToolResult`` dict as the struct middleware see: built directly for the usual result
    (text blocks only), converted otherwise (it costs several times more).

    >>> built = as_call_result({"content": [{"type": "text", "text": "hi"}], "isError": True})
    >>> built.content, built.is_error
    ([TextContent(text='hi', annotations=None, meta=None)], True)
    """
    content = result.get("content")
    # Cheap tests first: a result made here has no other keys than these and _meta.
    if type(content) is list and len(result) <= 3 and "_meta" not in result:
        if len(content) == 1:  # the most usual of all: one text block, tested without a loop
            block = content[0]
            if type(block) is dict and len(block) == 2 and block.get("type") == "text":
                text = block.get("text")
                if type(text) is str:
                    return CallToolResult(
                        content=[TextContent(text=text)],
                        structured_content=result.get("structuredContent"),
                        is_error=result.get("isError", False) is True,
                    )
        blocks = []
        for block in content:
            text = block.get("text") if type(block) is dict and len(block) == 2 else None
            if type(text) is not str or block.get("type") != "text":
                break
            blocks.append(TextContent(text=text))
        else:
            return CallToolResult(
                content=blocks,  # type: ignore[arg-type]
                structured_content=result.get("structuredContent"),
                is_error=result.get("isError", False) is True,
            )
    return _convert(result, CallToolResult)


def handed_on(result: Any, outcome: list[Any]) -> Any:
    """What the innermost ``tools/call`` step gives the middleware: a call result as a struct
    (remembering the dict it came from in *outcome*), anything else (a task's creation) as is."""
    if type(result) is not dict or "content" not in result or "task" in result or "resultType" in result:
        return result  # a task's creation (2025-11-25 "task", 2026-07-28 resultType), or not a dict
    built = as_call_result(result)
    outcome.append(result)
    outcome.append(built)
    return built


def from_call_result(returned: Any, outcome: list[Any], scope: Any) -> Any:
    """The answer after the middleware: the dict the call made if they handed its struct back
    unchanged (nothing to convert), else what they returned, as the wire has it."""
    if outcome and returned is outcome[-1]:
        return outcome[-2]
    if isinstance(returned, CallToolResult):
        return shape_call_result(_to_builtins(returned), scope)
    return returned


class MiddlewareStack:
    """A server's middleware, each for every method or for some, and each method's chain."""

    __slots__ = ("_built", "_chains", "_layers", "for_tools")

    def __init__(self) -> None:
        self._layers: list[tuple[Middleware, frozenset[str] | None]] = []
        self._chains: dict[str, list[Middleware]] = {}
        self._built: dict[tuple[int, bool], CallNext] = {}  # (id of a layers list, tools/call)
        #: ``layers_for("tools/call")``, kept as an attribute: the fast path reads it on every call.
        self.for_tools: list[Middleware] = []

    def add(self, fn: Middleware, methods: frozenset[str] | None) -> None:
        self._layers.append((fn, methods))
        self._chains.clear()
        self._built.clear()
        self.for_tools = self.layers_for("tools/call")

    def chain(self, layers: list[Middleware], tool_calls: bool) -> CallNext:
        """*layers* wrapped around the request's own endpoint (set in :data:`ENDPOINT`), built
        once: each request sets its endpoint and runs the same chain."""
        key = (id(layers), tool_calls)  # the lists live as long as _chains, cleared together
        built = self._built.get(key)
        if built is None:
            built = self._built[key] = _chain(layers, _innermost, tool_calls=tool_calls)
        return built

    async def through(
        self, layers: list[Middleware], call: Call, endpoint: CallNext, tool_calls: bool
    ) -> Any:
        """*call* through *layers* to this request's *endpoint*. One middleware (the usual) is
        handed *endpoint* itself as its ``call_next``: no chain, and no context variable to set."""
        if len(layers) == 1:
            return await layers[0](call, endpoint)
        token = ENDPOINT.set(endpoint)
        try:
            return await self.chain(layers, tool_calls)(call)
        finally:
            ENDPOINT.reset(token)

    def __bool__(self) -> bool:
        return bool(self._layers)

    def layers_for(self, method: str) -> list[Middleware]:
        """The middleware that runs around *method*, outermost first (may be empty)."""
        found = self._chains.get(method)
        if found is None:
            found = self._chains[method] = [fn for fn, only in self._layers if only is None or method in only]
        return found

    async def run(self, layers: list[Middleware], call: Call, handler: Callable[..., Awaitable[Any]]) -> Any:
        """Run *call* through *layers* to ``handler(params, ctx)``; the handler's result, as the
        wire has it (a ``tools/call`` result as a dict again)."""
        tool_calls = call.method == "tools/call"
        outcome: list[Any] = []

        async def handed(c: Call) -> Any:
            return handed_on(await handler(c.params, c.context), outcome)

        def plain(c: Call) -> Awaitable[Any]:
            return handler(c.params, c.context)

        try:
            returned = await self.through(layers, call, handed if tool_calls else plain, tool_calls)
        except ToolError as exc:  # refused by the outermost middleware: a tool error result
            if not tool_calls:
                raise
            returned = refused(exc)
        return from_call_result(returned, outcome, call.context.scope) if tool_calls else returned


class MiddlewareAPI:
    """Part of :class:`~mcpkit.LowLevelServer`: registering middleware, and answering a request
    through it for a server that mounts this one."""

    _middleware: MiddlewareStack | None
    _handlers: dict[str, Callable[[dict[str, Any], Context], Awaitable[Any]]]
    if TYPE_CHECKING:
        from .lifespan import Running

        running: Running

    async def dispatch(self, method: str, params: dict[str, Any], ctx: Context) -> Any:
        """Answer *method* as this server's handler (and middleware) would, in the caller's
        *ctx*: how a server that mounts this one reaches it. Raises what the handler raises
        (``MethodNotFound`` when there is none)."""
        handler = self._handlers.get(method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {method}")
        outer = ctx.lifespan
        ctx.lifespan = self.running.value  # this server's handlers see this server's lifespan
        try:
            layers = self._middleware.layers_for(method) if self._middleware is not None else None
            if layers:
                assert self._middleware is not None
                return await self._middleware.run(layers, Call(method, params, ctx), handler)
            return await handler(params, ctx)
        finally:
            ctx.lifespan = outer

    @overload
    def middleware(self, fn: Middleware, /) -> Middleware: ...
    @overload
    def middleware(self, *methods: str) -> Callable[[Middleware], Middleware]: ...
    def middleware(self, *args: Any) -> Any:
        """Register ``async def mw(call, call_next)`` to run around every request
        (``@server.middleware``), or around the named methods only
        (``@server.middleware("tools/call", "prompts/get")``). The first registered runs
        outermost. See :mod:`mcpkit._middleware` for what a middleware sees and may do."""
        if len(args) == 1 and callable(args[0]):
            self.add_middleware(args[0])
            return args[0]
        if not all(isinstance(method, str) for method in args):
            raise TypeError("@server.middleware takes the function, or the names of methods")

        def register(fn: Middleware) -> Middleware:
            self.add_middleware(fn, methods=args or None)
            return fn

        return register

    def add_middleware(self, fn: Middleware, *, methods: Sequence[str] | None = None) -> None:
        """Run *fn* around every request, or around *methods* only (see :meth:`middleware`)."""
        if self._middleware is None:
            self._middleware = MiddlewareStack()
        self._middleware.add(fn, frozenset(methods) if methods is not None else None)
