"""The Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): Agent Skills over MCP.

A skill is a folder holding a ``SKILL.md`` (YAML frontmatter with at least ``name`` and
``description``, then instructions for the model) and any supporting files and subfolders. A server
serves a directory of them with one call::

    server.add_skills(Path(__file__).parent / "skills")

Each folder below that holds a ``SKILL.md`` is a skill, and its path below the directory is its
*skill path* (``acme/refunds``; its last segment must be the frontmatter ``name``). Every file of a
skill becomes a resource at ``skill://<skill-path>/<file-path>``, listed by ``resources/list`` and
read with ``resources/read``. On top of those the extension adds:

* ``skills/list`` and ``skills/get``: :class:`Skill` entries, each the skill's frontmatter as JSON
  and the complete manifest of its files, ``{uri, digest: "sha256:<hex>", size}`` each;
* ``resources/directory/read`` (with ``directoryRead: true`` in the capability): the direct children
  of a skill folder, subfolders as ``inode/directory`` resources;
* ``capabilities.extensions["io.modelcontextprotocol/skills"]``, in both eras.

The files are read once, when mounted, and served from memory, so the digests and sizes always
describe exactly the bytes that ``resources/read`` returns.

The client side is :meth:`Client.list_skills`, :meth:`Client.get_skill`, :meth:`Client.load_skill`,
:meth:`Client.read_skill_file` and :meth:`Client.list_directory`. Listing fetches no file ("Hosts
MUST NOT retrieve a skill's files ahead of need"); every file read is checked against the entry held
("it MUST verify the content against that entry's digest and size"), a ``SKILL.md``'s frontmatter is
compared field by field with the entry's, and a file the entry does not list is not read at all. Any
failure raises :class:`SkillVerificationError` and the content is not returned.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import logging
import mimetypes
import os
import posixpath
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import quote, unquote

import msgspec

from . import _yaml
from ._errors import InvalidParams, MCPError
from .context import Context
from .server import Server, _page, _paginate  # server.py imports this module only when skills are added
from .types import Wire

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "SKILLS_EXTENSION",
    "Skill",
    "SkillLibrary",
    "SkillResource",
    "SkillVerificationError",
    "digest",
    "parse_frontmatter",
]

logger = logging.getLogger("mcpkit.skills")

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
DIRECTORY_MIME_TYPE: Final = "inode/directory"
SKILL_FILE: Final = "SKILL.md"
# "Resources per skill: 512 entries"; "Total file size per skill: 16 MiB (16,777,216 bytes)".
MAX_RESOURCES: Final = 512
MAX_TOTAL_SIZE: Final = 16 * 1024 * 1024
# The Agent Skills naming rules: 1-64 of a-z 0-9 and hyphens, no hyphen first, last or twice in a row.
_NAME: Final = re.compile(r"(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?")
# "SKILL.md MUST begin with YAML frontmatter": a --- line, the YAML, a --- line.
_FRONTMATTER: Final = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
# What a URI path segment may hold as it is (RFC 3986 unreserved and sub-delims): the rest is %-encoded.
_SEGMENT_SAFE: Final = "!$&'()*+,;=-._~"
_MIME_TYPES: Final = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".csv": "text/csv",
}


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
        (``references/GUIDE.md``), "as a filesystem path would resolve"."""
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


# -- the client's side: entries, verification ------------------------------------------------------


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


# -- the server's side ----------------------------------------------------------------------------


@dataclass(slots=True)
class _File:
    uri: str
    segments: tuple[str, ...]  # the URI's path below skill://, %-encoded
    data: bytes
    name: str  # the file name


@dataclass(slots=True)
class _Found:
    entry: Skill
    files: list[_File]
    folders: list[tuple[str, ...]]  # every folder of the skill, as URI segments


class SkillLibrary:
    """The skills one server serves, and the handlers of the extension's methods.

    Made by :meth:`Server.add_skills`, which is the way to use it.
    """

    def __init__(self, server: Server) -> None:
        self._server = server
        self._entries: dict[str, dict[str, Any]] = {}  # SKILL.md URI -> the entry as sent
        #: directory URI -> {child URI: the child's Resource}, for resources/directory/read.
        self.directories: dict[str, dict[str, dict[str, Any]]] = {}
        self._files: set[str] = set()
        self.directory_read = False

    def capability(self) -> dict[str, Any]:
        """The server's ``extensions`` entry: "An empty object indicates support for the extension
        with no optional features"."""
        return {SKILLS_EXTENSION: {"directoryRead": True} if self.directory_read else {}}

    @property
    def skills(self) -> list[Skill]:
        """Every skill served, in ``skills/list`` order."""
        return [msgspec.convert(e, Skill) for e in self._entries.values()]

    def add(
        self, path: str | os.PathLike[str], *, prefix: str | None = None, directory_read: bool = True
    ) -> list[Skill]:
        """Serve the skills under *path* (see :meth:`Server.add_skills`)."""
        root = Path(path)
        base = tuple(_segment(s) for s in prefix.strip("/").split("/")) if prefix else ()
        found = [_load(folder, segments, root) for folder, segments in _find(root, base)]
        if not found:
            raise ValueError(f"no skill under {root}: a skill is a folder with a {SKILL_FILE}")
        for skill in found:
            if skill.entry.uri in self._entries:
                raise ValueError(f"a skill is already served at {skill.entry.uri}")
        skill_files = {skill.entry.uri: skill.entry for skill in found}
        for skill in found:
            self._entries[skill.entry.uri] = msgspec.to_builtins(skill.entry)
            for folder in skill.folders:
                self._add_directory(folder)
            for file in skill.files:
                if file.uri not in self._files:  # a nested skill's files belong to its parent too
                    self._serve(file, skill_files.get(file.uri))
        self._server.set_handler("skills/list", self._list)
        self._server.set_handler("skills/get", self._get)
        if directory_read and not self.directory_read:
            self.directory_read = True
            self._server.set_handler("resources/directory/read", self._read_directory)
        return [skill.entry for skill in found]

    def _serve(self, file: _File, skill: Skill | None) -> None:
        text: str | None = None
        with contextlib.suppress(UnicodeDecodeError):
            text = file.data.decode("utf-8")
        if text is not None and "\0" in text:
            text = None
        suffix = posixpath.splitext(file.name)[1].lower()
        mime_type = _MIME_TYPES.get(suffix) or mimetypes.guess_type(file.name)[0]
        if mime_type is None:
            mime_type = "text/plain" if text is not None else "application/octet-stream"
        value: str | bytes = text if text is not None else file.data

        async def read() -> Any:
            return value

        # "name SHOULD be set from the name field", "description ... from the description field".
        definition = self._server.add_resource(
            read,
            file.uri,
            name=skill.name if skill is not None else file.name,
            description=skill.description if skill is not None else None,
            mime_type=mime_type,
            size=len(file.data),
        )
        self._files.add(file.uri)
        parent = "skill://" + "/".join(file.segments[:-1])
        self.directories.setdefault(parent, {})[file.uri] = msgspec.to_builtins(definition)

    def _add_directory(self, segments: tuple[str, ...]) -> None:
        """Make *segments* and every folder above it directory resources of their parents."""
        for depth in range(1, len(segments) + 1):
            uri = "skill://" + "/".join(segments[:depth])
            self.directories.setdefault(uri, {})
            if depth > 1:
                parent = "skill://" + "/".join(segments[: depth - 1])
                self.directories[parent][uri] = {
                    "uri": uri,
                    "name": unquote(segments[depth - 1]),
                    "mimeType": DIRECTORY_MIME_TYPE,
                }

    def _cacheable(self, result: dict[str, Any], ctx: Context) -> dict[str, Any]:
        # ListSkillsResult and GetSkillResult extend CacheableResult: "ttlMs and cacheScope are REQUIRED".
        if ctx.scope.has("caching"):
            result["ttlMs"] = self._server.cache_ttl_ms
            result["cacheScope"] = self._server.cache_scope
        return result

    async def _list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        # "An entry is atomic": a page holds whole entries, whatever their size.
        page, cursor = _paginate(list(self._entries), params.get("cursor"), self._server.page_size)
        return self._cacheable(_page("skills", [self._entries[uri] for uri in page], cursor), ctx)

    async def _get(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = _uri_param(params, "skills/get")
        found = self._entries.get(uri)
        if found is None:
            # "If the URI does not identify a skill the server serves, the server MUST return -32602"
            raise InvalidParams(f"No skill is served at {uri}", {"uri": uri})
        return self._cacheable({"skill": found}, ctx)

    async def _read_directory(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = _uri_param(params, "resources/directory/read")
        children = self.directories.get(uri)
        if children is None:
            # "If the URI does not exist, or exists but is not a directory resource": -32602.
            if uri in self._files:
                raise InvalidParams(f"{uri} is not a directory resource", {"uri": uri})
            raise InvalidParams(f"{uri} is no directory this server serves", {"uri": uri})
        page, cursor = _paginate(sorted(children), params.get("cursor"), self._server.page_size)
        return _page("resources", [children[child] for child in page], cursor)


def _uri_param(params: dict[str, Any], method: str) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams(f"{method} requires params.uri (a string)")
    return uri


def _segment(name: str) -> str:
    return quote(name, safe=_SEGMENT_SAFE)


def _visible(name: str) -> bool:
    return not name.startswith(".") and name != "__pycache__"


def _find(root: Path, base: tuple[str, ...]) -> Iterator[tuple[Path, tuple[str, ...]]]:
    """Every skill folder under *root* (*root* itself if it is one) and its URI segments."""
    if not root.is_dir():
        raise ValueError(f"{root} is not a directory")
    if (root / SKILL_FILE).is_file():
        base = (*base, _segment(root.name))
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if _visible(d))
        if SKILL_FILE in files:
            relative = Path(folder).relative_to(root).parts
            yield Path(folder), (*base, *(_segment(part) for part in relative))


def _load(folder: Path, segments: tuple[str, ...], root: Path) -> _Found:
    """Read one skill: its SKILL.md, its files and folders, checked against the extension's rules."""
    skill_md = folder / SKILL_FILE
    try:
        frontmatter = parse_frontmatter(skill_md.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{skill_md}: {exc}") from None
    for field in ("name", "description"):
        if not isinstance(frontmatter.get(field), str) or not frontmatter[field].strip():
            raise ValueError(f"{skill_md}: the frontmatter needs a {field} (a non-empty string)")
    name = frontmatter["name"]
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"{skill_md}: invalid skill name {name!r}: 1 to 64 of a-z 0-9 and '-', no '-' first, last or twice"
        )
    # "The final segment of <skill-path> MUST equal the skill's name".
    if segments[-1] != name:
        raise ValueError(f"{skill_md}: the name {name!r} must be the name of its folder ({folder.name!r})")
    files: list[_File] = []
    folders: list[tuple[str, ...]] = [segments]
    top = root.resolve()
    for path, relative in _walk(folder):
        parts = (*segments, *(_segment(part) for part in relative.parts))
        if path.is_dir():
            folders.append(parts)
        elif path.resolve().is_relative_to(top):  # a link out of the mounted folder is not served
            files.append(_File("skill://" + "/".join(parts), parts, path.read_bytes(), path.name))
    files.sort(key=lambda f: (f.segments != (*segments, SKILL_FILE), f.segments))
    total = sum(len(f.data) for f in files)
    # "Servers SHOULD NOT serve a skill that exceeds either limit."
    if len(files) > MAX_RESOURCES or total > MAX_TOTAL_SIZE:
        raise ValueError(
            f"{folder}: {len(files)} files of {total} bytes in all; a skill may have at most "
            f"{MAX_RESOURCES} files and {MAX_TOTAL_SIZE} bytes"
        )
    skill = Skill(
        uri=files[0].uri,
        frontmatter=frontmatter,
        resources=[SkillResource(uri=f.uri, digest=digest(f.data), size=len(f.data)) for f in files],
    )
    return _Found(skill, files, folders)


def _walk(folder: Path) -> Iterator[tuple[Path, Path]]:
    """Every file and subfolder below *folder* (hidden ones aside), with its path relative to it."""
    for current, dirs, files in os.walk(folder):
        here = Path(current)
        dirs[:] = sorted(d for d in dirs if _visible(d) and not (here / d).is_symlink())
        for name in [*dirs, *sorted(f for f in files if _visible(f))]:
            yield here / name, (here / name).relative_to(folder)
