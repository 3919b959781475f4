"""The skills extension (SEP-2640) over real stdio, in both eras: a server mounting
``examples/skills``, a client listing, loading and checking them, and one serving tampered files."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import textwrap
from pathlib import Path

import pytest

from mcpkit import Client, InvalidParams, SkillVerificationError

from ..conftest import EXAMPLES

pytestmark = pytest.mark.e2e

ERAS = ["2025-11-25", "2026-07-28"]
SKILLS = EXAMPLES / "skills"


def serve_skills(tmp_path: Path, tamper: bool = False) -> list[str]:
    """The command serving ``examples/skills`` over stdio; with *tamper*, every SKILL.md read comes
    back with one word changed, as a man in the middle would do it."""
    path = tmp_path / "skills_server.py"
    path.write_text(
        textwrap.dedent(f"""
        from mcpkit import Server
        server = Server("skills", page_size=2)
        server.add_skills({str(SKILLS)!r})
        if {tamper!r}:
            original = server._handlers["resources/read"]
            async def read(params, ctx):
                result = await original(params, ctx)
                if params["uri"].endswith("/SKILL.md"):
                    result["contents"][0]["text"] = result["contents"][0]["text"].replace("the", "teh", 1)
                return result
            server.set_handler("resources/read", read)
    """)
    )
    return [sys.executable, "-m", "mcpkit", "run", str(path)]


@pytest.mark.parametrize("version", ERAS)
def test_a_client_lists_loads_and_browses_skills(tmp_path: Path, version: str) -> None:
    async def main() -> None:
        async with Client(serve_skills(tmp_path), protocol_version=version) as client:
            skills = await client.list_skills()  # three skills, two to a page
            assert [s.uri for s in skills] == [
                "skill://code-review/SKILL.md",
                "skill://release-notes/SKILL.md",
                "skill://team/onboarding/SKILL.md",
            ]
            notes = skills[1]
            assert notes.frontmatter["license"] == "MIT"
            assert await client.load_skill(notes) == (SKILLS / "release-notes" / "SKILL.md").read_text()
            assert isinstance(notes.resources, list)
            for resource in notes.resources[1:]:
                data = await client.read_skill_file(notes, resource.uri)
                assert resource.digest == "sha256:" + hashlib.sha256(data).hexdigest()
                assert resource.size == len(data)
            sections = await client.list_directory("skill://release-notes/templates/sections")
            assert [r.name for r in sections] == ["features.md", "fixes.md"]
            templates = await client.list_directory("skill://release-notes/templates")
            assert [r.mime_type for r in templates] == ["text/markdown", "inode/directory"]
            with pytest.raises(InvalidParams):
                await client.list_directory("skill://release-notes/SKILL.md")
            with pytest.raises(InvalidParams):
                await client.get_skill("skill://release-notes/missing/SKILL.md")
            assert await client.get_skill(notes.uri) == notes

    asyncio.run(asyncio.wait_for(main(), 120))


@pytest.mark.parametrize("version", ERAS)
def test_a_tampered_skill_is_not_loaded(tmp_path: Path, version: str) -> None:
    async def main() -> None:
        async with Client(serve_skills(tmp_path, tamper=True), protocol_version=version) as client:
            skills = await client.list_skills()
            for skill in skills:
                with pytest.raises(SkillVerificationError, match="does not match the digest"):
                    await client.load_skill(skill)
            # Supporting files were not changed: they still pass.
            await client.read_skill_file(skills[0], "checklists/security.md")

    asyncio.run(asyncio.wait_for(main(), 120))
