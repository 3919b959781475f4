"""Parameter descriptions from a docstring: Google (``Args:``) and NumPy (``Parameters``) sections.

Part of :mod:`mcpkit._signature`: the description of a tool is its docstring without these
sections, and each entry describes the parameter of that name in the ``inputSchema``.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["parse_docstring"]

_GOOGLE_ARGS: Final = re.compile(r"(Args|Arguments|Parameters|Keyword Args|Keyword Arguments):")
_NUMPY_HEADER: Final = re.compile(r"-{3,}")
_NUMPY_ARGS: Final = frozenset({"Parameters", "Other Parameters"})
_ENTRY: Final = re.compile(r"\**(\w+)\s*(?:\([^)]*\))?\s*(?::\s*(.*))?")


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """The description without its parameter sections, and those sections' entries.

    Google style (``Args:`` then indented ``name (type): text``) and NumPy style (``Parameters``
    underlined, then ``name : type`` with the text indented below) are understood.
    """
    if not doc:
        return None, {}
    lines = doc.splitlines()
    kept: list[str] = []
    args: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line, stripped = lines[i], lines[i].strip()
        numpy = (
            stripped in _NUMPY_ARGS and i + 1 < len(lines) and _NUMPY_HEADER.fullmatch(lines[i + 1].strip())
        )
        if not numpy and not _GOOGLE_ARGS.fullmatch(stripped):
            kept.append(line)
            i += 1
            continue
        header_indent = _indent(line)
        i += 2 if numpy else 1
        entry_indent: int | None = None
        current: str | None = None
        while i < len(lines):
            line, stripped = lines[i], lines[i].strip()
            indent = _indent(line)
            if stripped and (
                indent < header_indent
                or (indent == header_indent and not numpy)
                or (i + 1 < len(lines) and _NUMPY_HEADER.fullmatch(lines[i + 1].strip()))
            ):
                break  # the next section
            i += 1
            if not stripped:
                continue
            entry = _ENTRY.fullmatch(stripped)
            if entry and (entry_indent is None or indent <= entry_indent):
                entry_indent, current = indent, entry.group(1)
                # In NumPy style the text after the colon is the type, not a description.
                args[current] = "" if numpy else (entry.group(2) or "")
            elif current is not None:  # the description goes on
                args[current] = f"{args[current]} {stripped}".strip()
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text or None, {k: v for k, v in args.items() if v}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
