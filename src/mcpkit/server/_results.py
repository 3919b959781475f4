"""What a tool's return value becomes: a ``CallToolResult`` dict (content blocks, and
``structuredContent`` where the signature gives an output schema), and the tool error results."""

from __future__ import annotations

import base64
import dataclasses
import logging
from typing import Any, Final

import msgspec

from .._errors import ConnectionClosed
from .._signature import ToolSignature
from ..types import CONTENT_TYPES, CallToolResult

__all__ = ["error_result", "to_call_result", "to_content", "tool_failed", "without_output"]

logger = logging.getLogger("mcpkit.server")

_json_encode: Final = msgspec.json.Encoder().encode


def without_output(signature: ToolSignature) -> ToolSignature:
    return dataclasses.replace(signature, output_schema=None, wrapped_output=False)


def error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def tool_failed(name: str, exc: Exception, masked: bool) -> dict[str, Any]:
    """The tool error result answering the tool *name* that raised *exc* (logged here); *masked*:
    without the exception's type and message (``Server(mask_errors=True)``)."""
    if isinstance(exc, ConnectionClosed):
        # Mostly the client went away while the tool was sending to it: nothing is wrong
        # with the server, and the answer below will be dropped quietly.
        logger.info("tool %r stopped: %s", name, exc)
    else:
        # The traceback is for the server's operator; the peer gets one line (or less).
        logger.error("tool %r raised %s", name, type(exc).__name__, exc_info=exc)
    if masked:
        return error_result(f"Error executing tool {name}")
    return error_result(f"Error executing tool {name}: {type(exc).__name__}: {exc}")


def to_call_result(value: Any, signature: ToolSignature) -> dict[str, Any]:
    """A tool's return value as a ``CallToolResult`` dict."""
    if isinstance(value, CallToolResult):
        return msgspec.to_builtins(value)  # type: ignore[no-any-return]
    if signature.output_schema is None:
        return {"content": to_content(value)}
    structured = signature.serialize_output(value)
    # The structured value is the truth; the text block carries the same for clients that predate
    # structuredContent ("a tool that returns structured content SHOULD also return the serialized
    # JSON in a TextContent block").
    if isinstance(value, str):
        text = value
    else:
        text = _json_encode(structured.get("result") if signature.wrapped_output else structured).decode()
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


def to_content(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, CONTENT_TYPES):
        return [msgspec.to_builtins(value)]
    if isinstance(value, (list, tuple)) and any(isinstance(v, CONTENT_TYPES) for v in value):
        blocks: list[dict[str, Any]] = []
        for item in value:
            blocks.extend(to_content(item))
        return blocks
    if isinstance(value, bytes):
        return [{"type": "text", "text": base64.b64encode(value).decode()}]
    return [{"type": "text", "text": _json_encode(msgspec.to_builtins(value)).decode()}]
