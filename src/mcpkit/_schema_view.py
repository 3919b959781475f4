"""A tool's JSON Schema as text for people: a one-line signature, a type, a detail view's lines.

Built on the tree :func:`read_schema` reads (:mod:`mcpkit._schema_tree`, re-exported here with
:func:`find_field`, so one import serves the CLI, the host shell and the inspector).
:func:`signature` prints the compact form CLI listings show; :func:`field_lines` what a detail view
prints under it.

The tree module's example reads a ``$ref`` and a nullable union; here, the forms a signature gives
an enum, a bound, an optional field and an array of objects:

>>> schema = {"type": "object", "required": ["city"], "properties": {
...     "city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "default": 3},
...     "units": {"enum": ["metric", "imperial"]},
...     "stops": {"type": "array", "items": {"title": "Stop", "type": "object",
...                                          "properties": {"name": {"type": "string"}}}}}}
>>> signature("trip", schema)
'trip(city: str, days?: int ≥1, units?: "metric" | "imperial", stops?: list[Stop{name?: str}])'
"""

from __future__ import annotations

import json
from typing import Any, Final

from ._schema_tree import Field, Kind, find_field, read_schema

__all__ = [
    "Field",
    "Kind",
    "arguments_text",
    "field_lines",
    "find_field",
    "read_schema",
    "signature",
    "type_text",
]

#: How :func:`type_text` names JSON types: as Python would, since tools are written in it.
_SHORT: Final = {
    "string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None", "any": "any",
}  # fmt: skip
#: How deep :func:`type_text` spells out nested objects before showing just ``Name{…}``.
_DEPTH: Final = 2


def type_text(field: Field, depth: int = 0) -> str:
    """A field's type, compactly: ``str``, ``int ≥1``, ``list[Item{sku: str}]``, ``"cm" | "in"``,
    ``Order{item: str, qty?: int}``, ``str | None`` (nullable), ``Node`` (a cycle).

    >>> type_text(read_schema({"type": "array", "items": {"type": "string", "format": "email"}}))
    'list[str<email>]'
    """
    text = _bare_type(field, depth)
    if field.get("nullable") and field.get("kind") != "null":
        text += " | None"
    return text


def _bare_type(field: Field, depth: int) -> str:
    kind = field.get("kind", "any")
    if kind == "enum":
        return " | ".join(_json(value) for value in field.get("enum", []))
    if kind == "const":
        return _json(field.get("const"))
    if kind in ("cycle", "any"):
        return field.get("type_name", "any")  # a reference not followed still names its type
    if kind == "union":
        return " | ".join(dict.fromkeys(type_text(option, depth) for option in field.get("options", [])))
    if kind == "array":
        items = field.get("items")
        inner = type_text(items, depth) if items is not None else "any"
        return f"list[{inner}]" + _bounds(field, "minItems", "maxItems", " items")
    if kind == "object":
        return _object_text(field, depth)
    text = _SHORT.get(kind, kind)
    if "format" in field:
        text += f"<{field['format']}>"
    if kind in ("integer", "number"):
        text += _numeric_bounds(field)
    elif kind == "string":
        text += _bounds(field, "minLength", "maxLength", " chars")
    return text


def _object_text(field: Field, depth: int) -> str:
    name = field.get("type_name", "")
    children = field.get("fields", [])
    additional = field.get("additional")
    if not children:
        if additional is not None:
            return f"dict[str, {type_text(additional, depth)}]"
        return name or "dict"
    if depth >= _DEPTH:
        return f"{name or 'dict'}{{…}}"
    inner = ", ".join(_argument_text(child, depth + 1) for child in children)
    return f"{name}{{{inner}}}"


def _argument_text(field: Field, depth: int) -> str:
    """``name: type`` for a required field, ``name?: type`` for one that may be left out (an
    optional one that may also be null shows no ``| None``: leaving it out is the usual way)."""
    optional = not field.get("required")
    text = _bare_type(field, depth)
    if field.get("nullable") and not optional and field.get("kind") != "null":
        text += " | None"
    return f"{field.get('name', '')}{'?' if optional else ''}: {text}"


def _numeric_bounds(field: Field) -> str:
    parts = []
    if "minimum" in field:
        parts.append(f"≥{_number(field['minimum'])}")
    if "exclusiveMinimum" in field:
        parts.append(f">{_number(field['exclusiveMinimum'])}")
    if "maximum" in field:
        parts.append(f"≤{_number(field['maximum'])}")
    if "exclusiveMaximum" in field:
        parts.append(f"<{_number(field['exclusiveMaximum'])}")
    return (" " + " ".join(parts)) if parts else ""


def _bounds(field: Field, low: str, high: str, unit: str) -> str:
    """`` (1..10 chars)``, `` (≥1 items)``, `` (≤3 items)``, or nothing."""
    least, most = field.get(low), field.get(high)
    if least is None and most is None:
        return ""
    if least is not None and most is not None:
        return f" ({least}..{most}{unit})"
    return f" (≥{least}{unit})" if least is not None else f" (≤{most}{unit})"


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def signature(name: str, schema: Any) -> str:
    """``name(arg: type, optional?: type)`` for a tool's *name* and ``inputSchema``.

    >>> signature("ping", {"type": "object", "properties": {}})
    'ping()'
    """
    root = read_schema(schema)
    return f"{name}({arguments_text(root)})"


def arguments_text(root: Field) -> str:
    """The part of a signature between its parentheses: ``order: Order{…}, note?: str``."""
    return ", ".join(_argument_text(child, 0) for child in root.get("fields", []))


def field_lines(root: Field, indent: str = "  ") -> list[str]:
    """Each field of *root* on its own line, nested fields indented below their object (an
    array of objects shows its item's fields), with whether it is required, its default and its
    description: what a detail view prints.

    >>> for line in field_lines(read_schema({"type": "object", "required": ["to"], "properties": {
    ...     "to": {"type": "object", "title": "Address", "required": ["city"],
    ...            "properties": {"city": {"type": "string", "description": "where"}}},
    ...     "unit": {"enum": ["cm", "in"], "default": "cm"}}})):
    ...     print(line)
    to: Address (required)
      city: str (required) - where
    unit: "cm" | "in" = "cm"
    """
    lines: list[str] = []
    _lines(root, "", indent, lines)
    return lines


def _lines(parent: Field, prefix: str, indent: str, lines: list[str]) -> None:
    for child in parent.get("fields", []):
        line = f"{prefix}{child.get('name', '')}: {_short_type(child)}"
        if child.get("required"):
            line += " (required)"
        if "default" in child:
            line += f" = {_json(child['default'])}"
        if child.get("description"):
            line += f" - {child['description']}"
        lines.append(line)
        nested = _nested(child)
        if nested is not None:
            _lines(nested, prefix + indent, indent, lines)


def _short_type(field: Field) -> str:
    """A field's type for its own line: objects by name only (their fields follow, indented)."""
    nested = _nested(field)
    if nested is None:
        return type_text(field)
    text = nested.get("type_name") or "object"
    if field.get("kind") == "array":
        text = f"list[{text}]" + _bounds(field, "minItems", "maxItems", " items")
    return text + (" | None" if field.get("nullable") else "")


def _nested(field: Field) -> Field | None:
    """The object whose fields are listed under *field*: itself, or its items' object."""
    if field.get("kind") == "object" and field.get("fields"):
        return field
    items = field.get("items")
    if (
        field.get("kind") == "array"
        and items is not None
        and items.get("kind") == "object"
        and items.get("fields")
    ):
        return items
    return None
