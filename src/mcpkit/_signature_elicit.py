"""Typed elicitation: from a Python class to an elicitation form, and from the user's answer back.

``ctx.elicit(message, Booking)`` asks with the ``requestedSchema`` of ``Booking`` (a dataclass,
``TypedDict``, msgspec struct or pydantic model) and returns the answer as a ``Booking``. The schema
comes from the same engines as tool input schemas (:mod:`._signature_msgspec`,
:mod:`._signature_pydantic`), then is checked against what elicitation allows: a flat object whose
fields are primitives.

* ``str``, with ``minLength``/``maxLength`` and the formats ``email``, ``uri``, ``date``,
  ``date-time`` (``datetime.date`` and ``datetime.datetime`` fields give the last two);
* ``int`` and ``float``, with ``minimum``/``maximum`` (``ge``/``le``; a strict bound has no place);
* ``bool``;
* a ``Literal`` of strings or a string ``Enum`` (a single choice), and from 2025-11-25 a ``list`` of
  one (a multiple choice, ``minItems``/``maxItems``);
* each optionally with a default, a description and a title; ``X | None = None`` is an optional field;
  ``Annotated[Literal[...], Titles(...)]`` gives each choice a label (2025-11-25's titled choices,
  ``enumNames`` before).

Anything else (a nested object, a union, a pattern, a strict bound) raises ``TypeError`` naming
the field, when the form is first built, which :func:`elicitation_form` lets a server do at import.

::

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Booking:
    ...     guests: int
    ...     vegetarian: bool = False
    >>> form = elicitation_form(Booking)
    >>> form.schema["required"], form.schema["properties"]["vegetarian"]
    (['guests'], {'type': 'boolean', 'default': False})
    >>> form.convert({"guests": 2})
    Booking(guests=2, vegetarian=False)
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import types
import typing
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

import msgspec

from ._errors import ToolError
from ._signature_msgspec import MsgspecBuilder
from ._signature_types import DEFS, involves_pydantic, rooted, walk

__all__ = ["ElicitationContentError", "ElicitationForm", "Titles", "elicitation_form"]

T = TypeVar("T")

# What each kind of field may carry besides "type" (the 2025-11-25 PrimitiveSchemaDefinition).
_COMMON: Final = frozenset({"title", "description", "default"})
_ALLOWED: Final = {
    "string": _COMMON | {"minLength", "maxLength", "format"},
    "number": _COMMON | {"minimum", "maximum"},
    "integer": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "enum": _COMMON | {"enum", "enumNames", "oneOf"},
    "array": _COMMON | {"items", "minItems", "maxItems"},
}
_FORMATS: Final = frozenset({"email", "uri", "date", "date-time"})
# Revisions before this one have no multiple choice, and a default only on booleans.
_MULTI_SELECT_SINCE: Final = "2025-11-25"


class Titles:
    """Labels for the choices of a field: ``Annotated[Literal["s", "l"], Titles(s="Small", l="Large")]``
    (or ``Titles({"x-l": "Extra large"})`` for values that are not names). Every choice needs one.

    The form then offers titled choices: ``oneOf`` of ``const``/``title`` (``anyOf`` in the items of a
    multiple choice) from 2025-11-25, ``enumNames`` beside ``enum`` in 2025-06-18.
    """

    __slots__ = ("titles",)

    def __init__(self, titles: dict[str, str] | None = None, /, **more: str) -> None:
        self.titles = {**(titles or {}), **more}

    def __repr__(self) -> str:
        return f"Titles({self.titles!r})"


class ElicitationContentError(ToolError):
    """The client accepted a form with content that does not fit the requested type.

    A :class:`~mcpkit.ToolError`: a tool that does not catch it ends with ``isError: true`` and this
    message, which names the field.
    """


@dataclasses.dataclass(frozen=True, slots=True)
class ElicitationForm(Generic[T]):
    """A type as an elicitation form: its ``requestedSchema`` and the converter of answers."""

    cls: type[T]
    schema: dict[str, Any]
    multi_select: tuple[str, ...]
    _convert: Callable[[Any], T]

    def requested_schema(self, version: str) -> dict[str, Any]:
        """The schema as *version* defines it (defaults only on booleans before 2025-11-25).

        Raises:
            TypeError: a multiple-choice field, which *version* does not have.
        """
        if version >= _MULTI_SELECT_SINCE:
            return self.schema
        if self.multi_select:
            raise TypeError(
                f"{self.cls.__qualname__}: field {self.multi_select[0]!r} is a multiple choice, which "
                f"elicitation has only from {_MULTI_SELECT_SINCE} (this request speaks {version})"
            )
        schema = copy.deepcopy(self.schema)
        for field in schema["properties"].values():
            if field.get("type") != "boolean":
                field.pop("default", None)
            if "oneOf" in field:  # titled choices were enum and enumNames then
                options = field.pop("oneOf")
                field["enum"] = [option["const"] for option in options]
                field["enumNames"] = [option["title"] for option in options]
        return schema

    def convert(self, content: Any) -> T:
        """The accepted *content* as the type (its defaults filling what the user left out).

        Raises:
            ElicitationContentError: the content does not fit.
        """
        return self._convert(content if content is not None else {})


def elicitation_form(tp: type[T]) -> ElicitationForm[T]:
    """The form for *tp*, built once per type (see the module docstring for what fits).

    Raises:
        TypeError: *tp* is not a flat object of primitive fields; the message names the field.
    """
    form = _FORMS.get(tp)
    if form is None:
        form = _FORMS[tp] = _form(tp)
    return form


#: Forms already built, by type (a form is worked out once; classes are few and live for ever).
_FORMS: dict[Any, Any] = {}


def _form(tp: Any) -> ElicitationForm[Any]:
    name = getattr(tp, "__qualname__", repr(tp))
    if not (
        isinstance(tp, type)
        and (
            dataclasses.is_dataclass(tp)
            or typing.is_typeddict(tp)
            or issubclass(tp, msgspec.Struct)
            or involves_pydantic(tp)
        )
    ):
        raise TypeError(
            f"elicit takes a dataclass, TypedDict, msgspec Struct or pydantic model (or a schema dict), "
            f"not {name}"
        )
    if involves_pydantic(tp):
        schema, convert = _pydantic(tp)
    else:
        schema, _ = MsgspecBuilder(strict=True).value(tp)
        schema = rooted(schema)
        _add_time_formats(schema, tp)
        convert = _msgspec_converter(tp)
    try:
        flat, multi = _flatten(schema)
        _declared_order(flat["properties"], tp)
        _apply_titles(flat["properties"], _field_titles(tp))
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from None
    return ElicitationForm(tp, flat, multi, convert)


def _flatten(schema: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise TypeError("an elicitation form is an object with named fields")
    defs = schema.get("$defs", {})
    properties: dict[str, Any] = {}
    multi: list[str] = []
    for field, spec in schema["properties"].items():
        properties[field] = _primitive(field, _resolve(spec, defs), defs)
        if properties[field].get("type") == "array":
            multi.append(field)
    flat: dict[str, Any] = {"type": "object", "properties": properties}
    required = [f for f in schema.get("required", []) if f in properties]
    if required:
        flat["required"] = required
    return flat, tuple(multi)


def _resolve(spec: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """*spec* with a ``$ref`` inlined (an Enum's definition) and ``X | None`` made plain ``X``."""
    spec = dict(spec)
    ref = spec.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith(DEFS):
        target = dict(defs.get(ref.removeprefix(DEFS), {}))
        target.pop("title", None)  # the class name says nothing to the user
        spec = {**target, **spec}
    for union in ("anyOf", "oneOf"):
        members = spec.get(union)
        if isinstance(members, list) and any(m == {"type": "null"} for m in members):
            rest = [m for m in members if m != {"type": "null"}]
            if len(rest) == 1:
                del spec[union]
                spec = {**_resolve(rest[0], defs), **spec}
    if spec.get("default", 0) is None:
        del spec["default"]  # an optional field left empty: not a value to show the user
    return spec


def _primitive(field: str, spec: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "enum" in spec:
        if not spec["enum"] or not all(isinstance(v, str) for v in spec["enum"]):
            raise TypeError(f"field {field!r}: a choice must be between strings")
        spec = {"type": "string", **spec}
        kind = "enum"
    else:
        kind = spec.get("type", "")
        if kind == "array":
            items = _resolve(spec.get("items", {}), defs)
            if not isinstance(items.get("enum"), list) or not all(isinstance(v, str) for v in items["enum"]):
                raise TypeError(f"field {field!r}: a list must be a multiple choice between strings")
            spec = {**spec, "items": {"type": "string", "enum": items["enum"]}}
    if kind not in _ALLOWED:
        shown = kind or next((k for k in ("anyOf", "oneOf", "$ref") if k in spec), "its type")
        raise TypeError(
            f"field {field!r}: elicitation takes strings, numbers, booleans and choices, not {shown}"
        )
    extra = sorted(set(spec) - _ALLOWED[kind] - {"type"})
    if extra:
        raise TypeError(f"field {field!r}: elicitation has no {', '.join(extra)}")
    if kind == "string" and "format" in spec and spec["format"] not in _FORMATS:
        raise TypeError(f"field {field!r}: elicitation has no format {spec['format']!r}")
    return spec


def _declared_order(properties: dict[str, Any], tp: Any) -> None:
    """Choices in the order the ``Literal`` or ``Enum`` declares them (msgspec sorts them), which is
    the order a form shows: ``low, medium, high``, not ``high, low, medium``."""
    fields = getattr(tp, "model_fields", None)
    if isinstance(fields, dict):
        hints = {name: info.annotation for name, info in fields.items()}
    else:
        hints = typing.get_type_hints(tp)
    for field, hint in hints.items():
        spec = properties.get(field, {})
        target = spec.get("items", {}) if spec.get("type") == "array" else spec
        values = target.get("enum")
        if not isinstance(values, list):
            continue
        for item in walk(hint, set()):
            if typing.get_origin(item) is typing.Literal:
                declared = list(typing.get_args(item))
            elif isinstance(item, type) and issubclass(item, enum.Enum):
                declared = [member.value for member in item]
            else:
                continue
            if sorted(map(str, declared)) == sorted(map(str, values)):
                target["enum"] = declared
                break


def _field_titles(tp: Any) -> dict[str, dict[str, str]]:
    """The :class:`Titles` of each field of *tp* (pydantic keeps ``Annotated`` metadata on its fields)."""
    found: dict[str, dict[str, str]] = {}
    fields = getattr(tp, "model_fields", None)
    if isinstance(fields, dict):
        hints = {
            name: typing.Annotated[(Any, *info.metadata)] for name, info in fields.items() if info.metadata
        }
    else:
        hints = typing.get_type_hints(tp, include_extras=True)
    for field, hint in hints.items():
        for item in walk(hint, set()):
            if isinstance(item, Titles):
                found[field] = item.titles
    return found


def _apply_titles(properties: dict[str, Any], titles: dict[str, dict[str, str]]) -> None:
    for field, labels in titles.items():
        spec = properties.get(field, {})
        target = spec.get("items", {}) if spec.get("type") == "array" else spec
        values = target.get("enum")
        if not isinstance(values, list):
            raise TypeError(f"field {field!r}: Titles label choices, and this field has none")
        if set(labels) != set(values):
            raise TypeError(
                f"field {field!r}: Titles must label every choice ({', '.join(values)}), no other"
            )
        options = [{"const": value, "title": title} for value, title in labels.items()]  # in the given order
        del target["enum"]
        if target is spec:
            spec["oneOf"] = options
        else:
            spec["items"] = {"anyOf": options}


def _add_time_formats(schema: dict[str, Any], tp: Any) -> None:
    """msgspec describes ``datetime`` and ``time`` as bare strings: say ``date-time`` for the one, and
    mark the other, which elicitation has no format for, so that it is refused rather than shown as
    free text."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for field, hint in typing.get_type_hints(tp).items():
        members = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else ()
        plain = next((m for m in members if m is not type(None)), hint) if len(members) == 2 else hint
        spec = properties.get(field)
        if not isinstance(spec, dict):
            continue
        target = next((m for m in spec.get("anyOf", []) if m.get("type") == "string"), spec)
        if plain is datetime.datetime:
            target["format"] = "date-time"
        elif plain is datetime.time:
            target["format"] = "time"


def _msgspec_converter(tp: Any) -> Callable[[Any], Any]:
    convert, error = msgspec.convert, msgspec.ValidationError

    def converter(content: Any) -> Any:
        try:
            return convert(content, tp)
        except error as exc:
            raise ElicitationContentError(f"The answer to the form does not fit: {exc}") from None

    return converter


def _pydantic(tp: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    import pydantic  # only for forms made of pydantic types

    from ._signature_pydantic import _for_pydantic, _schema_generator

    adapter = pydantic.TypeAdapter(_for_pydantic(tp))
    schema = rooted(adapter.json_schema(mode="validation", schema_generator=_schema_generator()))
    schema.pop("title", None)
    schema.pop("description", None)
    encode, validate = msgspec.json.encode, adapter.validate_json

    def converter(content: Any) -> Any:
        try:
            return validate(encode(content), strict=True)  # JSON's rules, as for tool arguments
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'the form'}: {e['msg']}" for e in exc.errors()
            )
            raise ElicitationContentError(f"The answer to the form does not fit: {problems}") from None

    return schema, converter
