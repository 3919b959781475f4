"""Reading an OpenAPI document (a dict, a JSON or YAML file, or a URL) and resolving its ``$ref``\\ s.

Only references within the document are followed (``#/components/schemas/Pet``, any JSON pointer
into the same document, RFC 6901 escapes and percent-encoding undone). An external one
(``other.yaml#/Pet``, ``https://...``) is refused with a :class:`ValueError` that names it and where
it was met: fetching further documents is a network and trust decision the caller did not make.

Resolution inlines each reference, so what the operations reach must be a tree: a reference that
leads back to itself (``Node`` whose ``children`` are ``Node``\\ s) cannot be inlined and is refused,
the error naming the whole cycle. Only ``paths`` (what becomes tools) is resolved, so a cycle among
components that no operation uses does no harm. A resolved reference is shared, not copied, between
the places that use it: the result is read, never written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urljoin

__all__ = ["MAX_DOCUMENT_BYTES", "load_document", "resolve"]

#: The largest document read from a file or a URL (the largest public API descriptions are a few MiB).
MAX_DOCUMENT_BYTES: Final = 32 * 1024 * 1024


def load_document(spec: Any, timeout: float | None) -> tuple[dict[str, Any], str | None]:
    """The document *spec* names (a dict, a path, or an ``http(s)`` URL) and the URL it came from.

    Raises:
        ValueError: unreadable, not JSON or YAML, not an object, or not OpenAPI 3.0 or 3.1.
    """
    source: str | None = None
    if isinstance(spec, dict):
        document: Any = spec
    elif isinstance(spec, str) and spec.startswith(("http://", "https://")):
        source = spec
        document = _parse(_fetch(spec, timeout), spec)
    elif isinstance(spec, (str, os.PathLike)):
        path = Path(spec)
        try:
            if path.stat().st_size > MAX_DOCUMENT_BYTES:
                raise ValueError(f"{path}: larger than {MAX_DOCUMENT_BYTES} bytes")
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(
                f"cannot read the OpenAPI document {str(path)!r}: {exc.strerror or exc}"
            ) from None
        document = _parse(text, str(path))
    else:
        raise TypeError(f"spec must be a dict, a path or an http(s) URL, not {type(spec).__name__}")
    if not isinstance(document, dict):
        raise ValueError(f"an OpenAPI document is an object, not {type(document).__name__}")
    check_version(document)
    return document, source


def check_version(document: dict[str, Any]) -> str:
    """The document's OpenAPI version (``"3.0"`` or ``"3.1"``). Raises ``ValueError`` otherwise."""
    version = document.get("openapi")
    if version is None:
        if "swagger" in document:
            raise ValueError(
                f"Swagger {document['swagger']} is not supported: convert the document to OpenAPI 3"
            )
        raise ValueError("not an OpenAPI document: it has no 'openapi' field")
    text = str(version)
    if not text.startswith(("3.0", "3.1")):
        raise ValueError(f"OpenAPI {text} is not supported (3.0 and 3.1 are)")
    if not isinstance(document.get("paths", {}), dict):
        raise ValueError("'paths' must be an object")
    return text[:3]


def _fetch(url: str, timeout: float | None) -> str:
    import httpx

    try:
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as reply:
            if reply.status_code != 200:
                raise ValueError(f"fetching the OpenAPI document {url} answered HTTP {reply.status_code}")
            body = bytearray()
            for piece in reply.iter_bytes():
                body += piece
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise ValueError(
                        f"the OpenAPI document at {url} is larger than {MAX_DOCUMENT_BYTES} bytes"
                    )
            return body.decode(reply.encoding or "utf-8", "replace")
    except httpx.HTTPError as exc:
        raise ValueError(f"cannot fetch the OpenAPI document {url}: {type(exc).__name__}: {exc}") from None


def _parse(text: str, where: str) -> Any:
    # JSON first: it is the common case, and a JSON document is also YAML (but YAML reads it slower).
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: invalid JSON: {exc}") from None
    from ..._yaml import load

    try:
        return load(text)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def base_of(document: dict[str, Any], source: str | None) -> str | None:
    """The first ``servers`` URL, its variables given their defaults and made absolute against the
    URL the document came from; ``None`` when there is no server or a relative one cannot be."""
    servers = document.get("servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], dict):
        return None
    url = str(servers[0].get("url", ""))
    variables = servers[0].get("variables")
    if isinstance(variables, dict):
        for name, variable in variables.items():
            if isinstance(variable, dict) and "default" in variable:
                url = url.replace("{" + name + "}", str(variable["default"]))
    if url.startswith(("http://", "https://")):
        return url
    if source is not None:
        return urljoin(source, url)
    return None


def resolve(document: dict[str, Any]) -> dict[str, Any]:
    """*document*'s ``paths`` with every ``$ref`` they reach inlined.

    Raises:
        ValueError: a reference out of the document, to nothing, or part of a cycle.
    """
    resolver = _Resolver(document)
    paths = document.get("paths") or {}
    return {path: resolver.node(item, (), f"paths.{path}") for path, item in paths.items()}


class _Resolver:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.done: dict[str, Any] = {}

    def node(self, node: Any, stack: tuple[str, ...], where: str) -> Any:
        if isinstance(node, list):
            return [self.node(item, stack, where) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return {key: self.node(value, stack, f"{where}.{key}") for key, value in node.items()}
        target = self.ref(ref, stack, where)
        siblings = {
            key: self.node(value, stack, f"{where}.{key}") for key, value in node.items() if key != "$ref"
        }
        # OpenAPI 3.1 lets a reference carry a summary or description (and schemas any keyword)
        # beside it; they apply to the place of use, so they win over the target's.
        if siblings and isinstance(target, dict):
            return {**target, **siblings}
        return target

    def ref(self, ref: str, stack: tuple[str, ...], where: str) -> Any:
        if ref in self.done:
            return self.done[ref]
        if not ref.startswith("#"):
            raise ValueError(
                f"external $ref {ref!r} at {where}: only references within the document (#/...) are followed"
            )
        if ref in stack:
            cycle = " -> ".join((*stack[stack.index(ref) :], ref))
            raise ValueError(f"$ref cycle at {where}: {cycle} (a recursive schema cannot be inlined)")
        resolved = self.node(self.pointer(ref, where), (*stack, ref), ref)
        self.done[ref] = resolved
        return resolved

    def pointer(self, ref: str, where: str) -> Any:
        node: Any = self.document
        fragment = unquote(ref[1:])
        if not fragment:
            return node
        if not fragment.startswith("/"):
            raise ValueError(f"$ref {ref!r} at {where} is not a JSON pointer (#/...)")
        for raw in fragment[1:].split("/"):
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise ValueError(f"$ref {ref!r} at {where} points at nothing (no {key!r} there)")
        return node
