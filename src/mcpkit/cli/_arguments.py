"""Arguments from the command line: ``key=value`` words typed by a JSON Schema, and names checked
against what the server offers ("did you mean ...")."""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ._exits import USAGE, CliError

__all__ = ["arguments_from_words", "check_name", "schema_types", "suggest"]

_YES = frozenset({"true", "yes", "y", "on", "1"})
_NO = frozenset({"false", "no", "n", "off", "0"})


def suggest(name: str, known: Iterable[str], kind: str, where: str) -> str:
    """One line saying *name* is not a known *kind*, with the closest known names, or all of them."""
    known = list(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        return f"no {kind} {name!r} on {where}; did you mean {' or '.join(close)}?"
    if not known:
        return f"no {kind} {name!r} on {where}; it has none"
    shown = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    return f"no {kind} {name!r} on {where}; it has {shown}"


def check_name(name: str, known: Sequence[str], kind: str, where: str) -> None:
    """Raise a usage error when *name* is not among *known*."""
    if name not in known:
        raise CliError(suggest(name, known, kind, where), USAGE)


def schema_types(schema: Any) -> set[str]:
    """The JSON types a property schema allows (``type``, ``enum``/``const`` values, ``anyOf``/``oneOf``);
    empty when the schema does not say."""
    if not isinstance(schema, dict):
        return set()
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    values = list(schema.get("enum", [])) if isinstance(schema.get("enum"), list) else []
    if "const" in schema:
        values.append(schema["const"])
    found.update(_json_type(v) for v in values)
    for key in ("anyOf", "oneOf"):
        alternatives = schema.get(key)
        if isinstance(alternatives, list):
            for alternative in alternatives:
                found |= schema_types(alternative)
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


def typed_value(field: str, text: str, schema: Any) -> Any:
    """*text* as the value of *field*: as is for a string, JSON for anything else.

    Raises:
        CliError: *text* is not a value of the type the schema wants (naming the field).
    """
    types = schema_types(schema)
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
    raise CliError(f"argument {field}={text!r}: {field} must be {_article(wanted)} (as JSON)", USAGE)


_NOT_JSON = object()


def _article(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def arguments_from_words(words: Sequence[str], schema: Any, what: str) -> dict[str, Any]:
    """The arguments of a call: ``key=value`` words (``key:=json`` for raw JSON), after an optional JSON
    object (``-``: read from stdin) that they override.

    *schema* is the tool's ``inputSchema`` (``None`` when values are plain strings, as prompt
    arguments are). Required properties that are missing are reported before anything is sent.

    Raises:
        CliError: a word is not ``key=value``, a value has the wrong type, a required one is missing.
    """
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    properties = properties if isinstance(properties, dict) else {}
    arguments: dict[str, Any] = {}
    words = list(words)
    if words and (words[0].lstrip().startswith("{") or words[0] == "-"):
        # One JSON object (or "-": read from stdin) as the base; key=value words after it override.
        arguments = _json_object(sys.stdin.read() if words[0] == "-" else words[0])
        words = words[1:]
    given: set[str] = set()
    for word in words:
        key, raw, value = _split_word(word, what)
        if key in given:
            raise CliError(f"argument {key} is given twice", USAGE)
        given.add(key)
        if (
            isinstance(schema, dict)
            and "properties" in schema
            and key not in properties
            and not _open_schema(schema)
        ):
            # A typo caught here reads better than the server's "missing location".
            raise CliError(suggest(key, properties, "argument", what), USAGE)
        if raw:
            try:
                arguments[key] = json.loads(value)
            except ValueError as exc:
                raise CliError(f"argument {key}:={value!r} is not valid JSON: {exc}", USAGE) from None
        elif schema is None:
            arguments[key] = value
        else:
            arguments[key] = typed_value(key, value, properties.get(key))
    required = schema.get("required", []) if isinstance(schema, dict) else []
    missing = [name for name in required if isinstance(name, str) and name not in arguments]
    if missing:
        names = ", ".join(missing)
        raise CliError(f"{what} needs {names}: add {' '.join(f'{n}=...' for n in missing)}", USAGE)
    return arguments


def _json_object(text: str) -> dict[str, Any]:
    try:
        arguments = json.loads(text)
    except ValueError as exc:
        raise CliError(f"the arguments are not valid JSON: {exc}", USAGE) from None
    if not isinstance(arguments, dict):
        raise CliError("the arguments must be one JSON object", USAGE)
    return arguments


def _open_schema(schema: Any) -> bool:
    """Whether the schema says it takes properties it does not list (``additionalProperties``)."""
    extra = schema.get("additionalProperties") if isinstance(schema, dict) else None
    return extra is True or isinstance(extra, dict)


def _split_word(word: str, what: str) -> tuple[str, bool, str]:
    """``key=value`` -> (key, False, value); ``key:=json`` -> (key, True, json)."""
    key, equals, value = word.partition("=")
    raw = key.endswith(":")
    key = key.removesuffix(":")
    if not equals or not key:
        raise CliError(
            f"argument {word!r} is not key=value (or give {what} one JSON object: '{{\"key\": ...}}')", USAGE
        )
    return key, raw, value
