"""README.md and docs/*.md speak to users: no references to the project's issues or its rounds of work.

A reader outside the project cannot follow "the targets of issue 16 (round two)"; the docs say what
mcpkit does and why, in words of their own. Specification proposals (``SEP-2640``) are public and
stay.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import pytest

from .conftest import ROOT

#: Words that point into the project's own history rather than at mcpkit.
INTERNAL: Final = [
    re.compile(r"\bissues?\s+#?\d", re.I),  # "issue 12", "issues 5 and 16", "issue #3"
    re.compile(r"(?<![\w/&])#\d+\b"),  # "#12" (an anchor or an HTML entity is not this)
    re.compile(r"\bround\s+(one|two|three|four|five|\d)\b", re.I),  # "round two"; "round-trip" is not
    re.compile(r"\bheld[- ]out\b", re.I),
    re.compile(r"\btargets?\s+of\s+(the\s+)?issues?\b", re.I),
    re.compile(r"\bthe\s+\w+\s+issue\b", re.I),  # "the hardening issue"
]


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def internal_words(text: str) -> list[tuple[int, str]]:
    """Each line of *text* (1-based) holding an internal reference, with the words found."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern in INTERNAL:
            match = pattern.search(line)
            if match:
                found.append((number, match.group(0)))
    return found


@pytest.mark.parametrize("doc", documents(), ids=lambda d: d.relative_to(ROOT).as_posix())
def test_no_internal_references(doc: Path) -> None:
    found = internal_words(doc.read_text(encoding="utf-8"))
    where = doc.relative_to(ROOT).as_posix()
    assert not found, "\n".join(f"{where}:{line}: {words!r}" for line, words in found)


def test_the_patterns_catch_what_they_are_for() -> None:
    caught = [
        "The targets of issues 5 (round one) and 16 (round two), run by run:",
        "fixed in issue 12",
        "see issue #3",
        "as the hardening issue asked",
        "a held-out trial",
        "(#41)",
    ]
    for text in caught:
        assert internal_words(text), text
    allowed = [
        "a multi round-trip request, one round each",
        "the skills extension (SEP-2640)",
        "[Tasks](docs/server.md#tasks-long-running-tools)",
        "an issue tracker",
        "&#8212; a dash",
        "HTTP 404 issues a challenge",
    ]
    for text in allowed:
        assert not internal_words(text), text
