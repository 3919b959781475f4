"""Result types read as plain Python values (``None``/``False`` when absent), and the wire is unchanged.

Every optional field of every struct in :mod:`mcpkit.types` is checked: absent on decode reads as its
plain default (never ``msgspec.UNSET``), and a struct left at its defaults encodes to the required
fields only. Then a real server over stdio: what a client reads from listings and call results.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Any

import msgspec
import pytest

from mcpkit import Client, types
from mcpkit.types import (
    CallToolResult,
    Completion,
    ElicitResult,
    Prompt,
    PromptArgument,
    ReadResourceResult,
    Resource,
    Tool,
)
from tests.conftest import ROOT

STRUCTS = [
    cls
    for _, cls in inspect.getmembers(types, inspect.isclass)
    if issubclass(cls, types.Wire) and cls is not types.Wire
]

# The least each struct needs on the wire (its required fields), keyed by class name.
MINIMAL: dict[str, dict[str, Any]] = {
    "Annotations": {},
    "Icon": {"src": "https://example.com/i.png"},
    "Implementation": {"name": "n", "version": "1"},
    "TextContent": {"type": "text", "text": "t"},
    "ImageContent": {"type": "image", "data": "", "mimeType": "image/png"},
    "AudioContent": {"type": "audio", "data": "", "mimeType": "audio/wav"},
    "ResourceContents": {"uri": "file:///x"},
    "EmbeddedResource": {"type": "resource", "resource": {"uri": "file:///x"}},
    "ResourceLink": {"type": "resource_link", "uri": "file:///x", "name": "x"},
    "ToolAnnotations": {},
    "Tool": {"name": "t", "inputSchema": {"type": "object"}},
    "CallToolResult": {},
    "Resource": {"uri": "file:///x", "name": "x"},
    "ResourceTemplate": {"uriTemplate": "file:///{x}", "name": "x"},
    "PromptArgument": {"name": "a"},
    "Prompt": {"name": "p"},
    "PromptMessage": {"role": "user", "content": {"type": "text", "text": "t"}},
    "GetPromptResult": {"messages": []},
    "ReadResourceResult": {"contents": []},
    "Completion": {"values": []},
    "ElicitResult": {"action": "decline"},
    "SamplingMessage": {"role": "user", "content": {"type": "text", "text": "t"}},
    "CreateMessageResult": {"role": "assistant", "content": {"type": "text", "text": "t"}, "model": "m"},
    "Root": {"uri": "file:///x"},
}


def test_every_struct_is_covered() -> None:
    assert {cls.__name__ for cls in STRUCTS} == set(MINIMAL)


@pytest.mark.parametrize("cls", STRUCTS, ids=lambda c: c.__name__)
def test_absent_fields_are_plain_and_stay_off_the_wire(cls: type[msgspec.Struct]) -> None:
    wire = MINIMAL[cls.__name__]
    decoded = msgspec.convert(wire, cls)
    for field in msgspec.structs.fields(cls):
        value = getattr(decoded, field.name)
        assert value is not msgspec.UNSET, f"{cls.__name__}.{field.name} reads as UNSET"
    # Nothing but the required fields goes back out (the tag of a content block is one of them).
    assert msgspec.to_builtins(decoded) == wire


def test_false_flags_and_none_fields() -> None:
    assert CallToolResult().is_error is False
    assert PromptArgument(name="a").required is False
    assert Completion(values=[]).has_more is False
    tool = Tool(name="t", input_schema={"type": "object"})
    assert (tool.title, tool.description, tool.annotations, tool.output_schema, tool.meta) == (None,) * 5
    assert ElicitResult(action="decline").content is None
    assert Resource(uri="u", name="n").mime_type is None
    # A set flag is sent; an explicit null from a lenient peer reads like absence.
    assert msgspec.to_builtins(CallToolResult(is_error=True)) == {"isError": True}
    assert msgspec.convert({"name": "t", "description": None}, Prompt).description is None


def test_listings_and_results_over_stdio() -> None:
    asyncio.run(_listings_and_results())


async def _listings_and_results() -> None:
    async with Client([sys.executable, str(ROOT / "examples" / "notes.py")]) as client:
        for tool in await client.list_tools():
            assert tool.meta is None or isinstance(tool.meta, dict)
            assert tool.execution is None or isinstance(tool.execution, dict)
            assert tool.title is None or isinstance(tool.title, str)
        for prompt in await client.list_prompts():
            for argument in prompt.arguments or []:
                assert isinstance(argument.required, bool)
        for resource in await client.list_resources():
            assert resource.size is None or isinstance(resource.size, int)
            read = await client.read_resource(resource.uri)
            assert isinstance(read, ReadResourceResult)
            assert all(c.meta is None and c.blob is None for c in read.contents)
        names = {tool.name for tool in await client.list_tools()}
        assert names


def test_prompt_arguments_still_say_required_false() -> None:
    """``required: false`` stays on the wire for optional prompt arguments, as before."""
    asyncio.run(_prompt_arguments())


async def _prompt_arguments() -> None:
    async with Client([sys.executable, str(ROOT / "examples" / "notes.py")]) as client:
        raw = await client.request("prompts/list", {})
        arguments = [a for p in raw["prompts"] for a in p.get("arguments", [])]
        assert arguments and all(isinstance(a["required"], bool) for a in arguments)
