"""Performing one operation: arguments in, an HTTP request out, the bounded response back.

What is sent is the operation's arguments and the configured static ``headers``, nothing else: no
header, token or cookie of the MCP request that caused the call is copied (see the package's docs).
A static header wins over a header parameter of the same name, so a model cannot replace configured
credentials through an argument.

The response is read through :func:`mcpkit.transports.http.client._bounded.read_body`: a body whose
``Content-Length`` says it is too large is refused before a byte is read, and any other stops being
read at the limit. ``Accept-Encoding`` asks only for the codings that reader can decode in bounded
pieces.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from ...auth._info import current_headers
from ...transports.http.client._bounded import ACCEPT_ENCODING, MessageTooLarge, read_body
from ._operations import Argument, Operation

if TYPE_CHECKING:
    import httpx

__all__ = ["Answer", "CallFailed", "Requester"]

#: How much of an error response's body a tool error quotes.
EXCERPT_CHARS: Final = 500


class CallFailed(Exception):
    """The request could not be made or answered (bad arguments, network, size): the message says why."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Answer:
    """A successful (2xx) response, read whole."""

    status: int
    content_type: str
    body: bytes
    url: str

    @property
    def is_json(self) -> bool:
        base = self.content_type.split(";")[0].strip().lower()
        return base == "application/json" or base.endswith("+json")

    def text(self) -> str:
        return self.body.decode(_charset(self.content_type), "replace")


class Requester:
    """Sends operations' requests with an ``httpx.AsyncClient``.

    Args:
        base_url: prefixed to every operation's path; ``""`` leaves the URL relative, for a client
            that has its own ``base_url``.
        headers: sent with every request.
        timeout: seconds for each request (``None``: the client's own timeout).
        max_response_bytes: the largest response body read.
    """

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        timeout: float | None,
        max_response_bytes: int,
        forward_headers: Collection[str] = (),
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers)
        self._static = {name.lower() for name in headers}
        #: Headers of the incoming MCP HTTP request copied onto the API's (named explicitly).
        self.forward = tuple(dict.fromkeys(name.lower() for name in forward_headers))
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes

    def build(self, client: httpx.AsyncClient, op: Operation, arguments: Mapping[str, Any]) -> httpx.Request:
        """The request performing *op* with *arguments*. Raises :class:`CallFailed` on bad ones."""
        known = {a.name for a in op.arguments}
        unknown = sorted(set(arguments) - known)
        if unknown:
            accepted = ", ".join(sorted(known)) or "none"
            raise CallFailed(f"unknown argument(s) {', '.join(map(repr, unknown))}; accepted: {accepted}")
        missing = [a.name for a in op.arguments if a.required and arguments.get(a.name) is None]
        if missing:
            raise CallFailed(f"missing required argument(s): {', '.join(map(repr, missing))}")
        path = op.path
        query: list[tuple[str, str | int | float | bool | None]] = []
        headers = {"accept-encoding": ACCEPT_ENCODING}
        cookies: list[str] = []
        body: dict[str, Any] = {}
        whole: Any = None
        for arg in op.arguments:
            if arg.name not in arguments or arguments[arg.name] is None:
                continue
            value = arguments[arg.name]
            if arg.location == "path":
                path = path.replace("{" + arg.api_name + "}", quote(_scalar(value, arg), safe=""))
            elif arg.location == "query":
                query.extend(_query(arg, value))
            elif arg.location == "header":
                if arg.api_name.lower() not in self._static:
                    headers[arg.api_name] = _scalar(value, arg)
            elif arg.location == "cookie":
                cookies.append(f"{arg.api_name}={quote(_scalar(value, arg), safe='')}")
            elif arg.api_name:
                body[arg.api_name] = value
            else:
                whole = value
        if cookies:
            headers["cookie"] = "; ".join(cookies)
        if self.forward:
            incoming = current_headers.get()  # None unless the MCP request came over HTTP
            if incoming is not None:
                for name in self.forward:
                    value = incoming.get(name)
                    if value is not None:
                        headers[name] = value
        headers.update(self.headers)  # configured headers win over forwarded ones
        options: dict[str, Any] = {}
        if op.body_type is not None and (body or whole is not None):
            payload = body if not op.body_whole else whole
            if op.body_type == "application/x-www-form-urlencoded":
                options["data"] = payload
            elif op.body_whole and not _json_media(op.body_type):
                raw = payload if isinstance(payload, (str, bytes)) else json.dumps(payload)
                options["content"] = raw
                headers["content-type"] = op.body_type
            else:
                options["content"] = json.dumps(payload, separators=(",", ":")).encode()
                headers["content-type"] = op.body_type
        if self.timeout is not None:
            options["timeout"] = self.timeout
        return client.build_request(op.method, self.base_url + path, params=query, headers=headers, **options)

    async def send(self, client: httpx.AsyncClient, request: httpx.Request, op: Operation) -> Answer:
        """Send *request*; its 2xx answer, read whole. Raises :class:`CallFailed` otherwise."""
        import httpx

        where = f"{op.method} {op.path}"
        try:
            reply = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise CallFailed(f"{where} failed: {type(exc).__name__}: {exc or 'no detail'}") from None
        try:
            try:
                body = await read_body(reply, self.max_response_bytes, "the response")
            except MessageTooLarge:
                if reply.is_success:
                    raise CallFailed(
                        f"{where}: the response is larger than the limit of {self.max_response_bytes} bytes"
                        " (max_response_bytes); the rest was not read",
                        reply.status_code,
                    ) from None
                body = b""
            except httpx.HTTPError as exc:
                raise CallFailed(
                    f"{where}: reading the response failed: {type(exc).__name__}: {exc}"
                ) from None
            except Exception as exc:  # an undecodable content coding (TransportError)
                raise CallFailed(f"{where}: {exc}") from None
        finally:
            await reply.aclose()
        content_type = reply.headers.get("content-type", "")
        if not reply.is_success:
            excerpt = body.decode(_charset(content_type), "replace").strip()
            if len(excerpt) > EXCERPT_CHARS:
                excerpt = excerpt[:EXCERPT_CHARS] + "…"
            reason = f" {reply.reason_phrase}" if reply.reason_phrase else ""
            detail = f": {excerpt}" if excerpt else ""
            raise CallFailed(f"{where} answered HTTP {reply.status_code}{reason}{detail}", reply.status_code)
        return Answer(reply.status_code, content_type, body, str(request.url))


def _json_media(media: str) -> bool:
    base = media.split(";")[0].strip().lower()
    return base == "application/json" or base.endswith("+json")


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return "utf-8"


def _text(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


def _scalar(value: Any, arg: Argument) -> str:
    """A path, header or cookie value (style ``simple``: arrays and objects comma-separated)."""
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, dict):
        sep = "=" if arg.explode else ","
        return ",".join(f"{k}{sep}{_text(v)}" for k, v in value.items())
    return _text(value)


def _query(arg: Argument, value: Any) -> list[tuple[str, str | int | float | bool | None]]:
    """Query pairs for *value* (style ``form`` by default; ``spaceDelimited`` and ``pipeDelimited``
    for arrays; ``deepObject`` for objects)."""
    if isinstance(value, (list, tuple)):
        if arg.explode and arg.style == "form":
            return [(arg.api_name, _text(v)) for v in value]
        sep = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(arg.style, ",")
        return [(arg.api_name, sep.join(_text(v) for v in value))]
    if isinstance(value, dict):
        if arg.style == "deepObject":
            return [(f"{arg.api_name}[{k}]", _text(v)) for k, v in value.items()]
        if arg.explode:
            return [(str(k), _text(v)) for k, v in value.items()]
        return [(arg.api_name, ",".join(f"{k},{_text(v)}" for k, v in value.items()))]
    return [(arg.api_name, _text(value))]
