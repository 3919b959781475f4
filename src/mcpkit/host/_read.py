"""Typed reading of a parsed config document, every mistake reported with its key path.

A config file is user input: ``mcpServers.weather.args[1]: expected a string, got 3`` says where
and what, where a bare ``KeyError`` or a server that fails to start says neither. JSONC (VS Code's
and Zed's files: comments and trailing commas) is read here too, since those hosts write it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["ConfigError", "Node", "loads_jsonc"]


class ConfigError(ValueError):
    """A config file that cannot be used: the message names the file, the key path and what was expected."""

    def __init__(self, message: str, *, path: str = "", source: str = "") -> None:
        where = f"{source}: " if source else ""
        where += f"{path}: " if path else ""
        super().__init__(where + message)
        self.path = path
        self.source = source


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class Node:
    """A value of the document and the key path that leads to it."""

    __slots__ = ("path", "source", "value")

    def __init__(self, value: Any, path: str = "", source: str = "") -> None:
        self.value = value
        self.path = path
        self.source = source

    def error(self, message: str) -> ConfigError:
        return ConfigError(message, path=self.path, source=self.source)

    def expected(self, what: str) -> ConfigError:
        return self.error(f"expected {what}, got {_kind(self.value)}")

    def child(self, key: str | int) -> Node:
        path = f"{self.path}[{key}]" if isinstance(key, int) else (f"{self.path}.{key}" if self.path else key)
        value: Any = None
        if isinstance(self.value, dict) and isinstance(key, str):
            value = self.value.get(key)
        elif isinstance(self.value, list) and isinstance(key, int) and key < len(self.value):
            value = self.value[key]
        return Node(value, path, self.source)

    def get(self, key: str) -> Node | None:
        """The member *key* of this object, or None when absent (null counts as absent)."""
        obj = self.object()
        return self.child(key) if obj.get(key) is not None else None

    def object(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            raise self.expected("an object")
        return self.value

    def items(self) -> list[tuple[str, Node]]:
        return [(key, self.child(key)) for key in self.object()]

    def string(self) -> str:
        if not isinstance(self.value, str):
            raise self.expected("a string")
        return self.value

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.expected("true or false")
        return self.value

    def number(self) -> float:
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)) or self.value <= 0:
            raise self.expected("a positive number")
        return float(self.value)

    def count(self) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int) or self.value < 1:
            raise self.expected("a positive whole number")
        return self.value

    def elements(self, what: str = "a list") -> list[Node]:
        """The members of this list (*what* names the list in the error when it is none)."""
        if not isinstance(self.value, list):
            raise self.expected(what)
        return [self.child(i) for i in range(len(self.value))]

    def strings(self) -> list[str]:
        return [element.string() for element in self.elements("a list of strings")]

    def string_map(self) -> dict[str, str]:
        """An object whose values are strings (numbers and booleans are written as JSON would)."""
        out = {}
        for key, node in self.items():
            value = node.value
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, (int, float)):
                value = str(value)
            elif not isinstance(value, str):
                raise node.expected("a string")
            out[key] = value
        return out

    def choice(self, *allowed: str) -> str:
        value = self.string()
        if value not in allowed:
            raise self.error(f"expected one of {', '.join(repr(a) for a in allowed)}, got {value!r}")
        return value


# Strings, // comments, /* */ comments: scanned together, so a "//" inside a string stays.
_TOKENS: Final = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA: Final = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[}\]])')


def loads_jsonc(text: str, source: str = "") -> Any:
    """JSON with ``//`` and ``/* */`` comments and trailing commas (VS Code's and Zed's files).

    Raises:
        ConfigError: not JSON even so; the message says the line and column.
    """

    def strip(found: re.Match[str]) -> str:
        token = found.group(0)
        if token.startswith('"'):
            return token
        return "".join(c if c == "\n" else " " for c in token)  # keep line numbers for errors

    cleaned = _TOKENS.sub(strip, text)
    cleaned = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), cleaned)
    try:
        return json.loads(cleaned) if cleaned.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", source=source
        ) from None
