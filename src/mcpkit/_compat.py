"""Shaping results for the revision a client speaks.

Handlers are written once against the newest structures; these functions remove or translate what
an older revision lacks, just before the result is sent. A client of 2024-11-05 is never shown a
``resource_link`` block it cannot parse, nor a ``title`` its schema does not have.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from ._connection import Scope
from ._versions import has

__all__ = ["shape_call_result", "shape_listed", "shape_prompt_result", "shape_tool"]

# Tool fields and the feature that brought them.
_TOOL_FIELDS: Final = {
    "outputSchema": "structured_content",
    "title": "titles",
    "annotations": "tool_annotations",
    "icons": "icons",
    "execution": "tool_execution",
}


# Fields of listed resources, templates and prompts, likewise.
_LISTED_FIELDS: Final = {"title": "titles", "icons": "icons"}


def _without_newer_fields(item: dict[str, Any], fields: dict[str, str], scope: Scope) -> dict[str, Any]:
    drop = [key for key, feature in fields.items() if key in item and not scope.has(feature)]
    if not drop:
        return item  # the common case: nothing to copy
    return {key: value for key, value in item.items() if key not in drop}


def shape_tool(tool: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """A ``tools/list`` entry as *scope*'s revision defines ``Tool``."""
    return _without_newer_fields(tool, _TOOL_FIELDS, scope)


def _knows_every_block(scope: Scope) -> bool:
    return _knows_every_block_of(scope.version)


@functools.lru_cache(maxsize=64)
def _knows_every_block_of(version: str) -> bool:
    # Asked for every tools/call result: once per revision, then one cached lookup.
    return has(version, "resource_link") and has(version, "audio_content")


def shape_call_result(result: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """A ``tools/call`` result as *scope*'s revision defines ``CallToolResult``."""
    if _knows_every_block(scope):
        return result
    shaped = dict(result)
    if not scope.has("structured_content"):
        shaped.pop("structuredContent", None)
    shaped["content"] = [_shape_block(block, scope) for block in result.get("content", [])]
    return shaped


def _shape_block(block: dict[str, Any], scope: Scope) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "resource_link" and not scope.has("resource_link"):
        # Older clients know no links; tell the model where the resource is in words.
        name = block.get("title") or block.get("name", "")
        return {"type": "text", "text": f"Resource: {name} <{block.get('uri', '')}>"}
    if kind == "audio" and not scope.has("audio_content"):
        return {"type": "text", "text": f"[audio content ({block.get('mimeType', 'unknown type')}) omitted]"}
    return block


def shape_listed(item: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """A listed resource, template or prompt as *scope*'s revision defines it (titles, icons)."""
    return _without_newer_fields(item, _LISTED_FIELDS, scope)


def shape_prompt_result(result: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """A ``prompts/get`` result whose message contents the revision can parse."""
    if _knows_every_block(scope):
        return result
    messages = [{**m, "content": _shape_block(m["content"], scope)} for m in result.get("messages", [])]
    return {**result, "messages": messages}
