"""Typed elicitation forms: what a class becomes as a ``requestedSchema``, what is refused (naming the
field), how answers are converted, and that mypy infers ``ElicitResult[Type]`` from ``ctx.elicit``.

End to end over stdio and HTTP in both eras: ``tests/e2e/test_elicit_e2e.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import msgspec
import pydantic
import pytest

from mcpkit import (
    Client,
    Context,
    ElicitationContentError,
    ElicitResult,
    Server,
    Titles,
    ToolError,
    elicitation_form,
)
from mcpkit.transports.memory import memory_pair
from tests.conftest import ROOT, requires_spec


class Size(enum.Enum):
    SMALL = "s"
    LARGE = "l"


@dataclasses.dataclass
class Order:
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=40, description="Your name")]
    count: Annotated[int, msgspec.Meta(ge=1, le=9)]
    price: float
    when: datetime.datetime
    size: Size = Size.SMALL
    gift: bool = False
    note: str | None = None
    extras: list[Literal["bag", "card"]] = dataclasses.field(default_factory=list)


class Person(TypedDict):
    name: str
    age: int


class Point(msgspec.Struct):
    x: float
    y: float = 0.0


class Signup(pydantic.BaseModel):
    email: pydantic.EmailStr
    website: pydantic.AnyUrl | None = None
    age: int = pydantic.Field(18, ge=0, le=130, description="Age in years")


def test_a_dataclass_becomes_a_flat_form() -> None:
    form = elicitation_form(Order)
    assert form.schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your name", "minLength": 1, "maxLength": 40},
            "count": {"type": "integer", "minimum": 1, "maximum": 9},
            "price": {"type": "number"},
            "when": {"type": "string", "format": "date-time"},
            "size": {"type": "string", "enum": ["s", "l"], "default": "s"},  # declared order, not sorted
            "gift": {"type": "boolean", "default": False},
            "note": {"type": "string"},
            "extras": {"type": "array", "items": {"type": "string", "enum": ["bag", "card"]}},
        },
        "required": ["name", "count", "price", "when"],
    }
    assert form.multi_select == ("extras",)
    assert elicitation_form(Order) is form  # built once


def test_answers_become_the_type() -> None:
    order = elicitation_form(Order).convert(
        {"name": "Ada", "count": 2, "price": 3.5, "when": "2026-01-02T03:04:05Z", "size": "l"}
    )
    assert order == Order(
        name="Ada",
        count=2,
        price=3.5,
        when=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
        size=Size.LARGE,
    )
    assert elicitation_form(Person).convert({"name": "Bo", "age": 3}) == {"name": "Bo", "age": 3}
    assert elicitation_form(Point).convert({"x": 1}) == Point(1.0, 0.0)
    signup = elicitation_form(Signup).convert({"email": "a@example.com"})
    assert isinstance(signup, Signup) and signup.age == 18 and signup.website is None


def test_pydantic_form() -> None:
    assert elicitation_form(Signup).schema == {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "website": {"type": "string", "format": "uri", "minLength": 1},
            "age": {
                "type": "integer",
                "default": 18,
                "minimum": 0,
                "maximum": 130,
                "description": "Age in years",
            },
        },
        "required": ["email"],
    }


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ({"name": "Ada", "count": 0, "price": 1, "when": "2026-01-02T00:00:00Z"}, "count"),
        ({"name": "Ada", "count": "2", "price": 1, "when": "2026-01-02T00:00:00Z"}, "count"),
        ({"name": "Ada", "count": 1, "price": 1, "when": "yesterday"}, "when"),
        ({"name": "Ada", "count": 1, "price": 1, "when": "2026-01-02T00:00:00Z", "size": "m"}, "size"),
        ({"count": 1, "price": 1, "when": "2026-01-02T00:00:00Z"}, "name"),
    ],
)
def test_content_that_does_not_fit_names_the_field(content: dict[str, Any], field: str) -> None:
    with pytest.raises(ElicitationContentError, match=field) as caught:
        elicitation_form(Order).convert(content)
    assert isinstance(caught.value, ToolError)  # uncaught in a tool: isError with this message


def test_pydantic_content_that_does_not_fit() -> None:
    with pytest.raises(ElicitationContentError, match="email"):
        elicitation_form(Signup).convert({"email": "nope"})
    with pytest.raises(ElicitationContentError, match="age"):
        elicitation_form(Signup).convert({"email": "a@example.com", "age": 200})


@dataclasses.dataclass
class Nested:
    point: Point


@dataclasses.dataclass
class Union_:
    value: int | str


@dataclasses.dataclass
class Strict:
    value: Annotated[int, msgspec.Meta(gt=0)]


@dataclasses.dataclass
class Patterned:
    code: Annotated[str, msgspec.Meta(pattern="^[A-Z]+$")]


@dataclasses.dataclass
class Numbers:
    choice: Literal[1, 2]


@dataclasses.dataclass
class Listed:
    tags: list[str]


@dataclasses.dataclass
class Timed:
    at: datetime.time


@pytest.mark.parametrize(
    ("tp", "message"),
    [
        (
            Nested,
            "Nested: field 'point': elicitation takes strings, numbers, booleans and choices, not object",
        ),
        (
            Union_,
            "Union_: field 'value': elicitation takes strings, numbers, booleans and choices, not anyOf",
        ),
        (Strict, "Strict: field 'value': elicitation has no exclusiveMinimum"),
        (Patterned, "Patterned: field 'code': elicitation has no pattern"),
        (Numbers, "Numbers: field 'choice': a choice must be between strings"),
        (Listed, "Listed: field 'tags': a list must be a multiple choice between strings"),
        (Timed, "Timed: field 'at': elicitation has no format 'time'"),
        (
            int,
            "elicit takes a dataclass, TypedDict, msgspec Struct or pydantic model (or a schema dict), not int",
        ),
    ],
)
def test_a_type_outside_the_subset_is_refused_naming_the_field(tp: Any, message: str) -> None:
    with pytest.raises(TypeError) as caught:
        elicitation_form(tp)
    assert str(caught.value) == message


def test_older_revisions() -> None:
    form = elicitation_form(Signup)
    old = form.requested_schema("2025-06-18")
    assert "default" not in old["properties"]["age"]  # 2025-06-18 has defaults on booleans only
    assert form.requested_schema("2025-11-25") == form.schema
    assert "default" in form.schema["properties"]["age"]  # the form itself is left alone
    with pytest.raises(
        TypeError, match="'extras' is a multiple choice, which elicitation has only from 2025-11-25"
    ):
        elicitation_form(Order).requested_schema("2025-06-18")


@dataclasses.dataclass
class Titled:
    size: Annotated[Literal["s", "l"], Titles(s="Small", l="Large")] = "s"
    extras: Annotated[list[Literal["bag", "card"]], Titles({"bag": "A bag", "card": "A card"})] = (
        dataclasses.field(default_factory=list)
    )


class TitledModel(pydantic.BaseModel):
    size: Annotated[Literal["s", "l"], Titles(s="Small", l="Large")]


def test_titled_choices() -> None:
    form = elicitation_form(Titled)
    assert form.schema["properties"] == {
        "size": {
            "type": "string",
            "default": "s",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],  # as given
        },
        "extras": {
            "type": "array",
            "items": {"anyOf": [{"const": "bag", "title": "A bag"}, {"const": "card", "title": "A card"}]},
        },
    }
    assert form.convert({"size": "l", "extras": ["card"]}) == Titled("l", ["card"])
    model = elicitation_form(TitledModel)
    assert model.schema["properties"]["size"]["oneOf"][1] == {"const": "l", "title": "Large"}
    # 2025-06-18 has titles as enumNames beside enum.
    assert model.requested_schema("2025-06-18")["properties"]["size"] == {
        "type": "string",
        "enum": ["s", "l"],
        "enumNames": ["Small", "Large"],
    }


@dataclasses.dataclass
class Untitled:
    size: Annotated[Literal["s", "l"], Titles(s="Small")]


@dataclasses.dataclass
class NotAChoice:
    n: Annotated[int, Titles(s="Small")]


def test_titles_must_fit_the_choices() -> None:
    with pytest.raises(TypeError, match=r"Untitled: field 'size': Titles must label every choice"):
        elicitation_form(Untitled)
    with pytest.raises(TypeError, match=r"NotAChoice: field 'n': Titles label choices"):
        elicitation_form(NotAChoice)


@requires_spec
@pytest.mark.parametrize("tp", [Order, Person, Point, Signup, Titled])
def test_forms_fit_the_spec_schema(tp: Any) -> None:
    """Each field is a PrimitiveSchemaDefinition of 2025-11-25 (checked key by key, as the schema has)."""
    schema = json.loads((ROOT.parent / "shared" / "spec" / "2025-11-25" / "schema.json").read_text())
    defs = schema["$defs"]
    shapes = {
        name: set(defs[name]["properties"])
        for name in (
            "StringSchema",
            "NumberSchema",
            "BooleanSchema",
            "UntitledSingleSelectEnumSchema",
            "UntitledMultiSelectEnumSchema",
            "TitledSingleSelectEnumSchema",
            "TitledMultiSelectEnumSchema",
        )
    }
    for field, spec in elicitation_form(tp).schema["properties"].items():
        assert any(set(spec) <= keys for keys in shapes.values()), (field, spec)


def test_elicit_result_keeps_the_dict_form() -> None:
    raw = {"action": "accept", "content": {"ok": True}}
    result = msgspec.convert(raw, ElicitResult)
    assert result.accepted and result.content == {"ok": True}
    assert msgspec.to_builtins(ElicitResult(action="decline")) == {"action": "decline"}


def test_mypy_infers_the_answer_type(tmp_path: Path) -> None:
    source = textwrap.dedent("""
        import dataclasses
        from typing import Any
        from mcpkit import Context

        @dataclasses.dataclass
        class Booking:
            guests: int

        async def tool(ctx: Context) -> None:
            typed = await ctx.elicit("?", Booking)
            reveal_type(typed)
            reveal_type(typed.content)
            untyped = await ctx.elicit("?", {"type": "object", "properties": {}})
            reveal_type(untyped.content)
    """)
    path = tmp_path / "typed_elicit.py"
    path.write_text(source)
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    ).stdout
    revealed = [line.split("Revealed type is ")[1] for line in out.splitlines() if "Revealed type" in line]
    assert revealed == [
        '"mcpkit.types.ElicitResult[typed_elicit.Booking]"',
        '"typed_elicit.Booking | None"',
        '"dict[str, Any] | None"',
    ], out


def test_a_bad_form_fails_the_call_before_asking() -> None:
    """In a tool, the TypeError comes before the client is asked anything (it names the field)."""
    server = Server("bad-forms")
    asked: list[dict[str, Any]] = []

    @server.tool
    async def nested(ctx: Context) -> str:
        await ctx.elicit("?", Nested)
        return "asked"

    @server.tool
    async def generic(ctx: Context) -> str:
        await ctx.elicit("?", list[int])  # type: ignore[call-overload]
        return "asked"

    async def user(params: dict[str, Any]) -> ElicitResult[Any]:
        asked.append(params)
        return ElicitResult(action="decline")

    async def main() -> list[str]:
        ours, theirs = memory_pair()
        serving = asyncio.ensure_future(server.serve(theirs))
        texts = []
        async with Client(ours, elicitation=user) as client:
            for name in ("nested", "generic"):
                result = await client.call_tool(name, {})
                assert result.is_error is True
                texts.append(str(result.content[0].text))  # type: ignore[union-attr]
        await serving
        return texts

    nested_text, generic_text = asyncio.run(main())
    assert "field 'point'" in nested_text
    assert "not list" in generic_text
    assert asked == []
