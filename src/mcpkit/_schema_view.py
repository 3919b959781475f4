"""Reading a tool's JSON Schema for people: a tree of fields, and a one-line signature.

A tool's ``inputSchema`` as servers write it is made for validators: a typed argument is a ``$ref``
into ``$defs``, ``str | None`` is an ``anyOf`` with ``{"type": "null"}``, a recursive model refers to
itself. :func:`read_schema` turns it into the tree a person (or a form) needs: one :class:`Field` per
property, references resolved, an optional value marked ``nullable`` instead of being a union, a
reference back to a type being read shown as a ``cycle`` (not followed again), and each field's
``path`` (``order.item``) for the CLI's dotted ``key=value`` words. The tree is plain dicts and
lists, so it is JSON as it is (the inspector ships it to its page to build nested forms).
:func:`signature` prints the compact form CLI listings show.

>>> schema = {
...     "$defs": {"Order": {"title": "Order", "type": "object", "required": ["item", "qty"],
...               "properties": {"item": {"type": "string"},
...                              "qty": {"type": "integer", "minimum": 1}}}},
...     "type": "object", "required": ["order"],
...     "properties": {"order": {"$ref": "#/$defs/Order"},
...                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
... }
>>> signature("place_order", schema)
'place_order(order: Order{item: str, qty: int ≥1}, note?: str)'
>>> root = read_schema(schema)
>>> [(f["path"], f["kind"], f["required"]) for f in root["fields"]]
[('order', 'object', True), ('note', 'string', False)]
>>> root["fields"][1]["nullable"], root["fields"][1]["default"]
(True, None)
>>> find_field(root, "order.qty")["minimum"]
1

The reader does no I/O and never raises on a schema it cannot read: what it does not understand
becomes a field of kind ``any``, and only local references (``#...``) are followed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict

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

#: What a field holds. ``union``: one of ``options``; ``cycle``: a reference to a type being read
#: (its ``type_name`` and ``ref`` say which); ``any``: the schema does not say.
Kind = Literal[
    "object", "array", "string", "integer", "number", "boolean", "null", "enum", "const", "union", "any", "cycle",
]  # fmt: skip


class Field(TypedDict, total=False):
    """One field of the tree (plain JSON). Only ``kind``, ``path``, ``required`` and ``nullable``
    are always there; every other key is present only when the schema says it.

    ``name`` is the property's name (absent on the root, array items and union options); ``path``
    its dotted path from the root (``""`` for the root, ``order.lines[]`` for an array's items);
    ``type_name`` the name of its type (a ``$defs`` key or an object's ``title``); ``default``,
    ``enum`` and ``const`` are JSON values (a ``default`` of ``null`` is a default, so test for
    the key). ``fields`` are an object's properties in schema order; ``additional`` the schema of
    values an object takes beyond them (``dict[str, X]``); ``items`` an array's item;
    ``options`` a union's alternatives. Bounds and ``format`` are copied as the schema has them.
    """

    kind: Kind
    path: str
    required: bool
    nullable: bool
    name: str
    type_name: str
    title: str
    description: str
    default: Any
    enum: list[Any]
    const: Any
    format: str
    pattern: str
    minimum: float
    maximum: float
    exclusiveMinimum: float
    exclusiveMaximum: float
    multipleOf: float
    minLength: int
    maxLength: int
    minItems: int
    maxItems: int
    fields: list[Field]
    additional: Field
    items: Field
    options: list[Field]
    ref: str


#: Keywords copied from a schema onto its field as they are.
_COPIED: Final = (
    "title", "description", "format", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minLength", "maxLength", "minItems", "maxItems",
)  # fmt: skip
_SCALARS: Final[dict[Any, Kind]] = {
    "string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "null": "null",
}  # fmt: skip
#: How :func:`type_text` names JSON types: as Python would, since tools are written in it.
_SHORT: Final = {
    "string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None", "any": "any",
}  # fmt: skip
#: How deep :func:`type_text` spells out nested objects before showing just ``Name{…}``.
_DEPTH: Final = 2


def read_schema(schema: Any) -> Field:
    """The tree of fields of *schema* (a tool's ``inputSchema``, or any JSON Schema).

    The root is the field of the whole schema (``path`` ``""``; for a tool's input an ``object``
    whose ``fields`` are the arguments). References are read against *schema* itself.
    """
    root = schema if isinstance(schema, Mapping) else {}
    return _Reader(root).field(root, path="", required=True, seen=())


def find_field(root: Field, path: str) -> Field | None:
    """The field at dotted *path* (``order.item``; ``lines.0.sku`` or ``lines[].sku`` reach into an
    array's items; a key of a ``dict[str, X]`` reaches its values), or ``None``.

    An optional or union field is looked through: ``shipping.city`` finds ``city`` in an
    ``Address | None``, and in the first alternative of a union that has it.
    """
    field: Field | None = root
    for part in _split_path(path):
        if field is None:
            return None
        field = _child(field, part)
    return field


def _split_path(path: str) -> list[str]:
    parts: list[str] = []
    for piece in path.split("."):
        while piece.endswith("[]"):
            # "lines[]" is the items of "lines": two steps.
            parts.append(piece[:-2]) if piece[:-2] else None
            parts.append("[]")
            piece = ""
        if piece:
            parts.append(piece)
    return parts


def _child(field: Field, part: str) -> Field | None:
    kind = field.get("kind")
    if kind == "union":
        for option in field.get("options", []):
            found = _child(option, part)
            if found is not None:
                return found
        return None
    if kind == "array" and (part == "[]" or part.isdigit()):
        return field.get("items")
    if kind == "object":
        for child in field.get("fields", []):
            if child.get("name") == part:
                return child
        return field.get("additional")
    return None


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


class _Reader:
    """Reads one schema, resolving its local references against the document's root."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document

    def field(self, schema: Any, *, path: str, required: bool, seen: tuple[str, ...]) -> Field:
        """*schema* as a field; *seen* are the references being read above it (a cycle's guard)."""
        if not isinstance(schema, Mapping):
            # `true` (anything) or a malformed schema: nothing to say about the value.
            return {"kind": "any", "path": path, "required": required, "nullable": False}
        schema, type_name, seen, cycle = self._resolve(schema, seen)
        field: Field = {"kind": "any", "path": path, "required": required, "nullable": False}
        if cycle is not None:
            field["kind"] = "cycle"
            field["ref"] = cycle
            field["type_name"] = type_name or cycle.rsplit("/", 1)[-1]
            _copy(schema, field, ("description",))
            return field
        _copy(schema, field, _COPIED)
        if "default" in schema:
            field["default"] = schema["default"]
        if type_name:
            field["type_name"] = type_name
        self._fill(schema, field, path, seen)
        return field

    def _resolve(
        self, schema: Mapping[str, Any], seen: tuple[str, ...]
    ) -> tuple[Mapping[str, Any], str, tuple[str, ...], str | None]:
        """Follow ``$ref`` (and a one-element ``allOf``, pydantic's old way to annotate a reference):
        the schema it ends at (the referrer's own keywords over the target's), the last reference's
        name, the references seen, and the reference that closes a cycle, if one does."""
        type_name = ""
        for _ in range(32):  # a chain of references to references ends; a longer one is malformed
            all_of = schema.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
                rest = {k: v for k, v in schema.items() if k != "allOf"}
                schema = {**all_of[0], **rest}
            ref = schema.get("$ref")
            if not isinstance(ref, str):
                break
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            name = ref.rsplit("/", 1)[-1]
            if ref in seen:
                return rest, name, seen, ref
            target = self._lookup(ref)
            if target is None:  # remote or broken: say nothing about the value rather than guess
                return rest, name, seen, None
            seen = (*seen, ref)
            type_name = name if ref != "#" else str(self.document.get("title", ""))
            schema = {**target, **rest}
        return schema, type_name, seen, None

    def _lookup(self, ref: str) -> Mapping[str, Any] | None:
        """The schema a local JSON Pointer reference (``#/$defs/Order``) names, or ``None``."""
        if not ref.startswith("#"):
            return None
        node: Any = self.document
        for token in ref[1:].split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node if isinstance(node, Mapping) else None

    def _fill(self, schema: Mapping[str, Any], field: Field, path: str, seen: tuple[str, ...]) -> None:
        """Set the field's kind, and its children, from *schema* (references already followed)."""
        if isinstance(schema.get("enum"), list):
            values = list(schema["enum"])
            field["nullable"] = None in values
            field["kind"] = "enum"
            field["enum"] = [v for v in values if v is not None] or values
            return
        if "const" in schema:
            field["kind"] = "const"
            field["const"] = schema["const"]
            return
        alternatives = schema.get("anyOf", schema.get("oneOf"))
        if isinstance(alternatives, list):
            self._union(alternatives, field, path, seen)
            return
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if isinstance(k, str)]
            if "null" in kinds and len(kinds) > 1:
                field["nullable"] = True
                kinds.remove("null")
            if len(kinds) > 1:
                field["kind"] = "union"
                field["options"] = [
                    self.field({**schema, "type": k}, path=path, required=True, seen=seen) for k in kinds
                ]
                return
            kind = kinds[0] if kinds else None
        if kind is None and ("properties" in schema or "additionalProperties" in schema):
            kind = "object"
        if kind is None and ("items" in schema or "prefixItems" in schema):
            kind = "array"
        if kind == "object":
            self._object(schema, field, path, seen)
        elif kind == "array":
            field["kind"] = "array"
            items = schema.get("items")
            if items is not None and items is not False:
                field["items"] = self.field(items, path=f"{path}[]", required=True, seen=seen)
        elif kind in _SCALARS:
            field["kind"] = _SCALARS[kind]

    def _union(
        self,
        alternatives: list[Any],
        field: Field,
        path: str,
        seen: tuple[str, ...],
    ) -> None:
        """``anyOf``/``oneOf``: ``X | null`` becomes the field of ``X`` marked ``nullable``; more
        than one non-null alternative a ``union`` of them (each read as a field of the same path)."""
        options = [self.field(a, path=path, required=True, seen=seen) for a in alternatives]
        kept = [o for o in options if o["kind"] != "null"]
        nullable = len(kept) < len(options) or any(o.get("nullable") for o in kept)
        if len(kept) == 1:
            only = kept[0]
            own = {k: v for k, v in field.items() if k not in ("kind", "nullable")}
            for key in list(field):
                del field[key]  # type: ignore[misc]
            field.update(only)
            field.update(own)  # type: ignore[typeddict-item]  # the referrer's keywords win
        elif kept:
            field["kind"] = "union"
            for option in kept:
                option.pop("nullable", None)
                option["nullable"] = False
            field["options"] = kept
        else:
            field["kind"] = "null"
        field["nullable"] = nullable

    def _object(self, schema: Mapping[str, Any], field: Field, path: str, seen: tuple[str, ...]) -> None:
        field["kind"] = "object"
        if "type_name" not in field and isinstance(schema.get("title"), str) and path:
            # An object's title names its type (pydantic, msgspec and mcpkit put the class name there).
            field["type_name"] = schema["title"]
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        properties = schema.get("properties")
        children: list[Field] = []
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                child = self.field(
                    sub, path=f"{path}.{name}" if path else str(name), required=name in required, seen=seen
                )
                children.append({"name": str(name), **child})
        field["fields"] = children
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) or extra is True:
            field["additional"] = self.field(
                extra, path=f"{path}.*" if path else "*", required=True, seen=seen
            )


def _copy(schema: Mapping[str, Any], field: Field, keys: tuple[str, ...]) -> None:
    for key in keys:
        if key in schema:
            field[key] = schema[key]  # type: ignore[literal-required]
