"""Parameter descriptions from a docstring: Google (``Args:``) and NumPy (``Parameters``) sections.

Part of :mod:`mcpkit._signature`: the description of a tool is its docstring without these
sections, and each entry describes the parameter of that name in the ``inputSchema``.
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["parse_docstring"]

# Every tool's docstring is read when it is decorated, at the server's start-up: the headers are
# recognised without regular expressions (compiling one costs more than reading the docstrings), and
# the one pattern an entry needs is compiled when a docstring first has a parameter section.
_GOOGLE_ARGS: Final = frozenset(
    f"{header}:" for header in ("Args", "Arguments", "Parameters", "Keyword Args", "Keyword Arguments")
)
_NUMPY_ARGS: Final = frozenset({"Parameters", "Other Parameters"})


def _numpy_header(text: str) -> bool:
    """Whether *text* underlines a NumPy section: three dashes or more, nothing else."""
    return len(text) >= 3 and not text.strip("-")


@functools.cache
def _entry() -> re.Pattern[str]:
    return re.compile(r"\**(\w+)\s*(?:\([^)]*\))?\s*(?::\s*(.*))?")


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
        numpy = stripped in _NUMPY_ARGS and i + 1 < len(lines) and _numpy_header(lines[i + 1].strip())
        if not numpy and stripped not in _GOOGLE_ARGS:
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
                or (i + 1 < len(lines) and _numpy_header(lines[i + 1].strip()))
            ):
                break  # the next section
            i += 1
            if not stripped:
                continue
            entry = _entry().fullmatch(stripped)
            if entry and (entry_indent is None or indent <= entry_indent):
                entry_indent, current = indent, entry.group(1)
                # In NumPy style the text after the colon is the type, not a description.
                args[current] = "" if numpy else (entry.group(2) or "")
            elif current is not None:  # the description goes on
                args[current] = f"{args[current]} {stripped}".strip()
    text = "\n".join(kept)
    while "\n\n\n" in text:  # runs of blank lines left where sections were, as one blank line
        text = text.replace("\n\n\n", "\n\n")
    text = text.strip()
    return text or None, {k: v for k, v in args.items() if v}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
