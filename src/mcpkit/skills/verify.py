"""The client's side of the skills extension: received entries checked, and every file read verified.

Listing fetches no file ("Hosts MUST NOT retrieve a skill's files ahead of need"). Every file read is
checked against the entry held ("it MUST verify the content against that entry's digest and size"),
a ``SKILL.md``'s frontmatter is compared field by field with the entry's, and a file the entry does
not list is not read at all. Any failure raises :class:`SkillVerificationError` and the content is
not returned.

Nothing here knows the client: :func:`read_verified` sends ``resources/read`` through the request
function it is given, so this module imports no session, transport or server.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from .._errors import MCPError
from .manifest import SKILL_FILE, SKILLS_EXTENSION, Skill, SkillVerificationError, digest, parse_frontmatter

__all__ = ["entries", "entry", "read_verified", "require_extension", "settings_of"]

logger = logging.getLogger("mcpkit.skills")


def settings_of(capabilities: dict[str, Any]) -> dict[str, Any] | None:
    """The server's settings for the extension (``{}`` or ``{"directoryRead": true}``), or ``None``
    when it does not declare it."""
    extensions = capabilities.get("extensions")
    if not isinstance(extensions, dict) or SKILLS_EXTENSION not in extensions:
        return None
    settings = extensions[SKILLS_EXTENSION]
    return settings if isinstance(settings, dict) else {}


def require_extension(capabilities: dict[str, Any], *, directory_read: bool = False) -> None:
    """Refuse to go on unless the server declared the extension.

    "Clients issue skills/list and skills/get only after observing the server's declaration", and
    "MUST NOT call resources/directory/read" unless it declares ``directoryRead: true``.

    Raises:
        MCPError: the server's capabilities do not declare what is needed.
    """
    settings = settings_of(capabilities)
    if settings is None:
        raise MCPError(f"the server does not declare the {SKILLS_EXTENSION} extension")
    if directory_read and settings.get("directoryRead") is not True:
        raise MCPError(f"the server does not declare directoryRead for {SKILLS_EXTENSION}")


def entry(value: Any) -> Skill:
    """A received skill entry, checked.

    Raises:
        SkillVerificationError: the entry is malformed ("hosts MUST NOT load it").
    """
    uri = value.get("uri") if isinstance(value, dict) else None
    label = uri if isinstance(uri, str) else "a skill entry"
    try:
        skill = msgspec.convert(value, Skill)
    except msgspec.ValidationError as exc:
        raise SkillVerificationError(f"invalid skill entry {label}: {exc}", str(label)) from None
    for field in ("name", "description"):
        if not isinstance(skill.frontmatter.get(field), str) or not skill.frontmatter[field]:
            raise SkillVerificationError(f"{skill.uri}: the entry's frontmatter has no {field}", skill.uri)
    if not skill.uri.endswith("/" + SKILL_FILE) or skill.root.rsplit("/", 1)[-1] != skill.name:
        raise SkillVerificationError(
            f"{skill.uri}: the URI must end in /{skill.name}/{SKILL_FILE} (the frontmatter name)", skill.uri
        )
    return skill


def entries(values: list[Any]) -> list[Skill]:
    """The valid entries of a listing; the others are left out with a warning."""
    skills: list[Skill] = []
    for value in values:
        try:
            skills.append(entry(value))
        except SkillVerificationError as exc:
            logger.warning("ignoring a skills/list entry: %s", exc)
    return skills


async def read_verified(
    request: Callable[[str, dict[str, Any]], Awaitable[Any]], skill: Skill, uri: str
) -> bytes:
    """Read *uri*, a file of *skill*, with ``resources/read`` through *request*, and check it
    against the entry (size, digest and, for the SKILL.md, frontmatter).

    A file that the entry does not list is not read: "a host MUST resolve reads of the skill's files
    only to URIs listed in the held entry's resources".

    Raises:
        SkillVerificationError: the file is not listed, or its content differs from the entry.
    """
    listed = skill.listed(uri)
    if skill.resources != "dynamic" and listed is None:
        raise SkillVerificationError(f"{uri} is not listed in the entry of {skill.uri}", uri)
    if skill.resources == "dynamic" and uri != skill.uri and not uri.startswith(skill.root + "/"):
        raise SkillVerificationError(f"{uri} is outside the skill {skill.uri}", uri)
    data = _content_bytes(await request("resources/read", {"uri": uri}), uri)
    if listed is not None:
        # "A read whose byte length differs from the entry's size is a verification failure".
        if len(data) != listed.size:
            raise SkillVerificationError(
                f"{uri}: {len(data)} bytes read where the entry says {listed.size}; not using it", uri
            )
        if digest(data) != listed.digest:
            raise SkillVerificationError(
                f"{uri}: the content does not match the digest {listed.digest}; not using it", uri
            )
    if uri == skill.uri:
        _check_frontmatter(skill, data)
    return data


def _check_frontmatter(skill: Skill, data: bytes) -> None:
    # "hosts MUST parse its YAML frontmatter and compare it field-by-field against the entry's
    # frontmatter" and "MUST NOT load the skill on any discrepancy".
    try:
        found = parse_frontmatter(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SkillVerificationError(f"{skill.uri}: {exc}; not loading it", skill.uri) from None
    differing = [
        key
        for key in sorted(found.keys() | skill.frontmatter.keys())
        if not _same(found.get(key), skill.frontmatter.get(key))
    ]
    if differing:
        raise SkillVerificationError(
            f"{skill.uri}: the frontmatter differs from the entry's in {', '.join(differing)}; not loading it",
            skill.uri,
        )


def _same(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (``1 == 1.0``), but ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _content_bytes(result: Any, uri: str) -> bytes:
    """The raw bytes of a ``resources/read`` result: text as UTF-8, a blob decoded."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list) or not contents or not isinstance(contents[0], dict):
        raise SkillVerificationError(f"{uri}: resources/read returned no contents", uri)
    item = next((c for c in contents if isinstance(c, dict) and c.get("uri") == uri), contents[0])
    if isinstance(item.get("text"), str):
        return item["text"].encode("utf-8")  # type: ignore[no-any-return]
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True)
        except binascii.Error:
            raise SkillVerificationError(f"{uri}: resources/read returned an invalid blob", uri) from None
    raise SkillVerificationError(f"{uri}: resources/read returned neither text nor blob", uri)
