"""Resources: fixed URIs and URI templates, each read by a Python function.

A function registered for a plain URI (``config://app``) is a *resource*, listed by
``resources/list``; one registered for a template (``notes://{id}``) is a *resource template*,
listed by ``resources/templates/list``, and its parameters are filled from the URI's variables.
``resources/read`` tries the fixed URIs first, then the templates in registration order.

Template variables are untrusted input that handlers tend to join onto paths, so by default a value
that could climb out of a folder is refused with -32602 before the handler runs: after
percent-decoding it holds a ``..`` segment (``../x``, ``a/..``, from ``%2e%2e%2f`` too), starts with
``/`` (an absolute path), or holds a backslash or NUL. A template registered with
``allow_traversal=True`` gets such values as they are.

What a reader returns becomes ``contents``: ``str`` is text, ``bytes`` a base64 blob, a
``ResourceContents`` (or a list of them) is sent as it is, and anything else is JSON text.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import msgspec

from ._errors import InvalidParams, ResourceNotFound
from ._signature import ArgumentError, ToolSignature, inspect_function
from .types import Annotations, Icon, Resource, ResourceContents, ResourceTemplate

if TYPE_CHECKING:
    from ._uritemplate import UriTemplate

__all__ = ["ResourceRegistry"]

_json: Final = msgspec.json.Encoder()


class _Reader:
    """A registered resource or template: its function and how it is listed.

    A plain class rather than a dataclass: every server imports this module at start-up, and
    @dataclass compiles its methods from source there (none of which a reader needs)."""

    __slots__ = ("allow_traversal", "fn", "mime_type", "signature", "tags", "template", "wire")

    def __init__(
        self,
        fn: Callable[..., Any],
        signature: ToolSignature,
        template: UriTemplate,
        wire: dict[str, Any],  # the Resource or ResourceTemplate as listed
        mime_type: str | None,
        allow_traversal: bool = False,
    ) -> None:
        self.fn = fn
        self.signature = signature
        self.template = template
        self.wire = wire
        self.mime_type = mime_type
        self.allow_traversal = allow_traversal
        self.tags: frozenset[str] = frozenset()  # for filtering (Server.disable(tags=...)); never sent


def unsafe_reason(value: str) -> str | None:
    """Why a decoded template value could escape a folder, or ``None`` when it cannot."""
    if "\0" in value:
        return "a NUL character"
    if "\\" in value:
        return "a backslash"
    if value.startswith("/"):
        return "an absolute path"
    if ".." in value.split("/"):
        return "a '..' segment"
    return None


class ResourceRegistry:
    """The resources and resource templates of one server."""

    def __init__(self) -> None:
        self.fixed: dict[str, _Reader] = {}
        self.templates: dict[str, _Reader] = {}

    def add(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        mime_type: str | None,
        size: int | None,
        annotations: Annotations | None,
        icons: list[Icon] | None,
        meta: dict[str, Any] | None,
        skip_types: tuple[type, ...],
        allow_traversal: bool = False,
    ) -> Resource | ResourceTemplate:
        # Imported on the first resource: a server without any (most stdio servers are tools only)
        # starts without the template compiler and urllib.parse (with ipaddress) that it imports.
        from ._uritemplate import UriTemplate

        template = UriTemplate(uri)
        signature = inspect_function(fn, skip_types=skip_types, strict=False)
        params = set(signature.input_schema.get("properties", {}))
        missing = set(signature.input_schema.get("required", [])) - set(template.variables)
        if missing:
            raise TypeError(f"{fn.__name__}: parameters {sorted(missing)} are not variables of {uri!r}")
        unused = set(template.variables) - params
        if unused:
            raise TypeError(f"{fn.__name__}: {uri!r} has variables {sorted(unused)} that it does not take")
        common: dict[str, Any] = {
            "name": name or fn.__name__,
            "title": title,
            "description": description if description is not None else signature.description,
            "mime_type": mime_type,
            "annotations": annotations,
            "icons": icons,
            "meta": meta,
        }
        given = {k: v for k, v in common.items() if v is not None}
        definition: Resource | ResourceTemplate
        if template.is_template:
            if uri in self.templates:
                raise ValueError(f"a resource template {uri!r} is already registered")
            definition = ResourceTemplate(uri_template=uri, **given)
            self.templates[uri] = _Reader(
                fn, signature, template, msgspec.to_builtins(definition), mime_type, allow_traversal
            )
        else:
            if uri in self.fixed:
                raise ValueError(f"a resource {uri!r} is already registered")
            if size is not None:
                given["size"] = size
            definition = Resource(uri=uri, **given)
            self.fixed[uri] = _Reader(fn, signature, template, msgspec.to_builtins(definition), mime_type)
        return definition

    def remove(self, uri: str) -> None:
        """Unregister a resource or template by its URI (template). Raises ``KeyError``."""
        if uri in self.fixed:
            del self.fixed[uri]
        else:
            del self.templates[uri]

    def find(self, uri: str) -> tuple[_Reader, dict[str, Any]]:
        """The reader for *uri* and its bound arguments.

        Raises:
            ResourceNotFound: nothing is registered for *uri*.
            InvalidParams: the URI's variables do not fit the reader's parameters, or one of them
                could escape a folder (see the module docstring).
        """
        reader = self.fixed.get(uri)
        if reader is not None:
            return reader, reader.signature.bind({})
        for reader in self.templates.values():
            values = reader.template.match(uri)
            if values is None:
                continue
            if not reader.allow_traversal:
                _refuse_traversal(uri, values)
            try:
                return reader, reader.signature.bind(values)
            except ArgumentError as exc:
                raise InvalidParams(f"{uri}: {exc}", {"uri": uri}) from None
        raise ResourceNotFound(f"Resource not found: {uri}", {"uri": uri})


def _refuse_traversal(uri: str, values: dict[str, str | list[str]]) -> None:
    for name, value in values.items():
        for part in value if isinstance(value, list) else (value,):
            reason = unsafe_reason(part)
            if reason is not None:
                raise InvalidParams(
                    f"{uri}: variable {name!r} holds {reason}, which this resource template refuses",
                    {"uri": uri, "variable": name},
                )


def to_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """What a reader returned, as ``ResourceContents`` dicts."""
    if isinstance(value, ResourceContents):
        return [msgspec.to_builtins(value)]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, ResourceContents) for v in value):
        return [msgspec.to_builtins(v) for v in value]
    if isinstance(value, str):
        return [{"uri": uri, "mimeType": mime_type or "text/plain", "text": value}]
    if isinstance(value, (bytes, bytearray, memoryview)):
        blob = base64.b64encode(bytes(value)).decode()
        return [{"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": blob}]
    text = _json.encode(msgspec.to_builtins(value)).decode()
    return [{"uri": uri, "mimeType": mime_type or "application/json", "text": text}]
