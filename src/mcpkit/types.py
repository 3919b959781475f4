"""Typed wire structures shared by servers and clients.

Each class is a ``msgspec.Struct`` whose field names are the Pythonic spelling of the wire names
(``mime_type`` travels as ``mimeType``). An absent optional field reads as a plain Python value:
``None``, or ``False`` for a flag whose absence the spec defines as false (``CallToolResult.is_error``,
``PromptArgument.required``, ``Completion.has_more``). Such defaults are left out of the wire form
(``omit_defaults``), so what is sent is exactly what was set. No field here is one the schema lets
be ``null`` explicitly (only ``Task.ttl`` is, and tasks travel as dicts), so nothing is lost by
reading ``null`` and absence alike. The hints of :class:`ToolAnnotations` stay ``None`` when absent:
their spec defaults differ (``destructiveHint`` and ``openWorldHint`` default to true).

::

    >>> Tool(name="t", input_schema={"type": "object"}).description is None
    True
    >>> msgspec.json.encode(PromptArgument(name="city"))
    b'{"name":"city"}'

The structures are the union of every protocol revision mcpkit speaks; fields that a revision lacks
are removed for its clients by :mod:`mcpkit._compat` just before a result is sent.
"""

from __future__ import annotations

from typing import Any, Final, Generic, Literal, TypeAlias, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "APP_MIME_TYPE",
    "UI_EXTENSION",
    "UNSET",
    "Annotations",
    "AudioContent",
    "CallToolResult",
    "Completion",
    "ContentBlock",
    "CreateMessageResult",
    "ElicitResult",
    "EmbeddedResource",
    "GetPromptResult",
    "Icon",
    "ImageContent",
    "Implementation",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "SamplingMessage",
    "TextContent",
    "Tool",
    "ToolAnnotations",
    "UnsetType",
    "supports_ui",
]

Role: TypeAlias = Literal["user", "assistant"]

#: The MCP Apps extension (SEP-1865, ``modelcontextprotocol/ext-apps``): tools whose results a host
#: shows in an interactive HTML view, served as a ``ui://`` resource.
UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
#: The MIME type of an MCP App's HTML; a host lists it in its ``mimeTypes`` for the extension.
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
T = TypeVar("T")


class Wire(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True, frozen=True):
    """Base of every wire structure: camelCase on the wire, absent fields omitted."""


class Annotations(Wire, frozen=True):
    """Hints to the client about how to use or show an object."""

    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = None


class Icon(Wire, frozen=True):
    """An image that a client may show beside a tool, prompt, resource or implementation."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


class Implementation(Wire, frozen=True):
    """Name and version of an MCP implementation (``clientInfo`` / ``serverInfo``)."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: list[Icon] | None = None


class TextContent(Wire, frozen=True, tag_field="type", tag="text"):
    """Plain text."""

    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ImageContent(Wire, frozen=True, tag_field="type", tag="image"):
    """An image, base64-encoded in ``data``."""

    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class AudioContent(Wire, frozen=True, tag_field="type", tag="audio"):
    """Audio, base64-encoded in ``data`` (since 2025-03-26)."""

    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ResourceContents(Wire, frozen=True):
    """The contents of a resource: ``text`` for text, ``blob`` (base64) for binary data.

    The schema has two types here (``TextResourceContents`` and ``BlobResourceContents``) that differ
    only in which of the two fields is present; one struct with both optional decodes either.
    """

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class EmbeddedResource(Wire, frozen=True, tag_field="type", tag="resource"):
    """A resource's contents placed inline in a message or result."""

    resource: ResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ResourceLink(Wire, frozen=True, tag_field="type", tag="resource_link"):
    """A pointer to a resource the client may read (since 2025-06-18)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: list[Icon] | None = None
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


ContentBlock: TypeAlias = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource

#: The classes that make up :data:`ContentBlock`, for ``isinstance`` checks.
CONTENT_TYPES: tuple[type[Wire], ...] = (
    TextContent,
    ImageContent,
    AudioContent,
    ResourceLink,
    EmbeddedResource,
)


class ToolAnnotations(Wire, frozen=True):
    """Hints about a tool's behaviour. Clients must treat them as untrusted."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class Tool(Wire, frozen=True):
    """A tool as ``tools/list`` describes it."""

    name: str
    input_schema: dict[str, Any]
    title: str | None = None
    description: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] | None = None
    execution: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class CallToolResult(Wire, frozen=True):
    """The outcome of ``tools/call``.

    ``is_error`` marks a tool execution error: the tool ran (or its arguments were rejected) and the
    model should see what went wrong. Protocol errors are JSON-RPC errors instead. An omitted
    ``isError`` reads as ``False`` (and ``False`` is left off the wire).
    """

    content: list[ContentBlock] = msgspec.field(default_factory=list)
    structured_content: Any | None = None
    is_error: bool = False
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class Resource(Wire, frozen=True):
    """A resource as ``resources/list`` describes it."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ResourceTemplate(Wire, frozen=True):
    """A family of resources named by an RFC 6570 URI template (``resources/templates/list``)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class PromptArgument(Wire, frozen=True):
    """One argument a prompt takes. Arguments travel as strings."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


class Prompt(Wire, frozen=True):
    """A prompt template as ``prompts/list`` describes it."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class PromptMessage(Wire, frozen=True):
    """One message of a prompt: who says it, and what."""

    role: Role
    content: ContentBlock


class GetPromptResult(Wire, frozen=True):
    """The outcome of ``prompts/get``."""

    messages: list[PromptMessage]
    description: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ReadResourceResult(Wire, frozen=True):
    """The outcome of ``resources/read``."""

    contents: list[ResourceContents]
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class Completion(Wire, frozen=True):
    """Suggested values for an argument (``completion/complete``): at most 100 per answer."""

    values: list[str]
    total: int | None = None
    has_more: bool = False


class ElicitResult(Wire, Generic[T], frozen=True):
    """The user's answer to an elicitation: ``accept`` (with ``content``), ``decline`` or ``cancel``.

    ``content`` is what the user filled in, ``None`` unless accepted: a dict on the wire and for a
    form asked with a schema dict, an instance of the type for ``ctx.elicit(message, Type)``::

        answer = await ctx.elicit("Book a table?", Booking)   # ElicitResult[Booking]
        if answer.action == "accept" and answer.content is not None:
            guests = answer.content.guests
    """

    action: Literal["accept", "decline", "cancel"]
    content: T | None = None

    @property
    def accepted(self) -> bool:
        """Whether the user accepted (then ``content`` holds the answer)."""
        return self.action == "accept"


class SamplingMessage(Wire, frozen=True):
    """One message of a sampling conversation."""

    role: Role
    content: Any  # a content block, or a list of them (tool use and tool results, 2025-11-25+)


class CreateMessageResult(Wire, frozen=True):
    """What the client's model said (``sampling/createMessage``)."""

    role: Role
    content: Any
    model: str
    stop_reason: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class Root(Wire, frozen=True):
    """A directory or file the client lets the server work in (``roots/list``)."""

    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


def supports_ui(client_capabilities: dict[str, Any]) -> bool:
    """Whether client capabilities declare MCP Apps HTML views (``extensions`` holding
    ``io.modelcontextprotocol/ui`` with ``text/html;profile=mcp-app`` among its ``mimeTypes``).

    ::

        >>> supports_ui({"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}})
        True
        >>> supports_ui({"extensions": {UI_EXTENSION: {}}}), supports_ui({})
        (False, False)
    """
    extensions = client_capabilities.get("extensions")
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, dict) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, dict) else None
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types
