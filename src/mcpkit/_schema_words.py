"""Arguments typed in as ``key=value`` words, read against a tool's input schema (for the CLI and the host shell).

A string field takes the text as it is; any other field takes the text as JSON (``qty=2``,
``tags=["a","b"]``, ``order={"item": "pen"}``), a boolean also ``yes``/``no``; ``key:=JSON`` is
always JSON. A dotted key sets a nested field (``order.item=pen order.qty=2``; ``lines.0.sku=pen``
reaches into an array), on top of what a JSON value or the base object already gave. Keys are
checked against the schema (:func:`suggest` says "did you mean"), and :func:`missing` lists the
required fields left out, nested ones included, so that nothing is sent that the server must refuse.

>>> schema = {"type": "object", "required": ["order"], "properties": {"order": {
...     "type": "object", "required": ["item", "qty"],
...     "properties": {"item": {"type": "string"}, "qty": {"type": "integer"}}}}}
>>> arguments_from_words(["order.item=pen", "order.qty=2"], schema, "tool place_order")
{'order': {'item': 'pen', 'qty': 2}}
>>> missing({"order": {"item": "pen"}}, schema)
['order.qty']
>>> arguments_from_words(["order.qty=two"], schema, "tool place_order")
Traceback (most recent call last):
...
mcpkit._schema_words.WordsError: argument order.qty='two': order.qty must be an integer (as JSON)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ._schema_view import Field, find_field, read_schema

__all__ = ["WordsError", "arguments_from_words", "json_types", "missing", "suggest", "typed_value"]

_YES: Final = frozenset({"true", "yes", "y", "on", "1"})
_NO: Final = frozenset({"false", "no", "n", "off", "0"})
_NOT_JSON: Final = object()


class WordsError(ValueError):
    """A word that cannot be read: its message is one line for the person who typed it."""


def suggest(name: str, known: Iterable[str], kind: str, where: str) -> str:
    """One line saying *name* is not a known *kind*, with the closest known names, or all of them.

    >>> suggest("forecats", ["forecast", "alerts"], "tool", "weather")
    "no tool 'forecats' on weather; did you mean forecast?"
    """
    import difflib  # here: only a name that is not known pays for it

    known = list(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        return f"no {kind} {name!r} on {where}; did you mean {' or '.join(close)}?"
    if not known:
        return f"no {kind} {name!r} on {where}; it has none"
    shown = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    return f"no {kind} {name!r} on {where}; it has {shown}"


def json_types(field: Field | None) -> set[str]:
    """The JSON types a field allows (an enum's or a constant's values' types, a union's options');
    empty when the schema does not say."""
    if field is None:
        return set()
    kind = field.get("kind", "any")
    found: set[str]
    if kind == "enum":
        found = {_json_type(v) for v in field.get("enum", [])}
    elif kind == "const":
        found = {_json_type(field.get("const"))}
    elif kind == "union":
        found = set()
        for option in field.get("options", []):
            found |= json_types(option)
    elif kind in ("any", "cycle"):
        return set()
    else:
        found = {kind}
    if field.get("nullable"):
        found.add("null")
    return found


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fits(value: Any, types: set[str]) -> bool:
    """Whether *value* has one of *types* (an integer is a number too; 3.0 is no integer)."""
    kind = _json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def typed_value(key: str, text: str, field: Field | None) -> Any:
    """*text* as the value of *field* (at *key*): as is for a string, JSON for anything else.

    Raises:
        WordsError: *text* is not a value of the type the field wants (naming the key).
    """
    types = json_types(field)
    if types == {"string"}:
        return text
    if "boolean" in types and text.lower() in _YES | _NO:
        return text.lower() in _YES
    try:
        value = json.loads(text)
    except ValueError:
        value = _NOT_JSON
    if value is not _NOT_JSON and (not types or _fits(value, types)):
        return value
    if "string" in types or not types:
        return text  # a string is allowed (or nothing is said): the text as the user wrote it
    wanted = " or ".join(sorted(types))
    raise WordsError(f"argument {key}={text!r}: {key} must be {_article(wanted)} (as JSON)")


def _article(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def arguments_from_words(
    words: Sequence[str], schema: Any, what: str, base: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The arguments of a call from ``key=value`` words (``key:=JSON`` for raw JSON), set over
    *base* (a JSON object given first). *schema* is the tool's ``inputSchema``, or ``None`` when
    values are plain strings with flat keys (prompt arguments); *what* names the tool in errors.
    Required fields are not checked here: see :func:`missing`.

    Raises:
        WordsError: a word is not ``key=value``, its key is unknown, its value has the wrong type.
    """
    # A copy: dotted keys fill in nested objects, and the caller's base stays as it was.
    arguments: dict[str, Any] = copy.deepcopy(base) if base else {}
    root = read_schema(schema) if schema is not None else None
    # A schema that lists its properties takes no others (unless it says so); an object below
    # that lists none is a free-form dict.
    closed = isinstance(schema, dict) and "properties" in schema
    given: set[str] = set()
    for word in words:
        value: Any = None
        key, raw, text = _split_word(word, what)
        if key in given:
            raise WordsError(f"argument {key} is given twice")
        given.add(key)
        if raw:
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise WordsError(f"argument {key}:={text!r} is not valid JSON: {exc}") from None
        if root is None:
            arguments[key] = value if raw else text
            continue
        path = _path(root, key, what, closed)
        field = find_field(root, ".".join(path))
        _set(arguments, path, value if raw else typed_value(key, text, field), key)
    return arguments


def _path(root: Field, key: str, what: str, closed: bool) -> list[str]:
    """*key*'s steps from the root, each checked against the schema: a whole key that names a
    property is one step (a property may have a dot in its name), else the dotted parts."""
    parts = [key] if _known(root, key) or "." not in key else key.split(".")
    field: Field | None = root
    for depth, part in enumerate(parts):
        if field is None or field.get("kind") in ("any", "cycle", "union"):
            break  # the schema says nothing more precise below here: take the key as written
        kind = field.get("kind")
        if kind == "array":
            if not part.isdigit():
                where = ".".join(parts[:depth]) or what
                raise WordsError(f"argument {key}: {where} is a list; use {where}.0, {where}.1, ...")
            field = field.get("items")
            continue
        if kind != "object":
            where = ".".join(parts[:depth])
            raise WordsError(f"argument {key}: {where} is {_article(kind or 'value')}, it has no fields")
        listed = bool(field.get("fields")) or (closed and depth == 0)
        if not _known(field, part) and "additional" not in field and listed:
            names = [str(f.get("name")) for f in field.get("fields", [])]
            where = what if depth == 0 else f"{what} ({'.'.join(parts[:depth])})"
            raise WordsError(suggest(part, names, "argument" if depth == 0 else "field", where))
        field = _child(field, part)
    return parts


def _known(field: Field, name: str) -> bool:
    return any(child.get("name") == name for child in field.get("fields", []))


def _child(field: Field, name: str) -> Field | None:
    for child in field.get("fields", []):
        if child.get("name") == name:
            return child
    return field.get("additional")


def _set(arguments: dict[str, Any], path: list[str], value: Any, key: str) -> None:
    """Put *value* at *path*, making the objects and lists on the way (over what is there)."""
    node: Any = arguments
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        here = ".".join(path[: depth + 1])
        if isinstance(node, list):
            index = int(part)
            if index > len(node):
                raise WordsError(f"argument {key}: set {'.'.join(path[:depth])}.{len(node)} first")
            if index == len(node):
                node.append(None)
            if last:
                node[index] = value
                return
            if not isinstance(node[index], (dict, list)):
                node[index] = [] if path[depth + 1].isdigit() else {}
            node = node[index]
            continue
        if not isinstance(node, dict):
            raise WordsError(f"argument {key}: {'.'.join(path[:depth])} is not an object")
        if last:
            node[part] = value
            return
        if part not in node or not isinstance(node[part], (dict, list)):
            if part in node and node[part] is not None:
                raise WordsError(f"argument {key}: {here} is already {json.dumps(node[part])}")
            node[part] = [] if path[depth + 1].isdigit() else {}
        node = node[part]


def missing(arguments: dict[str, Any], schema: Any) -> list[str]:
    """The dotted paths of required fields not in *arguments*: the top level's, and those of each
    nested object that is there (an array's objects as ``lines.0.sku``)."""
    found: list[str] = []
    _missing(arguments, read_schema(schema), "", found)
    return found


def _missing(value: Any, field: Field | None, prefix: str, found: list[str]) -> None:
    if field is None:
        return
    kind = field.get("kind")
    if kind == "object" and isinstance(value, dict):
        for child in field.get("fields", []):
            name = str(child.get("name"))
            path = f"{prefix}.{name}" if prefix else name
            if name in value:
                _missing(value[name], child, path, found)
            elif child.get("required"):
                found.append(path)
    elif kind == "array" and isinstance(value, list):
        for index, item in enumerate(value):
            _missing(item, field.get("items"), f"{prefix}.{index}", found)


def _split_word(word: str, what: str) -> tuple[str, bool, str]:
    """``key=value`` -> (key, False, value); ``key:=json`` -> (key, True, json)."""
    key, equals, value = word.partition("=")
    raw = key.endswith(":")
    key = key.removesuffix(":")
    if not equals or not key:
        raise WordsError(
            f"argument {word!r} is not key=value (or give {what} one JSON object: '{{\"key\": ...}}')"
        )
    return key, raw, value
