"""How a host and a mounting server name what their servers offer: valid, stable and reversible.

A tool or prompt is exposed as ``<server key>__<its own name>``. The spec's rules for a tool name
(1 to 128 of ``A-Z a-z 0-9 _ - .``) hold because:

- a server key is normalised once, from the config alone: every character outside
  ``A-Z a-z 0-9 - .`` and ``_`` becomes ``-``, runs of ``_`` become one, and leading or trailing
  ``_`` are dropped. So a key never holds ``__`` and never ends with ``_``, and the first ``__`` in an
  exposed name is always the separator: ``split`` gives back the server and the name;
- a name with characters the spec forbids, or one too long to fit, becomes a valid name ending in
  ``.`` and 8 hex digits of its SHA-256 (the host keeps the map back to the real name).

An exposed name depends only on its own server's key and the tool's name, so adding a server never
renames another's tools. The config's ``rename`` map (exposed name -> new name) settles the rest.
Resources keep their URIs (a URI means something outside the host): the host routes each by a
URI -> server map, and when two servers list the same URI the one first in the config keeps it.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_NAME", "SEPARATOR", "exposed_name", "normalise_key", "split", "valid_tool_name"]

SEPARATOR: Final = "__"
MAX_NAME: Final = 128
_VALID: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_KEY_CHAR: Final = re.compile(r"[^A-Za-z0-9_.-]")


def valid_tool_name(name: str) -> bool:
    """Whether *name* follows the spec's rules for tool names."""
    return _VALID.fullmatch(name) is not None


def normalise_key(name: str) -> str:
    """The key a server's config name becomes (see the module's docstring); may be empty."""
    key = _KEY_CHAR.sub("-", name)
    key = re.sub(r"_+", "_", key).strip("_")
    return key[:64]


def exposed_name(key: str, name: str) -> str:
    """``key__name``, made valid when *name* is not (or is too long): a hash suffix keeps it unique."""
    joined = f"{key}{SEPARATOR}{name}"
    if valid_tool_name(joined):
        return joined
    import hashlib  # here: a name that needs hashing is rare, and the import costs every start-up

    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    cleaned = _KEY_CHAR.sub("_", name)
    room = MAX_NAME - len(key) - len(SEPARATOR) - 9
    return f"{key}{SEPARATOR}{cleaned[: max(room, 1)]}.{digest}"


def split(exposed: str) -> tuple[str, str] | None:
    """``(server key, name)`` of an exposed name, or None when it has no separator.

    The name is the server's own only when :func:`exposed_name` did not have to hash it; the host's
    map is the authority, this is the rule behind it.
    """
    key, sep, name = exposed.partition(SEPARATOR)
    return (key, name) if sep and key and name else None
