"""The Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): Agent Skills over MCP.

A skill is a folder holding a ``SKILL.md`` (YAML frontmatter with at least ``name`` and
``description``, then instructions for the model) and any supporting files and subfolders. A server
serves a directory of them with one call::

    server.add_skills(Path(__file__).parent / "skills")

Every file of a skill becomes a resource at ``skill://<skill-path>/<file-path>``. On top of those the
extension adds:

* ``skills/list`` and ``skills/get``: :class:`Skill` entries, each the skill's frontmatter as JSON
  and the complete manifest of its files, ``{uri, digest: "sha256:<hex>", size}`` each;
* ``resources/directory/read`` (with ``directoryRead: true`` in the capability): the direct children
  of a skill folder, subfolders as ``inode/directory`` resources;
* ``capabilities.extensions["io.modelcontextprotocol/skills"]``, in both eras.

The client side is :meth:`Client.list_skills`, :meth:`Client.get_skill`, :meth:`Client.load_skill`,
:meth:`Client.read_skill_file` and :meth:`Client.list_directory`; every file it reads is verified
against the entry, and a failure raises :class:`SkillVerificationError`.

One job per module:

* :mod:`.manifest`: the entry and manifest types, digests and frontmatter, shared by both sides;
* :mod:`.verify`: the client's checks (entries, sizes, digests, frontmatter field by field);
* :mod:`.library`: the server's side (a folder read into a :class:`SkillLibrary`, the methods).

``verify`` never imports ``library``, and neither imports ``server``, ``lowlevel`` or the client.
"""

from .library import SkillHost, SkillLibrary
from .manifest import (
    DIRECTORY_MIME_TYPE,
    SKILL_FILE,
    SKILLS_EXTENSION,
    Skill,
    SkillResource,
    SkillVerificationError,
    digest,
    parse_frontmatter,
)
from .verify import entries, entry, read_verified, require_extension, settings_of

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "SKILLS_EXTENSION",
    "SKILL_FILE",
    "Skill",
    "SkillHost",
    "SkillLibrary",
    "SkillResource",
    "SkillVerificationError",
    "digest",
    "entries",
    "entry",
    "parse_frontmatter",
    "read_verified",
    "require_extension",
    "settings_of",
]
