"""A tool's JSON Schema as a tree of fields a person (or a form) can read.

A tool's ``inputSchema`` as servers write it is made for validators: a typed argument is a ``$ref``
into ``$defs``, ``str | None`` is an ``anyOf`` with ``{"type": "null"}``, a recursive model refers to
itself. :func:`read_schema` turns it into the tree a person needs: one :class:`Field` per property,
references resolved, an optional value marked ``nullable`` instead of being a union, a reference back
to a type being read shown as a ``cycle`` (not followed again), and each field's ``path``
(``order.item``) for the CLI's dotted ``key=value`` words. The tree is plain dicts and lists, so it
is JSON as it is (the inspector ships it to its page to build nested forms). The text renderings of
the tree (signatures, detail lines) are in :mod:`mcpkit._schema_view`.

>>> schema = {
...     "$defs": {"Order": {"title": "Order", "type": "object", "required": ["item", "qty"],
...               "properties": {"item": {"type": "string"},
...                              "qty": {"type": "integer", "minimum": 1}}}},
...     "type": "object", "required": ["order"],
...     "properties": {"order": {"$ref": "#/$defs/Order"},
...                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
... }
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

from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict

__all__ = ["Field", "Kind", "find_field", "read_schema"]

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
