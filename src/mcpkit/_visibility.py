"""Which components are hidden: by name and by tag, for a whole server or for one session.

A hidden tool, prompt or resource is left out of lists and refused when called, as if it did not
exist. ``disable`` hides, ``enable`` shows again; names and tags are kept apart, so enabling a name
shows it even while a tag of it is disabled, and enabling a tag undoes only disabling that tag.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Filter"]


class Filter:
    """Names and tags disabled, and names enabled despite their tags."""

    __slots__ = ("names", "shown", "tags")

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.tags: set[str] = set()
        self.shown: set[str] = set()  # enabled by name although a tag of theirs is disabled

    def __bool__(self) -> bool:
        return bool(self.names or self.tags)

    def disable(self, names: Iterable[str] = (), tags: Iterable[str] = ()) -> None:
        names = _strings(names, "names")
        self.names.update(names)
        self.shown.difference_update(names)
        self.tags.update(_strings(tags, "tags"))

    def enable(self, names: Iterable[str] = (), tags: Iterable[str] = ()) -> None:
        names = _strings(names, "names")
        self.names.difference_update(names)
        if self.tags:
            self.shown.update(names)
        self.tags.difference_update(_strings(tags, "tags"))

    def hides(self, name: str, tags: frozenset[str]) -> bool:
        if name in self.names:
            return True
        return bool(self.tags) and not self.tags.isdisjoint(tags) and name not in self.shown


def _strings(values: Iterable[str], what: str) -> set[str]:
    if isinstance(values, str):
        raise TypeError(f"{what} is a collection of strings, not a string")
    found = set(values)
    if not all(isinstance(value, str) for value in found):
        raise TypeError(f"{what} must be strings")
    return found
