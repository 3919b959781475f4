"""The typing of ``key=value`` words by a schema, and the elicitation form's parsing, driven directly
(the end-to-end runs are in test_call.py and test_terminal.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit.cli._arguments import arguments_from_words, suggest, typed_value
from mcpkit.cli._elicit import Form
from mcpkit.cli._exits import USAGE, CliError

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "loud": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object"},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "either": {"type": ["integer", "string"]},
        "mode": {"enum": ["fast", "slow"]},
        "free": {},
    },
    "required": ["name"],
}


@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("name=42", "42"),
        ("name=true", "true"),
        ("name=", ""),
        ("name=a=b", "a=b"),
        ("count=3", 3),
        ("ratio=3", 3),
        ("ratio=0.5", 0.5),
        ("loud=yes", True),
        ("loud=false", False),
        ('tags=["a", "b"]', ["a", "b"]),
        ('options={"x": 1}', {"x": 1}),
        ("maybe=null", None),
        ("maybe=7", 7),
        ("either=7", 7),
        ("either=seven", "seven"),
        ("mode=fast", "fast"),
        ("free=[1]", [1]),
        ("free=plain words", "plain words"),
        ("name:=42", 42),
    ],
)
def test_words_are_typed_by_the_schema(word: str, value: Any) -> None:
    words = [word] if word.startswith("name") else ["name=n", word]
    key = word.split("=")[0].rstrip(":")
    assert arguments_from_words(words, SCHEMA, "tool t")[key] == value


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["name=n", "count=3.5"], "argument count='3.5': count must be an integer (as JSON)"),
        (["name=n", "loud=maybe"], "argument loud='maybe': loud must be a boolean (as JSON)"),
        (["name=n", "tags=a,b"], "argument tags='a,b': tags must be an array (as JSON)"),
        (["name=n", "name=m"], "argument name is given twice"),
        (["count=1"], "tool t needs name: add name=..."),
        (["name=n", "cuont=1"], "no argument 'cuont' on tool t; did you mean count?"),
        (["[1]"], "argument '[1]' is not key=value (or give tool t one JSON object: '{\"key\": ...}')"),
        (
            ["name=n", "free:=oops"],
            "argument free:='oops' is not valid JSON: Expecting value: line 1 column 1 (char 0)",
        ),
    ],
)
def test_bad_words_name_the_field(words: list[str], message: str) -> None:
    with pytest.raises(CliError) as raised:
        arguments_from_words(words, SCHEMA, "tool t")
    assert (raised.value.message, raised.value.code) == (message, USAGE)


def test_an_open_schema_takes_unknown_names_and_no_schema_takes_strings() -> None:
    open_schema = {"type": "object", "properties": {}, "additionalProperties": True}
    assert arguments_from_words(["n=1"], open_schema, "tool t") == {"n": 1}
    assert arguments_from_words(["n=1"], None, "prompt p") == {"n": "1"}
    assert typed_value("x", "1", None) == 1


def test_suggestions() -> None:
    assert suggest("get_wether", ["get_weather", "forecast"], "tool", "w") == (
        "no tool 'get_wether' on w; did you mean get_weather?"
    )
    assert suggest("zzz", [f"t{n}" for n in range(25)], "tool", "w").endswith("t19 and 5 more")
    assert suggest("zzz", [], "prompt", "w") == "no prompt 'zzz' on w; it has none"


FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "default": "Ada"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number"},
        "ok": {"type": "boolean", "title": "Agree"},
        "color": {
            "type": "string",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
        },
        "legacy": {"type": "string", "enum": ["a1", "a2"], "enumNames": ["First", "Second"]},
        "many": {"type": "array", "minItems": 1, "items": {"enum": ["x", "y", "z"]}},
        "note": {"type": "string"},
    },
    "required": ["age", "ok"],
}


def _run_form(answers: list[str | None], schema: Any = FORM) -> tuple[dict[str, Any], list[str]]:
    said: list[str] = []
    feed: Iterator[str | None] = iter(answers)

    async def ask(prompt: str) -> str | None:
        said.append(prompt)
        return next(feed)

    result = asyncio.run(Form(ask, said.append).run("Tell me", schema))
    return result, said


def test_the_form_checks_each_field_and_takes_defaults() -> None:
    answers = ["", "x", "", "-1", "200", "41", "1.5", "perhaps", "yes", "Green", "2", "z, x", ""]
    result, said = _run_form(answers)
    assert result == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "age": 41,
            "score": 1.5,
            "ok": True,
            "color": "g",
            "legacy": "a2",
            "many": ["z", "x"],
        },
    }
    assert "    at least 2 characters" in said
    assert "    an answer is required" not in said  # age had answers, only wrong ones
    assert "    at least 0" in said and "    at most 150" in said
    assert "    answer yes or no" in said
    assert any(p.startswith("  Agree (yes/no) (required)") for p in said)
    assert any("1) Red [r], 2) Green [g]" in p for p in said)


def test_the_form_declines_and_cancels() -> None:
    assert _run_form(["n"])[0] == {"action": "decline"}
    assert _run_form(["", None])[0] == {"action": "cancel"}
    empty, _ = _run_form([""], {"type": "object", "properties": {}})
    assert empty == {"action": "accept", "content": {}}


def test_a_json_object_then_words_that_override_it() -> None:
    words = ['{"name": "n", "count": 1, "tags": ["a"]}', "count=2", "loud=yes"]
    assert arguments_from_words(words, SCHEMA, "tool t") == {
        "name": "n",
        "count": 2,
        "tags": ["a"],
        "loud": True,
    }
    with pytest.raises(CliError, match="the arguments are not valid JSON"):
        arguments_from_words(["{name: n}", "count=2"], SCHEMA, "tool t")
