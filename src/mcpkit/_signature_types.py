"""What both schema engines of :mod:`mcpkit._signature` share: the error they raise, walking
annotations, and reshaping the JSON Schemas they produce.

The engines are :mod:`mcpkit._signature_msgspec` (the default) and :mod:`mcpkit._signature_pydantic`
(for functions whose types involve pydantic). Each turns a function's parameters into an
``inputSchema`` and a ``bind`` function, and a return annotation into a schema and a serializer.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Final, Literal, Protocol, Union, get_args, get_origin, get_type_hints

import msgspec

__all__ = [
    "ARGS_NAME",
    "DEFS",
    "ArgumentError",
    "Builder",
    "involves_pydantic",
    "is_pydantic",
    "rebuild",
    "rooted",
    "to_json",
    "walk",
]

ARGS_NAME: Final = "__ToolArguments__"
DEFS: Final = "#/$defs/"


class ArgumentError(ValueError):
    """The arguments of a tool call do not fit its signature. ``str()`` is meant for the model."""


class Builder(Protocol):
    """One schema engine, for one strictness (see :func:`mcpkit._signature.inspect_function`)."""

    def arguments(self, params: list[tuple[str, Any, Any]]) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        """The ``inputSchema`` of *params* (name, annotation, default) and the function that binds
        wire arguments to them (raising :class:`ArgumentError`)."""
        ...

    def value(self, annotation: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        """The JSON Schema of *annotation*, and the function that makes a value of it JSON."""
        ...


def walk(tp: Any, seen: set[int]) -> Iterator[Any]:
    """*tp*, the types and ``Annotated`` metadata nested in it, and the fields of the classes it uses."""
    yield tp
    for arg in get_args(tp):
        yield from walk(arg, seen)
    cls = tp if isinstance(tp, type) else get_origin(tp)
    if (
        isinstance(cls, type)
        and id(cls) not in seen  # recursive types
        and (dataclasses.is_dataclass(cls) or typing.is_typeddict(cls) or issubclass(cls, msgspec.Struct))
    ):
        seen.add(id(cls))
        for hint in get_type_hints(cls, include_extras=True).values():
            yield from walk(hint, seen)


def is_pydantic(item: Any) -> bool:
    """A pydantic class (model, dataclass, special type) or marker (``FieldInfo``, validators)."""
    if isinstance(item, type):
        return hasattr(item, "__pydantic_fields__") or any(
            c.__module__.startswith("pydantic") for c in item.__mro__
        )
    return type(item).__module__.startswith("pydantic")


def involves_pydantic(tp: Any) -> bool:
    return any(is_pydantic(item) for item in walk(tp, set()))


def rooted(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema whose root is ``{"$ref": ...}`` with the referenced definition moved to the root.

    MCP wants ``"type": "object"`` at the root. The definition stays in ``$defs`` if it is used
    elsewhere (a recursive type).
    """
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith(DEFS):
        return schema
    defs = dict(schema["$defs"])
    name = ref.removeprefix(DEFS)
    root = {**defs[name], **{k: v for k, v in schema.items() if k not in ("$ref", "$defs")}}
    if msgspec.json.encode(ref) not in msgspec.json.encode(defs):
        del defs[name]
    if defs:
        root["$defs"] = defs
    return root


def rebuild(tp: Any, convert: Callable[[Any], Any]) -> Any:
    """*tp* with *convert* applied to the types inside it (``list[X]``, ``X | Y``, ``Annotated[X, ...]``)."""
    origin, args = get_origin(tp), get_args(tp)
    if not args or origin is Literal:
        return tp
    if origin is Annotated:
        inner = convert(args[0])
        return tp if inner is args[0] else Annotated[(inner, *tp.__metadata__)]
    converted = tuple(a if a is Ellipsis else convert(a) for a in args)
    if all(a is b for a, b in zip(converted, args, strict=True)):
        return tp
    if origin in (Union, types.UnionType):
        return Union[converted]  # noqa: UP007 - a runtime union of computed members
    return origin[converted]


def to_json(value: Any) -> Any:
    """*value* as JSON's builtins only (to_builtins alone would keep tuples and non-string keys)."""
    kind = type(value)
    # The usual tool results are already JSON's own, and the round trip would give them back: an
    # ASCII string (any other may hold a lone surrogate, which the encoder refuses), an int, a bool.
    if (kind is str and value.isascii()) or kind is int or kind is bool or value is None:
        return value
    return msgspec.json.decode(msgspec.json.encode(value))
