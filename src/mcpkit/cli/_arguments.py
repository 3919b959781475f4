"""Arguments from the command line: ``key=value`` words typed by a tool's input schema (dotted keys
for nested fields, JSON anywhere: :mod:`mcpkit._schema_words`), and names checked against what the
server offers ("did you mean ...")."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from .._schema_view import read_schema
from .._schema_words import WordsError, missing, suggest
from .._schema_words import arguments_from_words as _from_words
from .._schema_words import typed_value as _typed_value
from ._exits import USAGE, CliError

__all__ = ["arguments_from_words", "check_name", "suggest", "typed_value"]


def check_name(name: str, known: Sequence[str], kind: str, where: str) -> None:
    """Raise a usage error when *name* is not among *known*."""
    if name not in known:
        raise CliError(suggest(name, known, kind, where), USAGE)


def typed_value(field: str, text: str, schema: Any) -> Any:
    """*text* as the value of the property *field* whose schema is *schema*: as is for a string,
    JSON for anything else.

    Raises:
        CliError: *text* is not a value of the type the schema wants (naming the field).
    """
    try:
        return _typed_value(field, text, read_schema(schema) if schema is not None else None)
    except WordsError as exc:
        raise CliError(str(exc), USAGE) from None


def arguments_from_words(words: Sequence[str], schema: Any, what: str) -> dict[str, Any]:
    """The arguments of a call: ``key=value`` words (``key:=json`` for raw JSON, ``a.b=value`` for
    a nested field), after an optional JSON object (``-``: read from stdin) that they override.

    *schema* is the tool's ``inputSchema`` (``None`` when values are plain strings, as prompt
    arguments are). Required fields that are missing, nested ones too, are reported before anything
    is sent.

    Raises:
        CliError: a word is not ``key=value``, a value has the wrong type, a required one is missing.
    """
    words = list(words)
    base: dict[str, Any] = {}
    if words and (words[0].lstrip().startswith("{") or words[0] == "-"):
        # One JSON object (or "-": read from stdin) as the base; key=value words after it override.
        base = _json_object(sys.stdin.read() if words[0] == "-" else words[0])
        words = words[1:]
    try:
        arguments = _from_words(words, schema, what, base)
    except WordsError as exc:
        raise CliError(str(exc), USAGE) from None
    left_out = missing(arguments, schema) if isinstance(schema, dict) else []
    if left_out:
        names = ", ".join(left_out)
        raise CliError(f"{what} needs {names}: add {' '.join(f'{n}=...' for n in left_out)}", USAGE)
    return arguments


def _json_object(text: str) -> dict[str, Any]:
    try:
        arguments = json.loads(text)
    except ValueError as exc:
        raise CliError(f"the arguments are not valid JSON: {exc}", USAGE) from None
    if not isinstance(arguments, dict):
        raise CliError("the arguments must be one JSON object", USAGE)
    return arguments
