"""Setting one entry of a top-level block mapping in a YAML file, keeping the rest of the text.

Goose keeps its extensions in ``config.yaml`` beside the user's provider settings and comments.
Loading and dumping the file would drop the comments and restyle everything, so the entry is spliced
in as text: the lines of the ``extensions:`` block are found by indentation, the entry's own lines
are replaced (or new ones appended to the block), and the result is parsed again and compared with
what was meant (:func:`set_entry` refuses rather than write anything else). A block the splice
cannot follow (flow style ``extensions: {...}``) is rewritten whole only when the file has no
comment to lose.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["YAMLEditError", "dumps", "loads", "set_entry"]


class YAMLEditError(ValueError):
    """The YAML file cannot be edited safely; the message says why."""


def loads(text: str) -> Any:
    """The document's value; an empty document is ``{}``."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise YAMLEditError(f"not valid YAML: {exc}") from None
    return {} if value is None else value


def dumps(value: Any) -> str:
    import yaml

    return str(yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True))


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _splice(lines: list[str], section: str, key: str, entry: Any) -> list[str]:
    """The lines with ``section.key`` set to *entry*, or an exception if the layout is not a block."""
    head = re.compile(rf"^{re.escape(section)}\s*:\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if head.match(line)), None)
    block = dumps({key: entry}).splitlines(keepends=True)
    if start is None:
        tail = [] if not lines or lines[-1].endswith("\n") else ["\n"]
        return [*lines, *tail, f"{section}:\n", *("  " + line for line in block)]
    end = start + 1  # one past the block's last content line
    for i in range(start + 1, len(lines)):
        if _is_content(lines[i]):
            if _indent(lines[i]) == 0:
                break
            end = i + 1
    children = [i for i in range(start + 1, end) if _is_content(lines[i])]
    if not children:
        return [*lines[: start + 1], *("  " + line for line in block), *lines[start + 1 :]]
    width = _indent(lines[children[0]])
    pad = " " * width
    own = re.compile(rf"^{pad}(?:{re.escape(key)}|'{re.escape(key)}'|\"{re.escape(key)}\")\s*:")
    new = [pad + line for line in block]
    siblings = [i for i in children if _indent(lines[i]) == width]
    for n, i in enumerate(siblings):
        if own.match(lines[i]):
            stop = siblings[n + 1] if n + 1 < len(siblings) else end
            while stop > i + 1 and not _is_content(lines[stop - 1]):
                stop -= 1  # comments just above the next entry belong to it
            return [*lines[:i], *new, *lines[stop:]]
    if not lines[end - 1].endswith("\n"):
        new[0] = "\n" + new[0]
    return [*lines[:end], *new, *lines[end:]]


def set_entry(text: str, section: str, key: str, entry: Any) -> str:
    """*text* with ``section: {key: entry}`` set, the rest of the file kept as written.

    Raises:
        YAMLEditError: the file is not YAML, its top level or *section* is not a mapping, or the
            edit cannot be made without losing comments.
    """
    document = loads(text)
    if not isinstance(document, dict):
        raise YAMLEditError("the top level is not a mapping")
    current = document.get(section)
    if current is not None and not isinstance(current, dict):
        raise YAMLEditError(f"{section!r} is not a mapping")
    expected = {**document, section: {**(current or {}), key: entry}}
    if current == {} or (current is None and section in document):
        # ``extensions: {}`` or an empty ``extensions:``: the splice cannot add to a flow mapping.
        text = re.sub(
            rf"(?m)^{re.escape(section)}\s*:[ \t]*(?:\{{\s*\}}|null|~)?[ \t]*$", f"{section}:", text
        )
    edited = "".join(_splice(text.splitlines(keepends=True), section, key, entry))
    try:
        same = loads(edited) == expected
    except YAMLEditError:
        same = False
    if same:
        return edited
    if "#" not in text:  # nothing to lose: write the document out whole
        return dumps(expected)
    raise YAMLEditError(
        f"cannot add to {section!r} without losing the file's comments (is it written in flow style?)"
    )
