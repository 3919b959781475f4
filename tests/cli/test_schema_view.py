"""The schema reader (mcpkit._schema_view) on the schemas servers write: references, optional
values, unions, nested objects and arrays of them, enums, constants, formats, bounds, cycles."""

from __future__ import annotations

import json
from typing import Any

from mcpkit._schema_view import field_lines, find_field, read_schema, signature, type_text

ORDER: dict[str, Any] = {
    "$defs": {
        "Line": {
            "title": "Line",
            "type": "object",
            "required": ["sku"],
            "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1, "default": 1}},
        },
        "Order": {
            "title": "Order",
            "type": "object",
            "required": ["item", "qty"],
            "properties": {
                "item": {"type": "string", "description": "what to buy"},
                "qty": {"type": "integer", "minimum": 1},
                "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
            },
        },
    },
    "type": "object",
    "required": ["order"],
    "properties": {
        "order": {"$ref": "#/$defs/Order"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
}


def test_the_tree_is_json_and_resolves_references() -> None:
    root = read_schema(ORDER)
    assert json.loads(json.dumps(root)) == root
    order = find_field(root, "order")
    assert order is not None and order["kind"] == "object" and order["type_name"] == "Order"
    assert [f["name"] for f in order["fields"]] == ["item", "qty", "lines"]
    sku = find_field(root, "order.lines.0.sku")
    assert sku is not None and sku["path"] == "order.lines[].sku" and sku["required"]
    assert find_field(root, "order.lines[].qty") == find_field(root, "order.lines.3.qty")
    assert find_field(root, "order.nothing") is None


def test_optional_is_a_nullable_field_with_its_default() -> None:
    note = find_field(read_schema(ORDER), "note")
    assert note is not None
    assert (note["kind"], note["nullable"], note["required"], note["default"]) == (
        "string",
        True,
        False,
        None,
    )


def test_the_signature_is_compact() -> None:
    assert signature("place_order", ORDER) == (
        "place_order(order: Order{item: str, qty: int ≥1, lines?: list[Line{sku: str, qty?: int ≥1}]}, note?: str)"
    )


def test_a_cycle_is_shown_not_followed() -> None:
    schema = {
        "$defs": {
            "Node": {
                "title": "Node",
                "type": "object",
                "required": ["value"],
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            }
        },
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
    }
    assert signature("tree", schema) == "tree(root: Node{value: int, children?: list[Node]})"
    inner = find_field(read_schema(schema), "root.children[]")
    assert inner is not None and inner["kind"] == "cycle" and inner["ref"] == "#/$defs/Node"
    assert read_schema({"$ref": "#"})["kind"] == "cycle"


def test_unions_enums_consts_formats_and_bounds() -> None:
    schema = {
        "type": "object",
        "required": ["shape", "when"],
        "properties": {
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "title": "Circle",
                        "properties": {
                            "kind": {"const": "circle"},
                            "r": {"type": "number", "exclusiveMinimum": 0},
                        },
                    },
                    {
                        "type": "object",
                        "title": "Square",
                        "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                    },
                ]
            },
            "when": {"type": "string", "format": "date-time"},
            "unit": {"enum": ["cm", "in", None]},
            "id": {"type": ["integer", "string"]},
            "name": {"type": "string", "minLength": 1, "maxLength": 20},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            "anything": {},
        },
    }
    assert signature("draw", schema) == (
        'draw(shape: Circle{kind?: "circle", r?: float >0} | Square{kind?: "square", side?: float}, '
        'when: str<date-time>, unit?: "cm" | "in", id?: int | str, name?: str (1..20 chars), '
        "tags?: dict[str, str], anything?: any)"
    )
    root = read_schema(schema)
    shape = find_field(root, "shape")
    assert shape is not None and [o["type_name"] for o in shape["options"]] == ["Circle", "Square"]
    assert find_field(root, "shape.r") is not None  # dotted keys look into the union's options
    unit = find_field(root, "unit")
    assert unit is not None and unit["enum"] == ["cm", "in"] and unit["nullable"]
    tags = find_field(root, "tags.anykey")
    assert tags is not None and tags["kind"] == "string"


def test_nullable_required_field_and_old_allof_references() -> None:
    schema = {
        "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "type": "object",
        "required": ["home"],
        "properties": {
            "home": {
                "anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}],
                "description": "where you live",
            },
            "work": {"allOf": [{"$ref": "#/$defs/Address"}], "description": "where you work"},
        },
    }
    root = read_schema(schema)
    home = find_field(root, "home")
    assert home is not None and home["description"] == "where you live" and home["type_name"] == "Address"
    assert type_text(home) == "Address{city?: str} | None"
    assert field_lines(root) == [
        "home: Address | None (required) - where you live",
        "  city: str",
        "work: Address - where you work",
        "  city: str",
    ]


def test_what_it_cannot_read_is_any() -> None:
    schemas: list[Any] = [None, True, [], {"$ref": "https://example.com/x.json"}, {"$ref": "#/$defs/missing"}]
    for schema in schemas:
        root = read_schema(schema)
        assert root["kind"] == "any"
    assert signature("f", {"type": "object", "properties": {"x": {"$ref": "other.json#/A"}}}) == "f(x?: A)"
