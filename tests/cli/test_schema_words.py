"""``key=value`` words read against a schema (mcpkit._schema_words), driven directly: the cases the
end-to-end runs in test_typed.py and test_host_shell.py do not reach."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit._schema_words import WordsError, arguments_from_words, missing

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["a.b"],
    "properties": {
        "a.b": {"type": "integer"},  # a property whose name has a dot is taken whole
        "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
        "free": {"type": "object"},
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        "either": {
            "anyOf": [{"type": "object", "properties": {"x": {"type": "integer"}}}, {"type": "string"}]
        },
    },
}


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["a.b=1"], {"a.b": 1}),
        (["a.b=1", "labels.red=3"], {"a.b": 1, "labels": {"red": 3}}),
        (["a.b=1", "free.any.depth=x"], {"a.b": 1, "free": {"any": {"depth": "x"}}}),
        (["a.b=1", "grid.0.0=1", "grid.0.1=2", "grid.1=[3]"], {"a.b": 1, "grid": [[1, 2], [3]]}),
        (["a.b=1", "either.x=4"], {"a.b": 1, "either": {"x": 4}}),
        (["a.b=1", "either=plain"], {"a.b": 1, "either": "plain"}),
    ],
)
def test_words(words: list[str], expected: dict[str, Any]) -> None:
    assert arguments_from_words(words, SCHEMA, "tool t") == expected


def test_words_fill_in_a_base_object() -> None:
    base = {"a.b": 1, "labels": {"red": 1}}
    assert arguments_from_words(["labels.blue=2"], SCHEMA, "tool t", base) == {
        "a.b": 1,
        "labels": {"red": 1, "blue": 2},
    }
    assert base == {"a.b": 1, "labels": {"red": 1}}  # the caller's object is left as it was


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["labels.red=warm"], "argument labels.red='warm': labels.red must be an integer (as JSON)"),
        (["a.b=1", "a.b=2"], "argument a.b is given twice"),
        (["grid.2=[1]"], "argument grid.2: set grid.0 first"),
        (["either=plain", "either.x=2"], 'argument either.x: either is already "plain"'),
    ],
)
def test_bad_words(words: list[str], message: str) -> None:
    with pytest.raises(WordsError) as caught:
        arguments_from_words(words, SCHEMA, "tool t")
    assert str(caught.value) == message


def test_a_tool_without_arguments_takes_none() -> None:
    with pytest.raises(WordsError, match="no argument 'x' on tool t; it has none"):
        arguments_from_words(["x=1"], {"type": "object", "properties": {}}, "tool t")


def test_missing_names_nested_and_array_fields() -> None:
    schema = {
        "type": "object",
        "required": ["lines"],
        "properties": {
            "lines": {
                "type": "array",
                "items": {"type": "object", "required": ["sku"], "properties": {"sku": {"type": "string"}}},
            }
        },
    }
    assert missing({}, schema) == ["lines"]
    assert missing({"lines": [{"sku": "a"}, {}]}, schema) == ["lines.1.sku"]
