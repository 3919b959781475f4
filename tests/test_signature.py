"""Typed functions -> tool schemas and argument validation (mcpkit._signature)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import subprocess
import sys
import uuid
from typing import Annotated, Any, Literal, TypedDict

import annotated_types as at
import msgspec
import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import Context, ImageContent, TextContent
from mcpkit._signature import ArgumentError, inspect_function
from mcpkit.types import CallToolResult, ContentBlock

jsonschema = pytest.importorskip("jsonschema")


def annotated(fn: Any, **annotations: Any) -> Any:
    """*fn* with real (not stringified) annotations, for types chosen by parametrize."""
    fn.__annotations__ = annotations
    return fn


def check_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Address:
    city: str
    zip_code: str | None = None


class Options(TypedDict, total=False):
    verbose: bool


class Point(msgspec.Struct):
    x: float
    y: float


class Person(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0, description="Age in years")


def test_builtin_types_defaults_and_required() -> None:
    def fn(
        a: int, b: float, c: str = "x", d: bool = False, e: int | None = None, f: list[int] | None = None
    ) -> None: ...

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    props = sig.input_schema["properties"]
    assert sig.input_schema["required"] == ["a", "b"]
    assert props["a"] == {"type": "integer"}
    assert props["b"] == {"type": "number"}
    assert props["c"] == {"type": "string", "default": "x"}
    assert props["e"]["default"] is None
    assert sig.bind({"a": 1, "b": 2}) == {"a": 1, "b": 2.0, "c": "x", "d": False, "e": None, "f": None}


def test_no_parameters_means_an_empty_object_schema() -> None:
    def fn() -> None: ...

    sig = inspect_function(fn)
    assert sig.input_schema == {"type": "object", "properties": {}}
    assert sig.bind(None) == {} and sig.bind({"ignored": 1}) == {}


def test_rich_types() -> None:
    def fn(
        color: Color,
        mode: Literal["fast", "slow"],
        where: Address,
        opts: Options,
        point: Point,
        when: datetime.datetime,
        day: datetime.date,
        ident: uuid.UUID,
        tags: tuple[str, ...] = (),
        unique: frozenset[int] = frozenset(),
    ) -> None: ...

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    assert set(sig.input_schema["$defs"]) >= {"Color", "Address", "Options", "Point"}
    assert sig.input_schema["properties"]["mode"] == {"enum": ["fast", "slow"]}
    assert sig.input_schema["properties"]["ident"]["format"] == "uuid"
    value = uuid.uuid4()
    bound = sig.bind(
        {
            "color": "red",
            "mode": "fast",
            "where": {"city": "Oslo"},
            "opts": {"verbose": True},
            "point": {"x": 1, "y": 2.5},
            "when": "2025-01-02T03:04:05Z",
            "day": "2025-01-02",
            "ident": str(value),
            "tags": ["a", "b"],
            "unique": [1, 1, 2],
        }
    )
    assert bound["color"] is Color.RED
    assert bound["where"] == Address("Oslo")
    assert bound["point"] == Point(1.0, 2.5)
    assert bound["when"] == datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    assert bound["day"] == datetime.date(2025, 1, 2)
    assert bound["ident"] == value
    assert bound["tags"] == ("a", "b") and bound["unique"] == frozenset({1, 2})


def test_descriptions_from_annotated_and_docstring() -> None:
    def fn(city: Annotated[str, "City name"], days: int, unit: str = "c") -> None:
        """Get the forecast.

        More words.

        Args:
            city: ignored, Annotated wins
            days: How many days,
                from today.
            unit (str): The unit.
        """

    sig = inspect_function(fn)
    props = sig.input_schema["properties"]
    assert props["city"]["description"] == "City name"
    assert props["days"]["description"] == "How many days, from today."
    assert props["unit"]["description"] == "The unit."
    assert sig.description == "Get the forecast.\n\nMore words."


@pytest.mark.parametrize(
    ("annotation", "keyword", "good", "bad"),
    [
        (Annotated[int, at.Ge(1)], "minimum", 1, 0),
        (Annotated[int, at.Gt(1)], "exclusiveMinimum", 2, 1),
        (Annotated[float, at.Le(1.5)], "maximum", 1.5, 2),
        (Annotated[int, at.Lt(10)], "exclusiveMaximum", 9, 10),
        (Annotated[int, at.MultipleOf(3)], "multipleOf", 6, 7),
        (Annotated[str, at.MinLen(2)], "minLength", "ab", "a"),
        (Annotated[str, at.MaxLen(2)], "maxLength", "ab", "abc"),
        (Annotated[list[int], at.MaxLen(1)], "maxItems", [1], [1, 2]),
        (Annotated[int, at.Interval(ge=0, le=5)], "maximum", 5, 6),
        (Annotated[int, msgspec.Meta(ge=0)], "minimum", 0, -1),
        (Annotated[int, pydantic.Field(ge=0)], "minimum", 0, -1),
    ],
)
def test_constraints_reach_the_schema_and_the_validator(
    annotation: Any, keyword: str, good: Any, bad: Any
) -> None:
    sig = inspect_function(annotated(lambda value: None, value=annotation))
    check_schema(sig.input_schema)
    assert keyword in sig.input_schema["properties"]["value"]
    assert sig.bind({"value": good}) == {"value": good}
    with pytest.raises(ArgumentError, match=r"\$\.value"):
        sig.bind({"value": bad})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "missing required field `a`"),
        ({"a": "1"}, "Expected `int`, got `str` - at `$.a`"),
        ({"a": 1.5}, "Expected `int`, got `float`"),
        ({"a": True}, "Expected `int`, got `bool`"),
        ({"a": 1, "where": {"zip_code": "x"}}, "missing required field `city` - at `$.where`"),
    ],
)
def test_bind_errors_name_the_field(arguments: dict[str, Any], message: str) -> None:
    def fn(a: int, where: Address | None = None) -> None: ...

    with pytest.raises(ArgumentError) as info:
        inspect_function(fn).bind(arguments)
    assert message in str(info.value)


def test_pydantic_models() -> None:
    def fn(person: Person, note: Annotated[str, "A note"] = "") -> Person:
        return person

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    assert "Person" in sig.input_schema["$defs"]
    assert sig.input_schema["properties"]["note"]["description"] == "A note"
    bound = sig.bind({"person": {"name": "Ada", "age": 36}})
    assert bound["person"] == Person(name="Ada", age=36)
    with pytest.raises(ArgumentError, match=r"\$\.person\.age"):
        sig.bind({"person": {"name": "Ada", "age": -1}})
    assert (
        sig.output_schema is not None
        and sig.output_schema["properties"]["age"]["description"] == "Age in years"
    )
    assert sig.wrapped_output is False
    assert sig.serialize_output(Person(name="Ada", age=36)) == {"name": "Ada", "age": 36}


@pytest.mark.parametrize(
    "annotation",
    [
        None,
        Any,
        TextContent,
        list[TextContent],
        list[ContentBlock],
        ImageContent | TextContent,
        CallToolResult,
    ],
)
def test_unstructured_outputs(annotation: Any) -> None:
    sig = inspect_function(annotated(lambda: None, **{"return": annotation}))
    assert sig.output_schema is None and sig.wrapped_output is False


def test_no_return_annotation_is_unstructured() -> None:
    def fn():  # type: ignore[no-untyped-def]
        return 1

    assert inspect_function(fn).output_schema is None


@pytest.mark.parametrize(
    ("annotation", "value", "structured"),
    [
        (int, 3, {"result": 3}),
        (str, "hi", {"result": "hi"}),
        (list[int], [1, 2], {"result": [1, 2]}),
        (Color, Color.RED, {"result": "red"}),
        (int | None, None, {"result": None}),
        (Address, Address("Oslo"), {"city": "Oslo", "zip_code": None}),
        (Options, {"verbose": True}, {"verbose": True}),
        (Point, Point(1, 2), {"x": 1, "y": 2}),
        (dict[str, int], {"a": 1}, {"a": 1}),
        (list[Address], [Address("a")], {"result": [{"city": "a", "zip_code": None}]}),
    ],
)
def test_structured_outputs(annotation: Any, value: Any, structured: Any) -> None:
    sig = inspect_function(annotated(lambda: None, **{"return": annotation}))
    assert sig.output_schema is not None
    check_schema(sig.output_schema)
    assert sig.wrapped_output == ("result" in structured and annotation not in (dict[str, int],))
    assert sig.serialize_output(value) == structured
    jsonschema.validate(structured, sig.output_schema)


def test_context_parameters_are_skipped() -> None:
    def fn(ctx: Context, a: int) -> None: ...

    sig = inspect_function(fn, skip_types=(Context,))
    assert sig.skipped == {"ctx": Context}
    assert list(sig.input_schema["properties"]) == ["a"]


@pytest.mark.parametrize("source", ["def fn(*args): ...", "def fn(**kw): ...", "def fn(a, /): ..."])
def test_unnameable_parameters_are_refused(source: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(TypeError):
        inspect_function(namespace["fn"])


def test_mutable_defaults_are_not_shared() -> None:
    def fn(items: list[int] = [1]) -> None:  # noqa: B006 - the point of the test
        ...

    sig = inspect_function(fn)
    first = sig.bind({})
    first["items"].append(2)
    assert sig.bind({}) == {"items": [1]}


def test_async_is_detected() -> None:
    async def fn() -> None: ...

    assert inspect_function(fn).is_async


def test_importing_does_not_import_pydantic() -> None:
    code = "import sys, mcpkit._signature; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def _fn_for_property(
    a: int, b: str, c: list[float], d: Address | None = None, e: Color = Color.BLUE
) -> None: ...


_SIG = inspect_function(_fn_for_property)
_argument_dicts = st.fixed_dictionaries(
    {
        "a": st.integers(min_value=-(2**63), max_value=2**63 - 1),
        "b": st.text(),
        "c": st.lists(st.floats(allow_nan=False, allow_infinity=False)),
    },
    optional={
        "d": st.none() | st.builds(dict, city=st.text()),
        "e": st.sampled_from(["red", "blue"]),
    },
)


@given(_argument_dicts)
def test_any_valid_arguments_bind_and_round_trip(arguments: dict[str, Any]) -> None:
    jsonschema.validate(arguments, _SIG.input_schema)
    bound = _SIG.bind(json.loads(json.dumps(arguments)))
    back = msgspec.to_builtins(bound)
    for key, value in arguments.items():
        if key == "d" and value is not None:
            assert back["d"]["city"] == value["city"]
        else:
            assert back[key] == value


@given(_argument_dicts, st.sampled_from(["a", "b", "c"]), st.sampled_from([None, {}, [], "x", 1.5]))
def test_wrong_types_are_always_refused(arguments: dict[str, Any], key: str, wrong: Any) -> None:
    if (key == "b" and isinstance(wrong, str)) or (key == "c" and wrong == []):
        return  # those are valid values
    arguments = {**arguments, key: wrong}
    with pytest.raises(ArgumentError, match=key):
        _SIG.bind(arguments)
