"""Typed functions -> tool schemas and argument validation (mcpkit._signature)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import subprocess
import sys
import uuid
from typing import Annotated, Any, Literal, Optional, TypedDict

import annotated_types as at
import msgspec
import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import Context, ImageContent, TextContent
from mcpkit._signature import ArgumentError, inspect_function
from mcpkit._signature_types import to_json
from mcpkit.types import CallToolResult, ContentBlock

jsonschema = pytest.importorskip("jsonschema")
FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def annotated(fn: Any, **annotations: Any) -> Any:
    """*fn* with real (not stringified) annotations, for types chosen by parametrize."""
    fn.__annotations__ = annotations
    return fn


def check_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert "title" not in schema or schema["title"] != "__ToolArguments__"


def bind_error(sig: Any, arguments: Any) -> str:
    with pytest.raises(ArgumentError) as info:
        sig.bind(arguments)
    return str(info.value)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Address:
    city: str
    zip_code: str | None = None


@dataclasses.dataclass
class Node:
    name: str
    children: list[Node] = dataclasses.field(default_factory=list)


class Options(TypedDict, total=False):
    verbose: bool


class Required(TypedDict):
    key: str


class Point(msgspec.Struct):
    x: float
    y: float


class Person(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0, description="Age in years")


@pydantic.dataclasses.dataclass
class Temperature:
    celsius: float = pydantic.Field(ge=-273.15)


# -- input schemas ---------------------------------------------------------------------------------


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
    assert props["d"] == {"type": "boolean", "default": False}
    assert props["e"]["default"] is None
    assert {"type": "null"} in props["e"]["anyOf"]
    assert sig.bind({"a": 1, "b": 2}) == {"a": 1, "b": 2.0, "c": "x", "d": False, "e": None, "f": None}


def test_no_parameters_means_an_empty_object_schema() -> None:
    def fn() -> None: ...

    sig = inspect_function(fn)
    assert sig.input_schema == {"type": "object", "properties": {}}
    assert sig.bind(None) == {} and sig.bind({"ignored": 1}) == {}


def test_unannotated_parameters_take_anything() -> None:
    def fn(a, b=3):  # type: ignore[no-untyped-def]
        return a

    sig = inspect_function(fn)
    assert sig.input_schema["properties"] == {"a": {}, "b": {"default": 3}}
    assert sig.input_schema["required"] == ["a"]
    assert sig.bind({"a": [1, {"x": None}]}) == {"a": [1, {"x": None}], "b": 3}


def test_rich_types() -> None:
    def fn(
        color: Color,
        mode: Literal["fast", "slow"],
        where: Address,
        opts: Options,
        req: Required,
        point: Point,
        when: datetime.datetime,
        day: datetime.date,
        ident: uuid.UUID,
        tags: tuple[str, ...] = (),
        pair: tuple[int, str] | None = None,
        unique: frozenset[int] = frozenset(),
        counts: dict[str, int] | None = None,
    ) -> None: ...

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    defs = sig.input_schema["$defs"]
    props = sig.input_schema["properties"]
    assert set(defs) == {"Color", "Address", "Options", "Required", "Point"}
    assert defs["Options"].get("required", []) == [] and defs["Required"]["required"] == ["key"]
    assert sorted(defs["Color"]["enum"]) == ["blue", "red"]
    assert props["color"] == {"$ref": "#/$defs/Color"}
    assert props["mode"] == {"enum": ["fast", "slow"]}
    assert props["when"] == {"type": "string"}  # no date-time format: naive datetimes are accepted
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["ident"] == {"type": "string", "format": "uuid"}
    value = uuid.uuid4()
    bound = sig.bind(
        {
            "color": "red",
            "mode": "fast",
            "where": {"city": "Oslo"},
            "opts": {"verbose": True},
            "req": {"key": "k"},
            "point": {"x": 1, "y": 2.5},
            "when": "2025-01-02T03:04:05Z",
            "day": "2025-01-02",
            "ident": str(value),
            "tags": ["a", "b"],
            "pair": [1, "x"],
            "unique": [1, 1, 2],
            "counts": {"a": 1},
        }
    )
    assert bound["color"] is Color.RED
    assert bound["where"] == Address("Oslo")
    assert bound["opts"] == {"verbose": True}
    assert bound["point"] == Point(1.0, 2.5)
    assert bound["when"] == datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    assert bound["day"] == datetime.date(2025, 1, 2)
    assert bound["ident"] == value
    assert bound["tags"] == ("a", "b") and bound["pair"] == (1, "x")
    assert bound["unique"] == frozenset({1, 2})
    assert bound["counts"] == {"a": 1}
    assert "Expected `str`" in bind_error(sig, {**bound, "req": {"key": 1}})


def test_recursive_types_keep_their_definitions() -> None:
    def fn(tree: Node) -> Node:
        return tree

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    jsonschema.validate({"tree": tree}, sig.input_schema)
    assert sig.bind({"tree": tree})["tree"] == Node("a", [Node("b", [Node("c")])])
    message = bind_error(sig, {"tree": {"name": "a", "children": [{"name": 1}]}})
    assert "$.tree.children[0].name" in message
    # The output's root is inlined, but the recursion still resolves.
    assert sig.output_schema is not None and sig.output_schema["type"] == "object"
    assert sig.wrapped_output is False
    jsonschema.validate(sig.serialize_output(Node("a", [Node("b")])), sig.output_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "a", "children": [{"name": 2}]}, sig.output_schema)


def test_defaults_mutable_and_not_jsonable() -> None:
    marker = object()

    def fn(items: list[int] = [1], mapping: dict[str, int] = {}, other: Any = marker) -> None:  # noqa: B006
        ...

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    props = sig.input_schema["properties"]
    assert props["items"]["default"] == [1]
    assert props["mapping"]["default"] == {}
    assert "default" not in props["other"]  # not expressible in JSON, yet still the default
    first = sig.bind({})
    assert first["other"] is marker
    first["items"].append(2)
    first["mapping"]["x"] = 1
    assert sig.bind({}) == {"items": [1], "mapping": {}, "other": marker}


def test_enum_default_is_its_value_in_the_schema() -> None:
    def fn(color: Color = Color.BLUE, when: datetime.date = datetime.date(2020, 1, 2)) -> None: ...

    props = inspect_function(fn).input_schema["properties"]
    assert props["color"]["default"] == "blue"
    assert props["when"]["default"] == "2020-01-02"


# -- descriptions ----------------------------------------------------------------------------------


def test_descriptions_from_annotated_and_google_docstring() -> None:
    def fn(city: Annotated[str, "City name"], days: int, unit: str = "c") -> None:
        """Get the forecast.

        More words.

        Args:
            city: ignored, Annotated wins
            days: How many days,
                from today.
            unit (str): The unit.

        Returns:
            Nothing.
        """

    sig = inspect_function(fn)
    props = sig.input_schema["properties"]
    assert props["city"]["description"] == "City name"
    assert props["days"]["description"] == "How many days, from today."
    assert props["unit"]["description"] == "The unit."
    assert sig.description == "Get the forecast.\n\nMore words.\n\nReturns:\n    Nothing."


def test_descriptions_from_numpy_docstring() -> None:
    def fn(a: int, b: str = "") -> None:
        """Do it.

        Parameters
        ----------
        a : int
            The a,
            twice.
        b
            The b.

        Notes
        -----
        Kept.
        """

    sig = inspect_function(fn)
    props = sig.input_schema["properties"]
    assert props["a"]["description"] == "The a, twice."
    assert props["b"]["description"] == "The b."
    assert sig.description == "Do it.\n\nNotes\n-----\nKept."


def test_docstring_without_sections_is_the_description() -> None:
    def fn(a: int) -> None:
        """One line: with a colon.

        And: more.
        """

    sig = inspect_function(fn)
    assert sig.description == "One line: with a colon.\n\nAnd: more."
    assert "description" not in sig.input_schema["properties"]["a"]
    assert inspect_function(lambda: None).description is None


def test_docstring_description_keeps_constraints() -> None:
    def fn(n: Annotated[int, at.Ge(1)]) -> None:
        """
        Args:
            n: How many.
        """

    sig = inspect_function(fn)
    assert sig.input_schema["properties"]["n"] == {
        "type": "integer",
        "minimum": 1,
        "description": "How many.",
    }
    assert sig.description is None


def test_docstring_headers_and_blank_lines_are_read_as_the_patterns_say() -> None:
    # The headers are recognised without regular expressions (they cost every server's start-up);
    # these are the patterns they replace, as the reference.
    import re

    from mcpkit._signature_docstrings import _GOOGLE_ARGS, _numpy_header, parse_docstring

    google = re.compile(r"(Args|Arguments|Parameters|Keyword Args|Keyword Arguments):")
    for text in ["Args:", "Arguments:", "Parameters:", "Keyword Args:", "Keyword Arguments:", "Args",
                 "Args :", "args:", "Args::", "Returns:", "Keyword  Args:", ""]:  # fmt: skip
        assert (text in _GOOGLE_ARGS) == bool(google.fullmatch(text)), text
    for text in ["", "-", "--", "---", "----------", "--- ", "-- -", "===", "---a"]:
        assert _numpy_header(text) == bool(re.fullmatch(r"-{3,}", text)), text
    description, args = parse_docstring("Do it.\n\n\n\n\nArgs:\n    a: The a.\n\n\n\nMore.\n\n\nEnd.")
    assert description == "Do it.\n\nMore.\n\nEnd." and args == {"a": "The a."}
    assert parse_docstring("Do it.\n\nParameters\n--\na : int") == ("Do it.\n\nParameters\n--\na : int", {})


# -- constraints -----------------------------------------------------------------------------------


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
        (Annotated[str, at.Len(1, 2)], "maxLength", "ab", ""),
        (Annotated[list[int], at.MaxLen(1)], "maxItems", [1], [1, 2]),
        (Annotated[int, at.Interval(ge=0, le=5)], "maximum", 5, 6),
        (Annotated[int, at.Interval(ge=0, le=5)], "minimum", 0, -1),
        (Annotated[int, msgspec.Meta(ge=0)], "minimum", 0, -1),
        (Annotated[int, at.Ge(0), "described"], "description", 0, -1),
        (list[Annotated[int, at.Ge(0)]], "items", [0], [-1]),
        (Annotated[int, pydantic.Field(ge=0)], "minimum", 0, -1),
        (Annotated[str, pydantic.Field(max_length=1)], "maxLength", "a", "ab"),
    ],
)
def test_constraints_reach_the_schema_and_the_validator(
    annotation: Any, keyword: str, good: Any, bad: Any
) -> None:
    sig = inspect_function(annotated(lambda value: None, value=annotation))
    check_schema(sig.input_schema)
    assert keyword in sig.input_schema["properties"]["value"]
    assert sig.bind({"value": good}) == {"value": good}
    jsonschema.validate({"value": good}, sig.input_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"value": bad}, sig.input_schema)
    assert bind_error(sig, {"value": bad}).startswith("Invalid arguments for 'value': ")
    assert "$.value" in bind_error(sig, {"value": bad})


def test_constraints_msgspec_cannot_check_are_refused() -> None:
    with pytest.raises(TypeError, match="Predicate"):
        inspect_function(annotated(lambda value: None, value=Annotated[int, at.Predicate(bool)]))


# -- binding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "Missing required argument 'a'"),
        ({"a": "1"}, "Invalid arguments for 'a': Expected `int`, got `str` - at `$.a`"),
        ({"a": 1.5}, "Invalid arguments for 'a': Expected `int`, got `float`"),
        ({"a": True}, "Invalid arguments for 'a': Expected `int`, got `bool`"),
        ({"a": None}, "Invalid arguments for 'a': Expected `int`, got `null`"),
        ({"a": 1, "where": {"zip_code": "x"}}, "missing required field `city` - at `$.where`"),
        ({"a": 1, "where": {"city": 5}}, "Invalid arguments for 'where': Expected `str`, got `int`"),
        ({"a": 1, "where": {"city": 5}}, "$.where.city"),
        ({"a": 1, "tags": ["x", 2]}, "$.tags[1]"),
        ([1, 2], "Invalid arguments: Expected `object`, got `array`"),
    ],
)
def test_bind_errors_name_the_field(arguments: Any, message: str) -> None:
    def fn(a: int, where: Address | None = None, tags: list[str] | None = None) -> None: ...

    assert message in bind_error(inspect_function(fn), arguments)


def test_extra_arguments_are_ignored() -> None:
    def fn(a: int) -> None: ...

    assert inspect_function(fn).bind({"a": 1, "b": 2, "c": None}) == {"a": 1}


def test_lax_mode_takes_strings_for_numbers() -> None:
    def fn(n: int, flag: bool = False) -> None: ...

    assert inspect_function(fn, strict=False).bind({"n": "3", "flag": "true"}) == {"n": 3, "flag": True}
    assert "Expected `int`" in bind_error(inspect_function(fn, strict=False), {"n": "x"})


def test_context_parameters_are_skipped() -> None:
    def fn(ctx: Context, a: int, other: Optional[Context] = None) -> None:  # noqa: UP045 - both spellings
        """Use the context.

        Args:
            ctx: not shown.
        """

    sig = inspect_function(fn, skip_types=(Context,))
    assert sig.skipped == {"ctx": Context, "other": Optional[Context]}  # noqa: UP045
    assert list(sig.input_schema["properties"]) == ["a"]
    assert sig.bind({"a": 1, "ctx": "x"}) == {"a": 1}


@pytest.mark.parametrize(
    "source", ["def fn(*args): ...", "def fn(**kw): ...", "def fn(a, /): ...", "def fn(a, /, b): ..."]
)
def test_unnameable_parameters_are_refused(source: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(TypeError, match="passed by name"):
        inspect_function(namespace["fn"])


def test_unsupported_or_unresolvable_types_fail_at_decoration() -> None:
    class Opaque:
        pass

    with pytest.raises(TypeError, match="not supported"):
        inspect_function(annotated(lambda x: None, x=Opaque))

    def fn(x: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    with pytest.raises(TypeError, match="Missing"):
        inspect_function(fn)


def test_async_is_detected() -> None:
    async def fn() -> None: ...

    class Callable:
        async def __call__(self) -> None: ...

    def sync() -> None: ...

    assert inspect_function(fn).is_async
    assert inspect_function(Callable()).is_async
    assert not inspect_function(sync).is_async


# -- pydantic --------------------------------------------------------------------------------------


def test_pydantic_models() -> None:
    def fn(person: Person, note: Annotated[str, "A note"] = "") -> Person:
        return person

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    assert "Person" in sig.input_schema["$defs"]
    assert sig.input_schema["properties"]["note"] == {
        "type": "string",
        "default": "",
        "description": "A note",
    }
    assert sig.input_schema["required"] == ["person"]
    # No made-up titles ("Name", "Age") anywhere.
    assert '"title": "Name"' not in json.dumps(sig.input_schema)
    bound = sig.bind({"person": {"name": "Ada", "age": 36}})
    assert bound == {"person": Person(name="Ada", age=36), "note": ""}
    message = bind_error(sig, {"person": {"name": "Ada", "age": -1}})
    assert message.startswith("Invalid arguments for 'person': ") and "$.person.age" in message
    assert bind_error(sig, {}) == "Missing required argument 'person'"
    assert sig.output_schema is not None
    assert sig.output_schema["properties"]["age"]["description"] == "Age in years"
    assert sig.wrapped_output is False
    assert sig.serialize_output(Person(name="Ada", age=36)) == {"name": "Ada", "age": 36}


def test_pydantic_validation_is_json_strict() -> None:
    def fn(person: Person, when: datetime.datetime, ident: uuid.UUID, pair: tuple[int, int]) -> None: ...

    sig = inspect_function(fn)
    good = {"person": {"name": "a", "age": 1}, "when": "2025-01-02T03:04:05Z", "ident": str(uuid.UUID(int=1))}
    bound = sig.bind({**good, "pair": [1, 2]})
    assert bound["when"] == datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    assert bound["ident"] == uuid.UUID(int=1) and bound["pair"] == (1, 2)
    assert "$.person.age" in bind_error(sig, {**good, "pair": [1, 2], "person": {"name": "a", "age": "1"}})
    assert "$.pair[0]" in bind_error(sig, {**good, "pair": [1.5, 2]})
    lax = inspect_function(fn, strict=False)
    assert lax.bind({**good, "pair": ["1", "2"]})["pair"] == (1, 2)


def test_pydantic_field_as_a_default_and_awkward_names() -> None:
    def fn(
        count: int = pydantic.Field(default=3, ge=0, description="How many"),
        json: str = "x",  # a BaseModel method's name
        model_config: int = 0,  # a BaseModel attribute's name
        _private: int = 1,  # a private attribute's spelling
    ) -> None: ...

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    props = sig.input_schema["properties"]
    assert props["count"] == {"type": "integer", "default": 3, "minimum": 0, "description": "How many"}
    assert set(props) == {"count", "json", "model_config", "_private"}
    assert sig.bind({"json": "y", "_private": 2}) == {
        "count": 3,
        "json": "y",
        "model_config": 0,
        "_private": 2,
    }
    assert "$.count" in bind_error(sig, {"count": -1})
    assert sig.bind({"p0": -1})["count"] == 3  # the model's internal field names are no inputs


def test_pydantic_path_handles_other_types_too() -> None:
    def fn(temp: Temperature, opts: Options, where: Address, color: Color = Color.RED) -> Options:
        return opts

    sig = inspect_function(fn)
    check_schema(sig.input_schema)
    assert sig.input_schema["properties"]["temp"] == {"$ref": "#/$defs/Temperature"}
    assert {"Temperature", "Options", "Address", "Color"} <= set(sig.input_schema["$defs"])
    bound = sig.bind({"temp": {"celsius": 20}, "opts": {}, "where": {"city": "Rome"}})
    assert bound == {"temp": Temperature(20.0), "opts": {}, "where": Address("Rome"), "color": Color.RED}
    assert "$.temp.celsius" in bind_error(
        sig, {"temp": {"celsius": -300}, "opts": {}, "where": {"city": "R"}}
    )
    assert sig.output_schema is not None and sig.wrapped_output is False
    assert sig.serialize_output({"verbose": True}) == {"verbose": True}


def test_pydantic_user_titles_stay() -> None:
    def fn(a: Annotated[int, pydantic.Field(title="The A")]) -> None: ...

    assert inspect_function(fn).input_schema["properties"]["a"]["title"] == "The A"


def test_importing_does_not_import_pydantic() -> None:
    code = (
        "import sys, mcpkit._signature as s\n"
        "def f(a: int, b: list[str] | None = None) -> dict[str, int]: ...\n"
        "s.inspect_function(f).bind({'a': 1})\n"
        "print('pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- output ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "annotation",
    [
        None,
        Any,
        TextContent,
        list[TextContent],
        list[ContentBlock],
        ImageContent | TextContent,
        str | TextContent,
        CallToolResult,
        Annotated[TextContent, "a block"],
    ],
)
def test_unstructured_outputs(annotation: Any) -> None:
    sig = inspect_function(annotated(lambda: None, **{"return": annotation}))
    assert sig.output_schema is None and sig.wrapped_output is False


def test_no_return_annotation_is_unstructured() -> None:
    def fn():  # type: ignore[no-untyped-def]
        return 1

    assert inspect_function(fn).output_schema is None


def test_undescribable_return_type_is_unstructured() -> None:
    class Opaque:
        pass

    assert inspect_function(annotated(lambda: None, **{"return": Opaque})).output_schema is None


def test_call_tool_result_with_a_declared_structure() -> None:
    sig = inspect_function(annotated(lambda: None, **{"return": Annotated[CallToolResult, Address]}))
    assert sig.output_schema is not None and sig.output_schema["properties"]["city"] == {"type": "string"}
    assert sig.wrapped_output is False


@pytest.mark.parametrize(
    ("annotation", "value", "structured"),
    [
        (int, 3, {"result": 3}),
        (str, "hi", {"result": "hi"}),
        (bool, False, {"result": False}),
        (list[int], [1, 2], {"result": [1, 2]}),
        (tuple[int, str], (1, "a"), {"result": [1, "a"]}),
        (Literal["a", "b"], "a", {"result": "a"}),
        (Color, Color.RED, {"result": "red"}),
        (int | None, None, {"result": None}),
        (Address | None, Address("Oslo"), {"result": {"city": "Oslo", "zip_code": None}}),
        (datetime.date, datetime.date(2020, 1, 2), {"result": "2020-01-02"}),
        (Annotated[int, "The sum"], 3, {"result": 3}),
        (list[Address], [Address("a")], {"result": [{"city": "a", "zip_code": None}]}),
        (list[Person], [Person(name="a", age=1)], {"result": [{"name": "a", "age": 1}]}),
    ],
)
def test_wrapped_outputs(annotation: Any, value: Any, structured: Any) -> None:
    sig = inspect_function(annotated(lambda: None, **{"return": annotation}))
    assert sig.output_schema is not None
    check_schema(sig.output_schema)
    assert sig.wrapped_output is True
    assert sig.output_schema["required"] == ["result"] and set(sig.output_schema["properties"]) == {"result"}
    assert sig.serialize_output(value) == structured
    jsonschema.validate(structured, sig.output_schema)


def test_wrapped_output_keeps_descriptions_and_definitions() -> None:
    sig = inspect_function(annotated(lambda: None, **{"return": Annotated[list[Address], "Found"]}))
    assert sig.output_schema is not None
    assert sig.output_schema["properties"]["result"]["description"] == "Found"
    assert set(sig.output_schema["$defs"]) == {"Address"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"result": [{"zip_code": "x"}]}, sig.output_schema)


@pytest.mark.parametrize(
    ("annotation", "value", "structured"),
    [
        (Address, Address("Oslo"), {"city": "Oslo", "zip_code": None}),
        (Options, {"verbose": True}, {"verbose": True}),
        (Point, Point(1, 2), {"x": 1, "y": 2}),
        (dict[str, int], {"a": 1}, {"a": 1}),
        (dict[str, Any], {"a": [1]}, {"a": [1]}),
        (Person, Person(name="a", age=2), {"name": "a", "age": 2}),
    ],
)
def test_object_outputs(annotation: Any, value: Any, structured: Any) -> None:
    sig = inspect_function(annotated(lambda: None, **{"return": annotation}))
    assert sig.output_schema is not None
    check_schema(sig.output_schema)
    assert sig.wrapped_output is False
    assert "$ref" not in sig.output_schema
    assert sig.serialize_output(value) == structured
    jsonschema.validate(structured, sig.output_schema)


# -- properties ------------------------------------------------------------------------------------


class AddressModel(pydantic.BaseModel):
    city: str


def _msgspec_fn(
    a: int,
    b: str,
    c: list[float],
    d: Address | None = None,
    e: Color = Color.BLUE,
    f: uuid.UUID | None = None,
    g: datetime.datetime | None = None,
) -> None: ...


def _pydantic_fn(
    a: int,
    b: str,
    c: list[float],
    d: AddressModel | None = None,
    e: Color = Color.BLUE,
    f: uuid.UUID | None = None,
    g: datetime.datetime | None = None,
) -> None: ...


_SIGS = [inspect_function(_msgspec_fn), inspect_function(_pydantic_fn)]
_argument_dicts = st.fixed_dictionaries(
    {
        "a": st.integers(min_value=-(2**63), max_value=2**63 - 1),
        "b": st.text(),
        "c": st.lists(st.floats(allow_nan=False, allow_infinity=False)),
    },
    optional={
        "d": st.none() | st.builds(dict, city=st.text()),
        "e": st.sampled_from(["red", "blue"]),
        "f": st.none() | st.uuids().map(str),
        "g": st.none() | st.datetimes(timezones=st.just(datetime.UTC)).map(datetime.datetime.isoformat),
    },
)


@pytest.mark.parametrize("sig", _SIGS, ids=["msgspec", "pydantic"])
@given(arguments=_argument_dicts)
def test_any_valid_arguments_bind_and_round_trip(sig: Any, arguments: dict[str, Any]) -> None:
    jsonschema.validate(arguments, sig.input_schema, format_checker=FORMATS)
    bound = sig.bind(json.loads(json.dumps(arguments)))
    assert set(bound) == set(sig.input_schema["properties"])
    for key, value in arguments.items():
        if key == "d" and value is not None:
            assert bound["d"].city == value["city"]
        elif key == "e":
            assert bound["e"] is Color(value)
        elif key == "f" and value is not None:
            assert bound["f"] == uuid.UUID(value)
        elif key == "g" and value is not None:
            assert bound["g"] == datetime.datetime.fromisoformat(value)
        else:
            assert bound[key] == value
            assert type(bound[key]) is type(value)


@pytest.mark.parametrize("sig", _SIGS, ids=["msgspec", "pydantic"])
@given(
    arguments=_argument_dicts,
    key=st.sampled_from(["a", "b", "c", "e", "f"]),
    wrong=st.sampled_from([None, {}, [], "x", 1.5, "1", True]),
)
def test_wrong_types_are_always_refused(sig: Any, arguments: dict[str, Any], key: str, wrong: Any) -> None:
    valid = {
        "b": lambda w: isinstance(w, str),
        "c": lambda w: w == [],
        "f": lambda w: w is None,
    }
    if key in valid and valid[key](wrong):
        return
    arguments = {**arguments, key: wrong}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(arguments, sig.input_schema, format_checker=FORMATS)
    with pytest.raises(ArgumentError, match=f"'{key}'"):
        sig.bind(arguments)


def test_a_signature_is_a_frozen_dataclass_that_replace_copies() -> None:
    """ToolSignature's __init__ is written out (generating it cost every server's start-up): it must
    still take every field, refuse changes, and let dataclasses.replace make a variant."""
    import dataclasses

    def fn(a: int) -> int:
        """Double."""
        return 2 * a

    sig = inspect_function(fn)
    assert [f.name for f in dataclasses.fields(sig)] == [
        "input_schema", "output_schema", "wrapped_output", "skipped", "description", "is_async",
        "_bind", "_serialize", "inline",
    ]  # fmt: skip
    with pytest.raises(dataclasses.FrozenInstanceError):
        sig.inline = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del sig.description  # type: ignore[misc]
    inline = dataclasses.replace(sig, inline=True)
    assert inline.inline and not sig.inline
    assert {f.name: getattr(inline, f.name) for f in dataclasses.fields(sig) if f.name != "inline"} == {
        f.name: getattr(sig, f.name) for f in dataclasses.fields(sig) if f.name != "inline"
    }
    assert inline.bind({"a": 2}) == {"a": 2} and inline.description == "Double."


@given(
    st.one_of(
        st.text(),
        st.integers(),
        st.booleans(),
        st.none(),
        st.floats(),
        st.lists(st.text()),
        st.tuples(st.integers(), st.text()),
        st.dictionaries(st.text(), st.integers()),
    )
)
def test_to_json_answers_as_the_round_trip_through_json(value: Any) -> None:
    # to_json returns the usual scalars as they are; everything else takes the round trip.
    try:
        expected = msgspec.json.decode(msgspec.json.encode(value))
    except UnicodeEncodeError:
        with pytest.raises(UnicodeEncodeError):  # a lone surrogate is refused either way
            to_json(value)
        return
    got = to_json(value)
    assert got == expected
    assert type(got) is type(expected)


def test_to_json_refuses_a_lone_surrogate_as_before() -> None:
    with pytest.raises(UnicodeEncodeError):
        to_json("\ud800")
    with pytest.raises(UnicodeEncodeError):
        to_json(["\ud800"])
    assert to_json("naïve") == "naïve"
    assert to_json(2**70) == 2**70
