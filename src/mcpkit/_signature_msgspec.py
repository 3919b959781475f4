"""The default schema engine of :mod:`mcpkit._signature`: msgspec.

The parameters become one struct type (``msgspec.defstruct``), whose JSON Schema is the tool's
``inputSchema`` and whose converter validates and converts a call's arguments in a single C pass.
``Annotated`` metadata that msgspec does not read (a plain string, ``annotated_types``
constraints, ``typing_extensions.Doc``) is translated into ``msgspec.Meta`` first.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import re
from collections.abc import Callable
from typing import Annotated, Any, Final, get_args, get_origin

import msgspec

from ._signature_types import ARGS_NAME, DEFS, ArgumentError, rebuild, rooted, to_json

__all__ = ["MsgspecBuilder"]

# The annotated_types constraints are dataclasses whose field names are msgspec.Meta's keywords.
_META_KEYWORDS: Final = frozenset({"gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length"})


def _to_msgspec(tp: Any) -> Any:
    """Rewrite ``Annotated`` metadata that msgspec does not read into ``msgspec.Meta``, recursively.

    Only the annotation itself is rewritten: the fields of a user's dataclass take msgspec.Meta only.
    """
    if get_origin(tp) is not Annotated:
        return rebuild(tp, _to_msgspec)
    keywords: dict[str, Any] = {}
    kept: list[Any] = []
    for meta in tp.__metadata__:
        if isinstance(meta, msgspec.Meta):
            kept.append(meta)
        elif isinstance(meta, str):
            keywords["description"] = meta
        elif type(meta).__name__ in ("Doc", "DocInfo"):  # typing_extensions.Doc, annotated_types.doc()
            keywords["description"] = meta.documentation
        elif type(meta).__module__ == "annotated_types":
            fields = {f.name: getattr(meta, f.name) for f in dataclasses.fields(meta)}
            if not fields.keys() <= _META_KEYWORDS:
                # Dropping a constraint would let invalid values through without a word.
                raise TypeError(f"{meta!r} cannot be checked without pydantic")
            keywords.update((k, v) for k, v in fields.items() if v is not None)
    if keywords:
        kept.append(msgspec.Meta(**keywords))
    inner = _to_msgspec(get_args(tp)[0])
    return Annotated[(inner, *kept)] if kept else inner


def _jsonable(value: Any) -> bool:
    try:
        msgspec.to_builtins(value)
    except TypeError:
        return False
    return True


def _msgspec_error(exc: msgspec.ValidationError) -> ArgumentError:
    text = str(exc)
    if missing := re.fullmatch(r"Object missing required field `(\w+)`", text):
        return ArgumentError(f"Missing required argument '{missing.group(1)}'")
    if at := re.search(r" - at `\$\.(\w+)", text):
        return ArgumentError(f"Invalid arguments for '{at.group(1)}': {text}")
    return ArgumentError(f"Invalid arguments: {text}")


class MsgspecBuilder:
    def __init__(self, strict: bool) -> None:
        self.strict = strict

    def arguments(self, params: list[tuple[str, Any, Any]]) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        schema_defaults: dict[str, Any] = {}
        for name, annotation, default in params:
            tp = _to_msgspec(annotation)
            if default is inspect.Parameter.empty:
                fields.append((name, tp))
            elif not _jsonable(default):  # fine as a default, but not in a schema
                fields.append((name, tp, msgspec.field(default_factory=_constant(default))))
            elif isinstance(default, (list, dict, set, bytearray)) and default:
                # msgspec refuses these, rightly: a mutable default must not be shared between calls.
                fields.append(
                    (name, tp, msgspec.field(default_factory=functools.partial(copy.deepcopy, default)))
                )
                schema_defaults[name] = msgspec.to_builtins(default)
            else:
                fields.append((name, tp, default))
        struct = msgspec.defstruct(ARGS_NAME, fields, kw_only=True)
        schemas, components = msgspec.json.schema_components([struct], ref_template=DEFS + "{name}")
        schema = rooted({**schemas[0], "$defs": components})
        schema.pop("title", None)
        if not schema.get("required"):
            schema.pop("required", None)
        for name, value in schema_defaults.items():
            schema["properties"][name]["default"] = value

        convert, asdict, error, strict = (
            msgspec.convert,
            msgspec.structs.asdict,
            msgspec.ValidationError,
            self.strict,
        )

        def bind(arguments: Any) -> dict[str, Any]:
            try:
                return asdict(convert(arguments, struct, strict=strict))
            except error as exc:
                raise _msgspec_error(exc) from None

        return schema, bind

    def value(self, annotation: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        schemas, components = msgspec.json.schema_components(
            [_to_msgspec(annotation)], ref_template=DEFS + "{name}"
        )
        schema = dict(schemas[0])
        if components:
            schema["$defs"] = dict(components)
        return schema, to_json


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value
