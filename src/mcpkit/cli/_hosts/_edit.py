"""The edit ``mcpkit install`` makes to a host's configuration text: one entry in, nothing else.

:func:`editor` returns the function :func:`~._files.replace_file` applies to the file's text. It
refuses a name collision (unless forced), splices the entry in with the JSONC or YAML editor, and
then reads the result back: it must equal the old document plus the one entry, or nothing is written.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _jsonc, _yamledit

if TYPE_CHECKING:
    from . import Host

__all__ = ["Unchanged", "editor", "nest"]


class Unchanged(Exception):
    """The host already has exactly this entry: there is nothing to write."""


def nest(section: tuple[str, ...], key: str, entry: dict[str, Any]) -> dict[str, Any]:
    """``{section[0]: {...: {key: entry}}}``: the entry inside the keys that lead to it."""
    nested: dict[str, Any] = {key: entry}
    for name in reversed(section):
        nested = {name: nested}
    return nested


def _lookup(document: Any, section: tuple[str, ...]) -> Any:
    for name in section:
        document = document.get(name) if isinstance(document, dict) else None
    return document


def editor(
    host: Host, section: tuple[str, ...], key: str, entry: dict[str, Any], force: bool, where: Path
) -> Callable[[str], str]:
    """The function from the config file's text to the new text (``""`` for a file not there yet).

    It raises :class:`Unchanged` when the same entry is already there, ``SystemExit`` with a message
    for a collision or a file that is not an object, and the editors' own errors for a file they
    cannot edit safely.
    """
    loads = _yamledit.loads if host.yaml else _jsonc.loads

    def splice(text: str) -> str:
        document = loads(text)
        if not isinstance(document, dict):
            raise SystemExit(f"mcpkit: {where} does not hold an object at the top level; not editing it")
        servers = _lookup(document, section)
        if isinstance(servers, dict) and key in servers:
            if servers[key] == entry:
                raise Unchanged
            if not force:
                raise SystemExit(
                    f"mcpkit: {host.title} already has a server named {key!r} in {where}; "
                    "pass --force to replace it, or --name to choose another name"
                )
        if host.yaml:
            new = _yamledit.set_entry(text, section[0], key, entry)
        else:
            new = _jsonc.set_member(text, section, key, entry)
        expected = copy.deepcopy(document)
        nested = expected
        for name in section:
            if nested.get(name) is None:  # missing, or YAML's empty ``extensions:``
                nested[name] = {}
            nested = nested[name]
        nested[key] = entry
        if loads(new) != expected:
            raise SystemExit(f"mcpkit: editing {where} went wrong; the file was left as it was")
        return new

    def edit(text: str) -> str:
        # A file written with CRLF line ends throughout (Windows) is edited as LF and written back
        # with CRLF, so that the new lines match the old ones.
        if "\r\n" in text and text.count("\r\n") == text.count("\n"):
            return splice(text.replace("\r\n", "\n")).replace("\n", "\r\n")
        return splice(text)

    return edit
