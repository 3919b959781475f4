"""The server's side of the skills extension: a folder of skills read into memory, and the methods that serve it.

Each folder below the mounted directory that holds a ``SKILL.md`` is a skill, and its path below the
directory is its *skill path* (``acme/refunds``; its last segment must be the frontmatter ``name``).
Every file of a skill becomes a resource at ``skill://<skill-path>/<file-path>``, listed by
``resources/list`` and read with ``resources/read``. On top of those :class:`SkillLibrary` answers
``skills/list``, ``skills/get`` and (with ``directoryRead``) ``resources/directory/read``.

The files are read once, when mounted, and served from memory, so the digests and sizes always
describe exactly the bytes that ``resources/read`` returns.

The library knows its server only as a :class:`SkillHost` (add a resource, set a handler, the page
size and caching hints), so it imports nothing of ``server`` or ``lowlevel``.
"""

from __future__ import annotations

import contextlib
import mimetypes
import os
import posixpath
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol
from urllib.parse import quote, unquote

import msgspec

from .._errors import InvalidParams
from .._pagination import page, paginate
from .manifest import (
    DIRECTORY_MIME_TYPE,
    SKILL_FILE,
    SKILLS_EXTENSION,
    Skill,
    SkillResource,
    digest,
    parse_frontmatter,
)

if TYPE_CHECKING:
    from ..context import Context
    from ..types import Resource, ResourceTemplate

__all__ = ["MAX_RESOURCES", "MAX_TOTAL_SIZE", "SkillHost", "SkillLibrary"]

# "Resources per skill: 512 entries"; "Total file size per skill: 16 MiB (16,777,216 bytes)".
MAX_RESOURCES: Final = 512
MAX_TOTAL_SIZE: Final = 16 * 1024 * 1024
# The Agent Skills naming rules: 1-64 of a-z 0-9 and hyphens, no hyphen first, last or twice in a row.
_NAME: Final = re.compile(r"(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?")
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


class SkillHost(Protocol):
    """What a :class:`SkillLibrary` needs of the server it serves through (``Server`` is one)."""

    @property
    def page_size(self) -> int | None: ...

    @property
    def cache_ttl_ms(self) -> int: ...

    @property
    def cache_scope(self) -> Literal["public", "private"]: ...

    def set_handler(self, method: str, fn: Callable[[dict[str, Any], Context], Awaitable[Any]]) -> None: ...

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None,
        description: str | None,
        mime_type: str | None,
        size: int | None,
    ) -> Resource | ResourceTemplate: ...


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

    def __init__(self, server: SkillHost) -> None:
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
        keys, cursor = paginate(list(self._entries), params.get("cursor"), self._server.page_size)
        return self._cacheable(page("skills", [self._entries[uri] for uri in keys], cursor), ctx)

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
        keys, cursor = paginate(sorted(children), params.get("cursor"), self._server.page_size)
        return page("resources", [children[child] for child in keys], cursor)


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
