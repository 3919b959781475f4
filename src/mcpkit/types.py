"""Typed wire structures shared by servers and clients.

Each class is a ``msgspec.Struct`` whose field names are the Pythonic spelling of the wire names
(``mime_type`` travels as ``mimeType``). Optional fields default to ``UNSET`` and are left out of the
wire form, so "absent" and "null" stay distinct, as the schema requires.

The structures are the union of every protocol revision mcpkit speaks; fields that a revision lacks
are removed for its clients by :mod:`mcpkit._compat` just before a result is sent.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
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
]

Role: TypeAlias = Literal["user", "assistant"]


class Wire(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True, frozen=True):
    """Base of every wire structure: camelCase on the wire, absent fields omitted."""


class Annotations(Wire, frozen=True):
    """Hints to the client about how to use or show an object."""

    audience: list[Role] | UnsetType = UNSET
    priority: float | UnsetType = UNSET
    last_modified: str | UnsetType = UNSET


class Icon(Wire, frozen=True):
    """An image that a client may show beside a tool, prompt, resource or implementation."""

    src: str
    mime_type: str | UnsetType = UNSET
    sizes: list[str] | UnsetType = UNSET
    theme: Literal["light", "dark"] | UnsetType = UNSET


class Implementation(Wire, frozen=True):
    """Name and version of an MCP implementation (``clientInfo`` / ``serverInfo``)."""

    name: str
    version: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    website_url: str | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET


class TextContent(Wire, frozen=True, tag_field="type", tag="text"):
    """Plain text."""

    text: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ImageContent(Wire, frozen=True, tag_field="type", tag="image"):
    """An image, base64-encoded in ``data``."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class AudioContent(Wire, frozen=True, tag_field="type", tag="audio"):
    """Audio, base64-encoded in ``data`` (since 2025-03-26)."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ResourceContents(Wire, frozen=True):
    """The contents of a resource: ``text`` for text, ``blob`` (base64) for binary data.

    The schema has two types here (``TextResourceContents`` and ``BlobResourceContents``) that differ
    only in which of the two fields is present; one struct with both optional decodes either.
    """

    uri: str
    mime_type: str | UnsetType = UNSET
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class EmbeddedResource(Wire, frozen=True, tag_field="type", tag="resource"):
    """A resource's contents placed inline in a message or result."""

    resource: ResourceContents
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ResourceLink(Wire, frozen=True, tag_field="type", tag="resource_link"):
    """A pointer to a resource the client may read (since 2025-06-18)."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


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

    title: str | UnsetType = UNSET
    read_only_hint: bool | UnsetType = UNSET
    destructive_hint: bool | UnsetType = UNSET
    idempotent_hint: bool | UnsetType = UNSET
    open_world_hint: bool | UnsetType = UNSET


class Tool(Wire, frozen=True):
    """A tool as ``tools/list`` describes it."""

    name: str
    input_schema: dict[str, Any]
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    output_schema: dict[str, Any] | UnsetType = UNSET
    annotations: ToolAnnotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    execution: dict[str, Any] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class CallToolResult(Wire, frozen=True):
    """The outcome of ``tools/call``.

    ``is_error`` marks a tool execution error: the tool ran (or its arguments were rejected) and the
    model should see what went wrong. Protocol errors are JSON-RPC errors instead. An omitted
    ``isError`` reads as ``False`` (and ``False`` is left off the wire).
    """

    content: list[ContentBlock] = msgspec.field(default_factory=list)
    structured_content: Any | UnsetType = UNSET
    is_error: bool = False
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class Resource(Wire, frozen=True):
    """A resource as ``resources/list`` describes it."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ResourceTemplate(Wire, frozen=True):
    """A family of resources named by an RFC 6570 URI template (``resources/templates/list``)."""

    uri_template: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class PromptArgument(Wire, frozen=True):
    """One argument a prompt takes. Arguments travel as strings."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    required: bool | UnsetType = UNSET


class Prompt(Wire, frozen=True):
    """A prompt template as ``prompts/list`` describes it."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    arguments: list[PromptArgument] | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class PromptMessage(Wire, frozen=True):
    """One message of a prompt: who says it, and what."""

    role: Role
    content: ContentBlock


class GetPromptResult(Wire, frozen=True):
    """The outcome of ``prompts/get``."""

    messages: list[PromptMessage]
    description: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ReadResourceResult(Wire, frozen=True):
    """The outcome of ``resources/read``."""

    contents: list[ResourceContents]
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class Completion(Wire, frozen=True):
    """Suggested values for an argument (``completion/complete``): at most 100 per answer."""

    values: list[str]
    total: int | UnsetType = UNSET
    has_more: bool | UnsetType = UNSET


class ElicitResult(Wire, frozen=True):
    """The user's answer to an elicitation: ``accept`` (with ``content``), ``decline`` or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | UnsetType = UNSET


class SamplingMessage(Wire, frozen=True):
    """One message of a sampling conversation."""

    role: Role
    content: Any  # a content block, or a list of them (tool use and tool results, 2025-11-25+)


class CreateMessageResult(Wire, frozen=True):
    """What the client's model said (``sampling/createMessage``)."""

    role: Role
    content: Any
    model: str
    stop_reason: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class Root(Wire, frozen=True):
    """A directory or file the client lets the server work in (``roots/list``)."""

    uri: str
    name: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")
