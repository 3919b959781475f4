"""Reading and editing JSON with comments (JSONC) without rewriting the rest of the file.

VS Code's and Zed's settings are JSONC: ``//`` and ``/* */`` comments and trailing commas. Loading
such a file and dumping it again would drop every comment and reorder nothing but reformat all, so an
edit here is a text splice: the file is scanned once into values that know their character spans,
and one member is inserted or replaced in place. Everything outside the splice stays byte for byte.
Plain JSON files (Claude's, Cursor's, Windsurf's) go through the same path, so a user's own layout
survives there too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JSONCError", "loads", "set_member"]


class JSONCError(ValueError):
    """The text is not JSON (with comments); the message says where."""


@dataclass
class _Node:
    start: int
    end: int
    value: Any = None
    # For objects: (key, key_start, value node) in file order.
    members: list[tuple[str, int, _Node]] = field(default_factory=list)
    is_object: bool = False


_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> JSONCError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return JSONCError(f"{what} at line {line}, column {column}")

    def skip(self) -> None:
        """Skip whitespace and comments."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    raise self.fail("unterminated comment")
                self.pos = close + 2
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos : self.pos + 1]

    def value(self) -> _Node:
        char = self.peek()
        start = self.pos
        if char == "{":
            return self.object()
        if char == "[":
            self.pos += 1
            items = []
            while self.peek() != "]":
                items.append(self.value().value)
                if self.peek() == ",":
                    self.pos += 1
                elif self.peek() != "]":
                    raise self.fail("expected ',' or ']'")
            self.pos += 1
            return _Node(start, self.pos, items)
        if char == '"':
            return _Node(start, self.string_end(), json.loads(self.text[start : self.pos]))
        match = _LITERAL.match(self.text, self.pos)
        if match is None:
            raise self.fail("expected a JSON value" if char else "unexpected end of file")
        self.pos = match.end()
        return _Node(start, self.pos, json.loads(match.group()))

    def string_end(self) -> int:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            raise self.fail("bad string")
        self.pos = match.end()
        return self.pos

    def object(self) -> _Node:
        node = _Node(self.pos, -1, {}, is_object=True)
        self.pos += 1
        while self.peek() != "}":
            if self.peek() != '"':
                raise self.fail("expected a key in double quotes")
            key_start = self.pos
            key = json.loads(self.text[key_start : self.string_end()])
            if self.peek() != ":":
                raise self.fail("expected ':'")
            self.pos += 1
            child = self.value()
            node.members.append((key, key_start, child))
            node.value[key] = child.value
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise self.fail("expected ',' or '}'")
        self.pos += 1
        node.end = self.pos
        return node


def _parse(text: str) -> _Node:
    parser = _Parser(text)
    root = parser.value()
    if parser.peek():
        raise parser.fail("unexpected text after the top-level value")
    return root


def _is_empty(text: str) -> bool:
    """Whether *text* holds no value at all: nothing, whitespace or comments only."""
    return not _Parser(text).peek()


def loads(text: str) -> Any:
    """The value of a JSONC document (one with no value, only blanks or comments, is ``{}``)."""
    return {} if _is_empty(text) else _parse(text).value


def _only_comments(text: str) -> bool:
    """Whether *text* is blanks and whole comments only (a block comment going on past it is not)."""
    try:
        return _is_empty(text)
    except JSONCError:
        return False


def _line_indent(text: str, pos: int) -> str:
    """The blanks that start the line holding *pos*."""
    line = text[text.rfind("\n", 0, pos) + 1 :]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _indent_unit(text: str) -> str:
    """The file's indentation step: the first indented line's leading whitespace, else two spaces."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _dump(value: Any, indent: str, unit: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _insert(text: str, node: _Node, key: str, value: Any, unit: str) -> str:
    """Add ``"key": value`` as the last member of the object *node*."""
    closing_indent = _line_indent(text, node.end - 1)
    if node.members:
        _, key_start, last = node.members[-1]
        indent = _line_indent(text, key_start)
        # Where the new member goes: after the last value, its trailing comma if any, and any comment
        # that ends on the same line, so that comments stay beside the member they describe.
        parser = _Parser(text)
        parser.pos = last.end
        comma = parser.peek() == ","
        after = parser.pos + 1 if comma else last.end
        line_end = text.find("\n", after)
        if 0 <= line_end < node.end and _only_comments(text[after:line_end]):
            after = line_end
        member = f"\n{indent}{json.dumps(key, ensure_ascii=False)}: {_dump(value, indent, unit)}"
        if comma:
            member += ","
            return text[:after] + member + text[after:]
        return text[: last.end] + "," + text[last.end : after] + member + text[after:]
    indent = closing_indent + unit
    member = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, indent, unit)}"
    inner = text[node.start + 1 : node.end - 1]
    if not inner.strip():
        return f"{text[: node.start + 1]}\n{indent}{member}\n{closing_indent}{text[node.end - 1 :]}"
    return f"{text[: node.start + 1]}\n{indent}{member}{text[node.start + 1 :]}"


def set_member(text: str, path: tuple[str, ...], key: str, value: Any) -> str:
    """*text* with ``key: value`` set in the object at *path* (object keys from the top level).

    A missing object on the way is created; an existing member named *key* has its value replaced
    (the last one, if the key is repeated, as JSON parsers keep the last); a new one goes last.

    Raises:
        JSONCError: the text is not JSONC, or something on *path* is not an object.
    """
    if _is_empty(text):  # a new file, or one with comments only: they stay above the new object
        keys = (*path, key)
        nested: Any = value
        for name in reversed(keys[1:]):
            nested = {name: nested}
        before = text if not text or text.endswith("\n") else text + "\n"
        return before + json.dumps({keys[0]: nested}, indent=2, ensure_ascii=False) + "\n"
    unit = _indent_unit(text)
    node = _parse(text)
    for depth, name in enumerate(path):
        if not node.is_object:
            raise JSONCError(f"{'.'.join(path[:depth]) or 'the top level'} is not an object")
        found = [child for member, _, child in node.members if member == name]
        if not found:
            nested = {key: value}
            for outer in path[depth + 1 :][::-1]:
                nested = {outer: nested}
            return _insert(text, node, name, nested, unit)
        node = found[-1]
    if not node.is_object:
        raise JSONCError(f"{'.'.join(path) or 'the top level'} is not an object")
    if any(member == key for member, _, _ in node.members):
        _, key_start, target = [m for m in node.members if m[0] == key][-1]
        indent = _line_indent(text, key_start)
        return text[: target.start] + _dump(value, indent, unit) + text[target.end :]
    return _insert(text, node, key, value, unit)
