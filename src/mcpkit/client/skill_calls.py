"""The client's calls of the skills extension (``io.modelcontextprotocol/skills``, SEP-2640).

Listing fetches no file ("Hosts MUST NOT retrieve a skill's files ahead of need"), and every file read
is checked against the entry held before it is returned; the checks are :mod:`mcpkit.skills.verify`'s.
"""

from __future__ import annotations

import msgspec

from ..skills import Skill, entries, entry, read_verified, require_extension
from ..types import Resource
from .core import ClientCore
from .exchange import list_all

__all__ = ["SkillCalls"]


class SkillCalls(ClientCore):
    """``list_skills``, ``get_skill``, ``load_skill``, ``read_skill_file`` and ``list_directory``."""

    async def list_skills(self) -> list[Skill]:
        """Every skill the server lists (``skills/list``, across pages). No skill file is read: "Hosts
        MUST NOT retrieve a skill's files ahead of need". Malformed entries are left out, with a warning.

        Raises:
            MCPError: the server does not declare the skills extension.
        """
        require_extension(self.server_capabilities)
        return entries(await list_all(self.request, "skills/list", "skills"))

    async def get_skill(self, uri: str) -> Skill:
        """The entry of the skill whose ``SKILL.md`` is at *uri* (``skills/get``), listed or not.

        Raises:
            InvalidParams: the server serves no skill there.
            SkillVerificationError: the entry is malformed.
        """
        require_extension(self.server_capabilities)
        result = await self.request("skills/get", {"uri": uri})
        return entry(result.get("skill") if isinstance(result, dict) else None)

    async def load_skill(self, skill: Skill | str) -> str:
        """Read a skill's ``SKILL.md`` to use it, checked against its entry: size, digest and every
        frontmatter field. Given a URI, the entry is fetched first with ``skills/get``.

        Raises:
            SkillVerificationError: the content is not what the entry describes (not returned).
        """
        held = skill if isinstance(skill, Skill) else await self.get_skill(skill)
        return (await read_verified(self.request, held, held.uri)).decode("utf-8")

    async def read_skill_file(self, skill: Skill, path: str) -> bytes:
        """Read one file of *skill* (a path relative to its root, or a URI), checked against the
        entry's size and digest. A file the entry does not list is not read. (A ``"dynamic"`` skill
        has no digests: its files are read as they come, if they are within the skill.)

        Raises:
            SkillVerificationError: unlisted, or not what the entry describes (not returned).
        """
        return await read_verified(self.request, skill, skill.resolve(path))

    async def list_directory(self, uri: str) -> list[Resource]:
        """The direct children of a directory resource (``resources/directory/read``, across pages);
        subdirectories have ``mime_type="inode/directory"``.

        Raises:
            MCPError: the server does not declare ``directoryRead``.
            InvalidParams: *uri* is not a directory.
        """
        require_extension(self.server_capabilities, directory_read=True)
        found = await list_all(self.request, "resources/directory/read", "resources", {"uri": uri})
        return [msgspec.convert(r, Resource) for r in found]
