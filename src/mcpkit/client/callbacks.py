"""Answering what the server asks of us (sampling, elicitation, roots) through the user's callbacks.

The same answers serve both eras: in the handshake era the server sends a real request
(``sampling/createMessage``...), and in 2026-07-28 the same request arrives as one entry of an
``input_required`` result's ``inputRequests`` (or of a task's), to be answered in ``inputResponses``.
A request without a callback is refused with -32601; since the capabilities we declare follow from
the callbacks given (:func:`implied_capabilities`), a server that honours them never asks.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, TypeAlias

import msgspec

from .._errors import MethodNotFound
from ..tasks import TASKS_EXTENSION
from ..types import APP_MIME_TYPE, UI_EXTENSION, Root

__all__ = [
    "LogCallback",
    "RequestCallback",
    "RootsSource",
    "answer",
    "answer_inputs",
    "apply_defaults",
    "extensions_to_declare",
    "handshake_capabilities",
    "implied_capabilities",
    "log_to_python",
]

server_logger = logging.getLogger("mcpkit.server_log")

#: ``async fn(params) -> result`` answering one kind of server request.
RequestCallback: TypeAlias = Callable[[dict[str, Any]], Awaitable[Any]]
#: The roots to offer, or ``async fn() -> roots``.
RootsSource: TypeAlias = Sequence[Root] | Callable[[], Awaitable[Sequence[Root]]]
#: ``async fn(params)`` for ``notifications/message``.
LogCallback: TypeAlias = Callable[[dict[str, Any]], Awaitable[None]]
#: ``async fn(method, params) -> result``: one answer, whichever the method.
Answerer: TypeAlias = Callable[[Any, dict[str, Any]], Awaitable[Any]]


def implied_capabilities(
    *, sampling: RequestCallback | None, elicitation: RequestCallback | None, roots: RootsSource | None
) -> dict[str, Any]:
    """The client capabilities that the callbacks given make true.

    Tasks of the 2026-07-28 extension are followed by ``call_tool`` itself, so that extension is
    always declared.
    """
    caps: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}}
    if sampling is not None:
        caps["sampling"] = {"tools": {}}
    if elicitation is not None:
        caps["elicitation"] = {"form": {}, "url": {}}
    if roots is not None:
        caps["roots"] = {"listChanged": True}
    return caps


def extensions_to_declare(extensions: dict[str, dict[str, Any]] | None, *, ui: bool) -> dict[str, Any]:
    """The ``capabilities.extensions`` entries of ``Client(extensions=..., ui=...)``.

    ``ui=True`` declares MCP Apps views (``io.modelcontextprotocol/ui`` with ``mimeTypes``), unless
    *extensions* already says something of it.
    """
    declared = dict(extensions or {})
    if ui:
        declared.setdefault(UI_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})
    return declared


def handshake_capabilities(capabilities: dict[str, Any]) -> dict[str, Any]:
    """*capabilities* as an ``initialize`` request carries them.

    Extensions (SEP-2133) travel in ``capabilities.extensions`` in that era too: the MCP Apps
    extension is declared there "in the initialize request" (ext-apps, capability negotiation), and
    a server that does not know the field ignores it. The tasks extension is left out: it belongs to
    2026-07-28, whose tasks replace the 2025-11-25 ones a handshake server has.
    """
    extensions = capabilities.get("extensions")
    if not isinstance(extensions, dict):
        return capabilities
    kept = {name: value for name, value in extensions.items() if name != TASKS_EXTENSION}
    shaped = {key: value for key, value in capabilities.items() if key != "extensions"}
    if kept:
        shaped["extensions"] = kept
    return shaped


async def answer(
    method: Any,
    params: dict[str, Any],
    *,
    sampling: RequestCallback | None,
    elicitation: RequestCallback | None,
    roots: RootsSource | None,
) -> Any:
    """The result for a server's *method* request, from the matching callback.

    Raises:
        MethodNotFound: there is no callback for *method* (-32601 to the server).
    """
    if method == "roots/list" and roots is not None:
        listed = await roots() if callable(roots) else roots
        return {"roots": [msgspec.to_builtins(r) if isinstance(r, Root) else r for r in listed]}
    callback = {"sampling/createMessage": sampling, "elicitation/create": elicitation}.get(method)
    if callback is None:
        raise MethodNotFound(f"Method not found: {method} (this client has no callback for it)")
    result = await callback(params)
    result = msgspec.to_builtins(result) if isinstance(result, msgspec.Struct) else result
    if method == "elicitation/create":
        apply_defaults(result, params.get("requestedSchema"))
    return result


async def answer_inputs(requests: Any, answered: set[str], answer_one: Answerer) -> dict[str, Any]:
    """Answer an ``inputRequests`` map: the ``inputResponses`` that go back to the server.

    Keys in *answered* are skipped, and the keys answered now are added to it (a task shows the same
    question on every ``tasks/get`` until ``tasks/update`` is processed).
    """
    responses: dict[str, Any] = {}
    if isinstance(requests, dict):
        for key, asked in requests.items():
            if key not in answered and isinstance(asked, dict):
                responses[key] = await answer_one(asked.get("method"), asked.get("params") or {})
                answered.add(key)
    return responses


def apply_defaults(result: Any, schema: Any) -> None:
    """An accepted form leaves out fields the user did not touch: those with a ``default`` in the
    requested schema take it (SEP-1034). Changes *result* in place."""
    if not isinstance(result, dict) or result.get("action") != "accept" or not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    content = result.get("content")
    if not isinstance(content, dict):
        content = result["content"] = {}
    for name, field in properties.items():
        if name not in content and isinstance(field, dict) and "default" in field:
            content[name] = field["default"]


_PY_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


async def log_to_python(params: dict[str, Any]) -> None:
    """The default ``on_log``: a server's log message to the ``mcpkit.server_log`` logger."""
    level = _PY_LEVELS.get(str(params.get("level")), logging.INFO)
    server_logger.log(level, "%s", params.get("data"), extra={"mcp_logger": params.get("logger")})
