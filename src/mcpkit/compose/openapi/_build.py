"""Building a :class:`~mcpkit.Server` from an OpenAPI document or a FastAPI app."""

from __future__ import annotations

import base64
import contextlib
import json
import keyword
import re
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..._errors import INTERNAL_ERROR, ResourceNotFound, RPCError, ToolError
from ...server import Server
from ...types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    TextContent,
    Tool,
    ToolAnnotations,
)
from ._load import base_of, check_version, load_document, resolve
from ._operations import Operation, operations
from ._request import Answer, CallFailed, Requester
from .routes import RouteMap, choose_kind

if TYPE_CHECKING:
    import httpx

    from ...context import Context

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "from_fastapi", "from_openapi"]

#: The largest API response a call reads. A tool result carries the body twice (as text and as
#: ``structuredContent``), and stdio's default message limit is 16 MiB.
DEFAULT_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024

_READ_ONLY: Final = frozenset({"GET", "HEAD", "OPTIONS"})
_IDEMPOTENT: Final = frozenset({"PUT", "DELETE"})


def from_openapi(
    spec: Any,
    *,
    base_url: str | None = None,
    client: httpx.AsyncClient | None = None,
    name: str | None = None,
    route_maps: Sequence[RouteMap] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = 30.0,
    forward_headers: Collection[str] = (),
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    **server_options: Any,
) -> Server:
    """A server whose tools (and resources) are the operations of the OpenAPI document *spec*.

    Args:
        spec: the document: a dict, a path to a JSON or YAML file, or an ``http(s)`` URL.
        base_url: where the API is; default: the client's ``base_url`` if it has one, else the
            document's first ``servers`` URL (relative ones taken against the document's URL).
        client: an ``httpx.AsyncClient`` to send with (yours: it is never closed here); default:
            one made when the server starts serving and closed when it stops.
        name: the server's name; default: the document's ``info.title``.
        route_maps: which operations become tools, resources or templates, or are left out (see
            :class:`RouteMap`); the first map to match decides, and an operation none matches is a tool.
        headers: sent with every request (an API key, say); they win over header arguments.
        timeout: seconds for each request; ``None`` leaves the client's own.
        forward_headers: names of headers of the incoming MCP request to copy onto the API's
            (``["authorization"]`` to pass the caller's token on): nothing of the caller's is sent
            unless named here. Only requests that came over HTTP have headers; ``headers=`` wins.
        max_response_bytes: the largest response body read; a larger one is a tool error.
        **server_options: passed to :class:`~mcpkit.Server` (``version``, ``instructions``, ...).

    Raises:
        ValueError: the document cannot be read, is not OpenAPI 3.0 or 3.1, has an external or
            cyclic ``$ref``, two operations with one tool name, a route map that does not fit an
            operation, or no base URL can be found.

    Example::

        >>> spec = {
        ...     "openapi": "3.1.0", "info": {"title": "Pets", "version": "1"},
        ...     "paths": {"/pets/{id}": {"get": {"operationId": "getPet", "parameters": [
        ...         {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}]}}},
        ... }
        >>> server = from_openapi(spec, base_url="http://127.0.0.1:8000")
        >>> [(t.name, t.input_schema["required"]) for t in server.tools]
        [('getPet', ['id'])]
    """
    if max_response_bytes < 1:
        raise ValueError("max_response_bytes must be at least 1")
    document, source = load_document(spec, timeout)
    if base_url is None and client is not None and str(client.base_url):
        base_url = ""  # the client's own base_url applies
    if base_url is None:
        base_url = base_of(document, source)
    if base_url is None:
        raise ValueError("no base URL: the document has no absolute 'servers' URL; pass base_url=...")
    requester = Requester(base_url, headers or {}, timeout, max_response_bytes, forward_headers)
    return _build(document, requester, _Clients(client, None), name, route_maps or (), server_options)


def from_fastapi(
    app: Any,
    *,
    base_url: str | None = None,
    client: httpx.AsyncClient | None = None,
    name: str | None = None,
    route_maps: Sequence[RouteMap] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = 30.0,
    forward_headers: Collection[str] = (),
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    **server_options: Any,
) -> Server:
    """:func:`from_openapi` for a FastAPI app, called in process: ``app.openapi()`` is the document
    and requests go to the app through ``httpx.ASGITransport`` (no socket, no port).

    *base_url* only names the host the app sees (default ``http://fastapi``). The app's own lifespan
    is not run: start what it needs before serving. See :func:`from_openapi` for the other arguments.
    """
    if max_response_bytes < 1:
        raise ValueError("max_response_bytes must be at least 1")
    document = app.openapi()
    check_version(document)
    requester = Requester(
        base_url or "http://fastapi", headers or {}, timeout, max_response_bytes, forward_headers
    )
    return _build(
        document, requester, _Clients(client, app), name or app.title, route_maps or (), server_options
    )


class _Clients:
    """The ``httpx.AsyncClient`` calls are sent with: the caller's, or one held while the server serves.

    A client made here belongs to the event loop serving the server, so it is made by the server's
    lifespan and closed by it; a call made while no lifespan runs (a server driven by hand) gets a
    client of its own, closed after it.
    """

    def __init__(self, given: httpx.AsyncClient | None, app: Any) -> None:
        self.given = given
        self.app = app
        self.held: httpx.AsyncClient | None = None

    def make(self) -> httpx.AsyncClient:
        import httpx

        transport = httpx.ASGITransport(app=self.app) if self.app is not None else None
        return httpx.AsyncClient(transport=transport, follow_redirects=False)

    @contextlib.asynccontextmanager
    async def lifespan(self, _server: Any) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            # An app called in process has its own lifespan (startup and shutdown), run with ours.
            router = getattr(self.app, "router", None)
            app_lifespan = getattr(router, "lifespan_context", None)
            if app_lifespan is not None:
                await stack.enter_async_context(app_lifespan(self.app))
            if self.given is not None:
                yield
                return
            self.held = await stack.enter_async_context(self.make())
            try:
                yield
            finally:
                self.held = None

    @contextlib.asynccontextmanager
    async def use(self) -> AsyncIterator[httpx.AsyncClient]:
        current = self.given or self.held
        if current is not None:
            yield current
            return
        async with self.make() as client:
            yield client


def _build(
    document: dict[str, Any],
    requester: Requester,
    clients: _Clients,
    name: str | None,
    route_maps: Sequence[RouteMap],
    server_options: dict[str, Any],
) -> Server:
    version = check_version(document)
    paths = resolve(document)
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    assert isinstance(info, dict)
    server_name = name or str(info.get("title") or "openapi")
    server_options.setdefault("version", str(info.get("version") or "0.1.0"))
    if isinstance(info.get("description"), str) and info["description"].strip():
        server_options.setdefault("instructions", info["description"].strip())
    theirs = server_options.pop("lifespan", None)
    server_type: type[Server] = server_options.pop("server_type", Server)  # mcpkit.Server passes its own
    server = server_type(server_name, lifespan=_joined(clients.lifespan, theirs), **server_options)
    authority = _authority(server_name)
    seen: dict[str, Operation] = {}
    for op in operations(paths, version):
        kind = choose_kind(op.method, op.path, op.tags, route_maps)
        if kind == "exclude":
            continue
        if op.name in seen:
            first = seen[op.name]
            raise ValueError(
                f"two operations are named {op.name!r}: {first.method} {first.path} and {op.method} {op.path}"
                " (give them distinct operationIds, or exclude one with a RouteMap)"
            )
        seen[op.name] = op
        if kind == "tool":
            _add_tool(server, op, requester, clients)
        else:
            _add_reader(server, op, kind, authority, requester, clients)
    return server


def _joined(ours: Any, theirs: Any) -> Any:
    if theirs is None:
        return ours

    @contextlib.asynccontextmanager
    async def both(server: Any) -> AsyncIterator[Any]:
        async with ours(server), theirs(server) as value:
            yield value

    return both


def _add_tool(server: Server, op: Operation, requester: Requester, clients: _Clients) -> None:
    hints = ToolAnnotations(
        read_only_hint=True if op.method in _READ_ONLY else None,
        idempotent_hint=True if op.method in _IDEMPOTENT else None,
    )
    definition = Tool(
        name=op.name,
        title=op.summary.strip() if op.summary and op.summary.strip() else None,
        description=op.text,
        input_schema=op.input_schema(),
        annotations=hints if hints.read_only_hint or hints.idempotent_hint else None,
    )

    async def call(arguments: dict[str, Any], ctx: Context) -> CallToolResult:
        try:
            async with clients.use() as client:
                request = requester.build(client, op, arguments)
                answer = await requester.send(client, request, op)
        except CallFailed as exc:
            raise ToolError(str(exc)) from None
        return _tool_result(answer)

    server.add_raw_tool(definition, call, tags=op.tags)


def _tool_result(answer: Answer) -> CallToolResult:
    if not answer.body:
        return CallToolResult(content=[TextContent(text=f"HTTP {answer.status}, no content")])
    if answer.is_json:
        try:
            value = json.loads(answer.body)
        except ValueError:
            return CallToolResult(content=[TextContent(text=answer.text())])
        # structuredContent is an object; any other JSON value is wrapped, as a tool's would be.
        structured = value if isinstance(value, dict) else {"result": value}
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return CallToolResult(content=[TextContent(text=text)], structured_content=structured)
    media = answer.content_type.split(";")[0].strip().lower()
    if media.startswith("image/"):
        return CallToolResult(
            content=[ImageContent(data=base64.b64encode(answer.body).decode(), mime_type=media)]
        )
    if _is_text(answer):
        return CallToolResult(content=[TextContent(text=answer.text())])
    blob = ResourceContents(
        uri=answer.url, mime_type=media or None, blob=base64.b64encode(answer.body).decode()
    )
    return CallToolResult(content=[EmbeddedResource(resource=blob)])


def _is_text(answer: Answer) -> bool:
    media = answer.content_type.split(";")[0].strip().lower()
    if media.startswith("text/") or media.endswith(("+xml", "/xml")) or "charset=" in answer.content_type:
        return True
    try:
        answer.body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- resources and templates -------------------------------------------------------------------------


def _authority(server_name: str) -> str:
    """The server's name as the host part of its ``openapi://`` URIs (lower case, ``-`` between words)."""
    return re.sub(r"[^a-z0-9]+", "-", server_name.lower()).strip("-") or "api"


def _add_reader(
    server: Server, op: Operation, kind: str, authority: str, requester: Requester, clients: _Clients
) -> None:
    where = f"{op.method} {op.path}"
    if op.method != "GET":
        raise ValueError(f"{where} cannot be a {kind}: only GET operations are read as resources")
    if any(a.location in ("header", "cookie", "body") and a.required for a in op.arguments):
        raise ValueError(f"{where} needs header, cookie or body arguments: it cannot be a {kind}")
    variables = {a.name: _variable(a.name) for a in op.arguments if a.location in ("path", "query")}
    if kind == "resource" and any(a.required for a in op.arguments):
        needed = ", ".join(a.name for a in op.arguments if a.required)
        raise ValueError(
            f"{where} needs arguments ({needed}): map it to a template or a tool, not a resource"
        )
    uri = f"openapi://{authority}{op.path}"
    if kind == "template":
        for arg in op.arguments:
            if arg.location == "path":
                uri = uri.replace("{" + arg.api_name + "}", "{" + variables[arg.name] + "}")
        query = [variables[a.name] for a in op.arguments if a.location == "query"]
        if query:
            uri += "{?" + ",".join(query) + "}"
    else:
        variables = {}
    reader = _Reader(op, variables, requester, clients)
    server.add_resource(
        reader, uri, name=op.name, title=op.summary, description=op.text, mime_type=op.response_type
    )


def _variable(name: str) -> str:
    # A URI template variable, and a Python parameter name of the reader: letters, digits and _.
    variable = re.sub(r"\W", "_", name, flags=re.ASCII)
    if not variable or variable[0].isdigit() or keyword.iskeyword(variable):
        variable = "v_" + variable
    return variable


class _Reader:
    """Reads a resource or template by performing its GET; the template's variables are its parameters."""

    def __init__(
        self, op: Operation, variables: dict[str, str], requester: Requester, clients: _Clients
    ) -> None:
        import inspect

        self.op = op
        self.arguments = {variable: name for name, variable in variables.items()}
        self.requester = requester
        self.clients = clients
        self.__name__ = op.name
        kind = inspect.Parameter.KEYWORD_ONLY
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(v, kind, default=None, annotation=str | None) for v in self.arguments]
        )

    async def __call__(self, **values: str | None) -> str | bytes:
        arguments = {self.arguments[v]: value for v, value in values.items() if value is not None}
        try:
            async with self.clients.use() as client:
                request = self.requester.build(client, self.op, arguments)
                answer = await self.requester.send(client, request, self.op)
        except CallFailed as exc:
            if exc.status == 404:
                raise ResourceNotFound(str(exc)) from None
            raise RPCError(INTERNAL_ERROR, str(exc)) from None
        # Text (JSON too) or bytes; the contents' URI is the one read, filled in by the server.
        return answer.text() if answer.is_json or _is_text(answer) else answer.body
