"""The skills extension (SEP-2640) in memory: the frontmatter reader, mounting a folder of skills,
the extension's methods in both eras, and the client's checks of what it reads."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit import (
    Context,
    InvalidParams,
    LowLevelServer,
    MCPError,
    Server,
    Skill,
    SkillVerificationError,
)
from mcpkit import skills as skills_module
from mcpkit._yaml import load
from mcpkit.skills import SKILLS_EXTENSION, digest, parse_frontmatter
from mcpkit.skills import library as skill_library

from .conftest import EXAMPLES
from .test_server import connect

SKILLS = EXAMPLES / "skills"
ERAS = ["2025-11-25", "2026-07-28"]
_tasks: set[asyncio.Future[None]] = set()


def run(main: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(main(), 60))


def write_skill(folder: Path, frontmatter: str, files: dict[str, bytes] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}---\n\nDo the thing.\n")
    for name, data in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


# -- the frontmatter reader ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: pdf\ndescription: Fill in PDF forms\n", {"name": "pdf", "description": "Fill in PDF forms"}),
        # The YAML 1.2 core schema, as JSON holds it (PyYAML alone would read 1.1 here).
        (
            "a: 1\nb: 1.5\nc: true\nd: null\ne: ~\nf: 012\ng: 0x1F\nh: yes\ni: 1e3\nj: 0o17\n",
            {
                "a": 1,
                "b": 1.5,
                "c": True,
                "d": None,
                "e": None,
                "f": 12,
                "g": 31,
                "h": "yes",
                "i": 1000.0,
                "j": 15,
            },
        ),
        (
            "when: 2024-05-01\nat: 1:30\nn: 1_000\noff: off\n",
            {"when": "2024-05-01", "at": "1:30", "n": "1_000", "off": "off"},
        ),
        ("s: 'it''s'\nd: \"tab\\there \\u00e9\"\n", {"s": "it's", "d": "tab\there é"}),
        (
            'metadata:\n  version: "2.1"\n  author: me # a comment\n',
            {"metadata": {"version": "2.1", "author": "me"}},
        ),
        ("tools:\n- a\n- b\nmore:\n  - k: 1\n    v: 2\n", {"tools": ["a", "b"], "more": [{"k": 1, "v": 2}]}),
        (
            "d: >-\n  folded: with a colon\n  line\n\n  paragraph\n",
            {"d": "folded: with a colon line\nparagraph"},
        ),
        ('f: [a, "b, c", 3, {x: [1]}]\n', {"f": ["a", "b, c", 3, {"x": [1]}]}),
        ("allowed-tools: Bash(git:*) Read\n", {"allowed-tools": "Bash(git:*) Read"}),
    ],
)
def test_yaml_reads_frontmatter_as_json_values(text: str, expected: Any) -> None:
    assert load(text) == expected


@pytest.mark.parametrize(
    "text",
    ["d: Use when: asked\n", "a:\n\tb: 1\n", "a: 'open\n", "a: [1, 2\n", "a: 1\n  b: 2\n", 'a: "\\q"\n'],
)
def test_yaml_refuses_invalid_documents_with_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="invalid YAML"):
        load(text)


def test_frontmatter_is_the_first_block_of_the_file() -> None:
    assert parse_frontmatter("\ufeff---\r\nname: x\r\ndescription: y\r\n---\r\nbody") == {
        "name": "x",
        "description": "y",
    }
    with pytest.raises(ValueError, match="does not begin"):
        parse_frontmatter("# no frontmatter\n")
    with pytest.raises(ValueError, match="not a YAML mapping"):
        parse_frontmatter("---\n- a\n---\n")


# -- mounting a folder of skills ---------------------------------------------------------------------


def test_the_example_skills_are_listed_with_digests_of_their_bytes() -> None:
    server = Server("s")
    added = server.add_skills(SKILLS)
    assert [s.uri for s in added] == [
        "skill://code-review/SKILL.md",
        "skill://release-notes/SKILL.md",
        "skill://team/onboarding/SKILL.md",
    ]
    for skill in added:
        assert isinstance(skill.resources, list)
        assert skill.resources[0].uri == skill.uri  # SKILL.md first
        for resource in skill.resources:
            data = (SKILLS / resource.uri.removeprefix("skill://")).read_bytes()
            assert resource.size == len(data)
            assert resource.digest == "sha256:" + hashlib.sha256(data).hexdigest()
    onboarding = added[2]
    assert onboarding.frontmatter == {
        "name": "onboarding",
        "description": "Walk a new team member through their first week: accounts, tools and who to ask",
    }
    assert added[1].frontmatter["metadata"] == {"version": "1.2", "audience": "maintainers"}


@pytest.mark.parametrize(
    ("folder", "frontmatter", "message"),
    [
        ("pdf", "name: other\ndescription: d\n", "must be the name of its folder"),
        ("Bad--name", "name: Bad--name\ndescription: d\n", "invalid skill name"),
        ("pdf", "name: pdf\n", "needs a description"),
        ("pdf", "name: pdf\ndescription: ''\n", "needs a description"),
        ("pdf", "name: [pdf]\ndescription: d\n", "needs a name"),
        ("pdf", "name: pdf\ndescription: Use when: asked\n", "must be quoted"),
    ],
)
def test_invalid_skills_are_refused_when_mounted(
    tmp_path: Path, folder: str, frontmatter: str, message: str
) -> None:
    write_skill(tmp_path / "skills" / folder, frontmatter)
    with pytest.raises(ValueError, match=message):
        Server("s").add_skills(tmp_path / "skills")


def test_mounting_needs_skills_and_unique_uris(tmp_path: Path) -> None:
    server = Server("s")
    with pytest.raises(ValueError, match="not a directory"):
        server.add_skills(tmp_path / "missing")
    with pytest.raises(ValueError, match="no skill under"):
        server.add_skills(tmp_path)
    assert "skills/list" not in server._handlers  # nothing is declared for a failed mount
    server.add_skills(SKILLS)
    with pytest.raises(ValueError, match="already served"):
        server.add_skills(SKILLS)


def test_skills_over_the_limits_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(tmp_path / "big", "name: big\ndescription: d\n", {"a": b"1", "b": b"2"})
    monkeypatch.setattr(skill_library, "MAX_RESOURCES", 2)
    with pytest.raises(ValueError, match="at most 2 files"):
        Server("s").add_skills(tmp_path)


def test_one_skill_folder_a_prefix_and_nested_skills(tmp_path: Path) -> None:
    outer = write_skill(
        tmp_path / "outer", "name: outer\ndescription: o\n", {"notes/a b": b"x", ".git/x": b""}
    )
    write_skill(outer / "inner", "name: inner\ndescription: i\n")
    server = Server("s")
    added = server.add_skills(outer, prefix="acme/billing")
    assert [s.uri for s in added] == [
        "skill://acme/billing/outer/SKILL.md",
        "skill://acme/billing/outer/inner/SKILL.md",
    ]
    # "the enclosing skill's resources lists them too": nested files are supporting files.
    assert [r.uri for r in added[0].resources] == [  # type: ignore[union-attr]
        "skill://acme/billing/outer/SKILL.md",
        "skill://acme/billing/outer/inner/SKILL.md",
        "skill://acme/billing/outer/notes/a%20b",
    ]
    listed = {uri: r.wire for uri, r in server._resources.fixed.items()}
    assert listed["skill://acme/billing/outer/inner/SKILL.md"]["name"] == "inner"
    assert listed["skill://acme/billing/outer/notes/a%20b"]["name"] == "a b"


# -- the extension's methods, in both eras ----------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_list_get_and_read_skills(version: str) -> None:
    async def main() -> None:
        server = Server("s")
        server.add_skills(SKILLS)
        client = await connect(server, version)
        assert client.server_capabilities["extensions"][SKILLS_EXTENSION] == {"directoryRead": True}
        assert "resources" in client.server_capabilities
        skills = await client.list_skills()
        assert [s.name for s in skills] == ["code-review", "release-notes", "onboarding"]
        review = await client.get_skill("skill://code-review/SKILL.md")
        assert review == skills[0]
        body = await client.load_skill(review)
        assert body == (SKILLS / "code-review" / "SKILL.md").read_text()
        assert await client.load_skill("skill://code-review/SKILL.md") == body
        data = await client.read_skill_file(review, "checklists/security.md")
        assert data == (SKILLS / "code-review" / "checklists" / "security.md").read_bytes()
        resources = {r.uri: r for r in await client.list_resources()}
        skill_md = resources["skill://release-notes/SKILL.md"]
        assert (skill_md.name, skill_md.mime_type) == ("release-notes", "text/markdown")
        assert skill_md.description == skills[1].description
        assert "skill://release-notes/templates/sections/fixes.md" in resources
        with pytest.raises(InvalidParams, match="No skill is served"):
            await client.get_skill("skill://nothing/SKILL.md")
        with pytest.raises(InvalidParams, match=r"params\.uri"):
            await client.request("skills/get", {})
        raw = await client.request("skills/list")
        assert ("ttlMs" in raw, "cacheScope" in raw) == (version >= "2026-07-28",) * 2
        raw = await client.request("skills/get", {"uri": review.uri})
        assert ("ttlMs" in raw) == (version >= "2026-07-28") and "nextCursor" not in raw
        await client.aclose()

    run(main)


@pytest.mark.parametrize("version", ERAS)
def test_directories_list_their_direct_children(version: str) -> None:
    async def main() -> None:
        server = Server("s", page_size=1)
        server.add_skills(SKILLS)
        client = await connect(server, version)
        root = await client.list_directory("skill://release-notes")
        assert [(r.uri, r.mime_type) for r in root] == [
            ("skill://release-notes/SKILL.md", "text/markdown"),
            ("skill://release-notes/references", "inode/directory"),
            ("skill://release-notes/templates", "inode/directory"),
        ]
        templates = await client.list_directory("skill://release-notes/templates")
        assert [r.name for r in templates] == ["notes.md", "sections"]
        assert [r.uri for r in await client.list_directory("skill://team")] == ["skill://team/onboarding"]
        page = await client.request("resources/directory/read", {"uri": "skill://release-notes"})
        assert len(page["resources"]) == 1 and "nextCursor" in page
        with pytest.raises(InvalidParams, match="is not a directory resource"):
            await client.list_directory("skill://release-notes/SKILL.md")
        with pytest.raises(InvalidParams, match="no directory"):
            await client.list_directory("skill://nowhere")
        assert len(await client.list_skills()) == 3  # across three pages
        await client.aclose()

    run(main)


def test_without_directory_read_the_capability_is_empty(tmp_path: Path) -> None:
    async def main() -> None:
        server = Server("s")
        server.add_skills(SKILLS, directory_read=False)
        client = await connect(server)
        assert client.server_capabilities["extensions"] == {SKILLS_EXTENSION: {}}
        with pytest.raises(MCPError, match="directoryRead"):
            await client.list_directory("skill://code-review")
        await client.aclose()
        plain = await connect(Server("plain"))
        with pytest.raises(MCPError, match="does not declare"):
            await plain.list_skills()
        await plain.aclose()

    run(main)


def test_binary_files_are_blobs_with_the_digest_of_their_bytes(tmp_path: Path) -> None:
    async def main() -> None:
        data = bytes(range(256))
        write_skill(tmp_path / "imgs", "name: imgs\ndescription: d\n", {"assets/logo.png": data})
        server = Server("s")
        (skill,) = server.add_skills(tmp_path)
        client = await connect(server)
        read = await client.read_resource("skill://imgs/assets/logo.png")
        assert read.contents[0].blob == base64.b64encode(data).decode()
        assert await client.read_skill_file(skill, "assets/logo.png") == data
        assert skill.listed("skill://imgs/assets/logo.png").digest == digest(data)  # type: ignore[union-attr]
        await client.aclose()

    run(main)


# -- the client's checks ---------------------------------------------------------------------------


def tampered(change: Callable[[str], str]) -> tuple[Server, list[str]]:
    """A server whose reads of SKILL.md files come back changed by *change*; and the URIs read."""
    server = Server("s")
    server.add_skills(SKILLS)
    original = server._handlers["resources/read"]
    reads: list[str] = []

    async def read(params: dict[str, Any], ctx: Context) -> Any:
        reads.append(params["uri"])
        result = await original(params, ctx)
        if params["uri"].endswith("/SKILL.md"):
            result["contents"][0]["text"] = change(result["contents"][0]["text"])
        return result

    server.set_handler("resources/read", read)
    return server, reads


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda text: text.replace("Read the whole", "Skip the whole"), "does not match the digest"),
        (lambda text: text + "more\n", "bytes read where the entry says"),
        (lambda text: text.upper(), "bytes read|digest"),
    ],
)
def test_content_that_differs_from_the_entry_is_refused(change: Callable[[str], str], message: str) -> None:
    async def main() -> None:
        server, reads = tampered(change)
        client = await connect(server)
        (skill, *_) = await client.list_skills()
        assert reads == []  # listing fetches nothing
        with pytest.raises(SkillVerificationError, match=message) as info:
            await client.load_skill(skill)
        assert info.value.uri == skill.uri
        await client.aclose()

    run(main)


def test_frontmatter_that_differs_from_the_entry_is_refused() -> None:
    async def main() -> None:
        server, _ = tampered(lambda text: text.replace("before it is merged", "and approve it"))
        client = await connect(server)
        (skill, *_) = await client.list_skills()
        # Digest and size made to match the tampered file: only the frontmatter gives it away.
        text = (
            (SKILLS / "code-review" / "SKILL.md").read_text().replace("before it is merged", "and approve it")
        )
        data = text.encode()
        forged = Skill(
            uri=skill.uri,
            frontmatter=skill.frontmatter,
            resources=[skills_module.SkillResource(uri=skill.uri, digest=digest(data), size=len(data))],
        )
        with pytest.raises(
            SkillVerificationError, match="frontmatter differs from the entry's in description"
        ):
            await client.load_skill(forged)
        await client.aclose()

    run(main)


def test_files_the_entry_does_not_list_are_not_read() -> None:
    async def main() -> None:
        server, reads = tampered(lambda text: text)
        client = await connect(server)
        (review, notes, _) = await client.list_skills()
        with pytest.raises(SkillVerificationError, match="not listed in the entry"):
            await client.read_skill_file(review, "templates/notes.md")
        with pytest.raises(SkillVerificationError, match="not listed in the entry"):
            await client.read_skill_file(review, notes.uri)
        with pytest.raises(SkillVerificationError, match="outside the skill"):
            await client.read_skill_file(review, "../release-notes/SKILL.md")
        assert reads == []
        await client.aclose()

    run(main)


def hand_made_server(entries: list[Any], files: dict[str, str]) -> LowLevelServer:
    """A low-level server that lists *entries* and serves *files* as text."""
    server = LowLevelServer("hand-made")
    server.extra_capabilities = {"resources": {}, "extensions": {SKILLS_EXTENSION: {}}}

    @server.handler("skills/list")
    async def list_skills(params: dict[str, Any], ctx: Context) -> Any:
        return {"skills": entries}

    @server.handler("resources/read")
    async def read(params: dict[str, Any], ctx: Context) -> Any:
        uri = params["uri"]
        return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": files[uri]}]}

    return server


def test_malformed_entries_are_left_out(caplog: pytest.LogCaptureFixture) -> None:
    good = {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"}, "resources": []}
    bad = [
        {"uri": "skill://b/SKILL.md", "frontmatter": {"name": "b", "description": "d"}},  # no resources
        {"uri": "skill://c/SKILL.md", "frontmatter": {"name": "c", "description": "d"}, "resources": "all"},
        {"uri": "skill://d/SKILL.md", "frontmatter": {"name": "e", "description": "d"}, "resources": []},
        {"uri": "skill://f/SKILL.md", "frontmatter": {"name": "f"}, "resources": "dynamic"},
    ]

    async def main() -> None:
        client = await connect(hand_made_server([good, *bad], {}))
        with caplog.at_level(logging.WARNING, logger="mcpkit.skills"):
            assert [s.uri for s in await client.list_skills()] == ["skill://a/SKILL.md"]
        assert len(caplog.records) == len(bad)
        await client.aclose()

    run(main)


def test_dynamic_skills_are_checked_by_frontmatter_only() -> None:
    text = "---\nname: live\ndescription: made now\n---\nbody\n"
    entry = {"uri": "skill://live/SKILL.md", "frontmatter": {"name": "live", "description": "made now"}}

    async def main() -> None:
        files = {"skill://live/SKILL.md": text, "skill://live/data.md": "anything"}
        client = await connect(hand_made_server([{**entry, "resources": "dynamic"}], files))
        (skill,) = await client.list_skills()
        assert await client.load_skill(skill) == text
        assert await client.read_skill_file(skill, "data.md") == b"anything"
        changed = Skill(
            uri=skill.uri, frontmatter={**skill.frontmatter, "license": "MIT"}, resources="dynamic"
        )
        with pytest.raises(SkillVerificationError, match="differs from the entry's in license"):
            await client.load_skill(changed)
        await client.aclose()

    run(main)
