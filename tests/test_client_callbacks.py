"""Answering the server's requests through the user's callbacks (``mcpkit.client.callbacks``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import MethodNotFound
from mcpkit.client.callbacks import answer, answer_inputs, apply_defaults, implied_capabilities
from mcpkit.tasks import TASKS_EXTENSION
from mcpkit.types import Root


async def accept(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def test_capabilities_follow_the_callbacks_given() -> None:
    bare = implied_capabilities(sampling=None, elicitation=None, roots=None)
    assert bare == {"extensions": {TASKS_EXTENSION: {}}}
    full = implied_capabilities(sampling=accept, elicitation=accept, roots=[])
    assert full.keys() == {"extensions", "sampling", "elicitation", "roots"}
    assert full["roots"] == {"listChanged": True}


def test_each_method_goes_to_its_callback_and_a_missing_one_is_method_not_found() -> None:
    async def roots() -> list[Root]:
        return [Root(uri="file:///work", name="work")]

    async def main() -> None:
        listed = await answer("roots/list", {}, sampling=None, elicitation=None, roots=roots)
        assert listed == {"roots": [{"uri": "file:///work", "name": "work"}]}
        fixed = await answer("roots/list", {}, sampling=None, elicitation=None, roots=[Root(uri="file:///a")])
        assert fixed == {"roots": [{"uri": "file:///a"}]}
        for method in ("sampling/createMessage", "elicitation/create", "roots/list", "unknown/thing"):
            with pytest.raises(MethodNotFound, match="no callback"):
                await answer(method, {}, sampling=None, elicitation=None, roots=None)

    asyncio.run(main())


def test_an_accepted_form_takes_the_schema_defaults_for_untouched_fields() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "anon"},
            "size": {"type": "integer", "default": 3},
            "colour": {"type": "string"},
        },
    }

    async def main() -> None:
        result = await answer(
            "elicitation/create", {"requestedSchema": schema}, sampling=None, elicitation=accept, roots=None
        )
        assert result == {"action": "accept", "content": {"name": "Ada", "size": 3}}

    asyncio.run(main())
    declined: dict[str, Any] = {"action": "decline"}
    apply_defaults(declined, schema)
    assert declined == {"action": "decline"}
    empty: dict[str, Any] = {"action": "accept"}
    apply_defaults(empty, schema)
    assert empty == {"action": "accept", "content": {"name": "anon", "size": 3}}


def test_input_requests_are_answered_once_each() -> None:
    asked: list[str] = []

    async def one(method: Any, params: dict[str, Any]) -> Any:
        asked.append(method)
        return {"for": method}

    async def main() -> None:
        answered: set[str] = set()
        requests = {"a": {"method": "elicitation/create", "params": {}}, "b": {"method": "roots/list"}}
        first = await answer_inputs(requests, answered, one)
        assert first == {"a": {"for": "elicitation/create"}, "b": {"for": "roots/list"}}
        assert await answer_inputs(requests, answered, one) == {}
        assert await answer_inputs(None, answered, one) == {}
        assert asked == ["elicitation/create", "roots/list"] and answered == {"a", "b"}

    asyncio.run(main())
