"""What both sides of the skills extension share: the entry and manifest types, and ``SKILL.md`` frontmatter.

A :class:`Skill` is what ``skills/list`` and ``skills/get`` carry: the URI of the skill's
``SKILL.md``, its frontmatter as JSON, and the manifest of its files (:class:`SkillResource`: URI,
``sha256:`` digest and size). The server builds entries from a folder (:mod:`.library`); the client
checks the ones it receives, and the files it reads, against them (:mod:`.verify`). No I/O here.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from typing import Any, Final, Literal

from .. import _yaml
from .._errors import MCPError
from ..types import Wire

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "SKILLS_EXTENSION",
    "SKILL_FILE",
    "Skill",
    "SkillResource",
    "SkillVerificationError",
    "digest",
    "parse_frontmatter",
]

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
DIRECTORY_MIME_TYPE: Final = "inode/directory"
SKILL_FILE: Final = "SKILL.md"
# "SKILL.md MUST begin with YAML frontmatter": a --- line, the YAML, a --- line.
_FRONTMATTER: Final = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class SkillVerificationError(MCPError):
    """A skill's entry or content failed the extension's checks; the content must not be used.

    ``uri`` is the file (or the skill) concerned.
    """

    def __init__(self, message: str, uri: str) -> None:
        super().__init__(message)
        self.uri = uri


class SkillResource(Wire, frozen=True):
    """One file of a skill, with the digest and size of its content."""

    uri: str
    digest: str  # "sha256:" and 64 lowercase hex digits of the raw bytes
    size: int  # the length in bytes of the same raw bytes


class Skill(Wire, frozen=True):
    """The entry of one skill, as ``skills/list`` and ``skills/get`` return it."""

    uri: str  # the resource URI of its SKILL.md
    frontmatter: dict[str, Any]  # the SKILL.md frontmatter, verbatim as JSON
    # Every file, SKILL.md included, or "dynamic" when the content is generated and has no digests.
    resources: list[SkillResource] | Literal["dynamic"]

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    @property
    def root(self) -> str:
        """The skill's directory: its URI without ``/SKILL.md``."""
        return self.uri.removesuffix("/" + SKILL_FILE)

    def resolve(self, path: str) -> str:
        """The URI of *path*, a file of the skill: a URI, or a path relative to the skill's root
        (``references/GUIDE.md``), "as a filesystem path would resolve".

        Raises:
            SkillVerificationError: *path* leads outside the skill.
        """
        if "://" in path:
            return path
        relative = posixpath.normpath(path)
        if relative.startswith(("../", "/")) or relative in ("..", "."):
            raise SkillVerificationError(f"{path!r} is outside the skill {self.uri}", self.uri)
        return f"{self.root}/{relative}"

    def listed(self, uri: str) -> SkillResource | None:
        """The manifest entry of *uri* (``None`` if unlisted, or for a dynamic skill)."""
        if isinstance(self.resources, str):
            return None
        return next((r for r in self.resources if r.uri == uri), None)


def digest(data: bytes) -> str:
    """The extension's digest of *data*: ``sha256:`` and 64 lowercase hex digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The YAML frontmatter that opens a ``SKILL.md``, as a JSON object.

    Raises:
        ValueError: there is no ``---`` delimited block, or it is not a YAML mapping.
    """
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        raise ValueError("SKILL.md does not begin with a --- delimited YAML frontmatter block")
    value = _yaml.load(match.group(1))
    if not isinstance(value, dict):
        raise ValueError("the SKILL.md frontmatter is not a YAML mapping")
    return value
