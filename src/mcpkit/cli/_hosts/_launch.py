"""What a host is told to run: a command line for a server file, or the URL of a running server.

A host spawns the command from its own process, often not from a shell: on macOS an app started from
the Dock does not see the PATH of the user's shell, and the working directory is anywhere. So every
path written is absolute: the server file, and the interpreter or ``uv`` that starts it.

- Without ``--with``, the command is the Python running ``mcpkit install`` (``sys.executable -m
  mcpkit run /abs/server.py``): it has mcpkit, the same version the user just ran, and whatever the
  server imports if it runs here. Nothing is downloaded when the host starts it.
- With ``--with PKG``, the command is ``uv run --no-project --python <that Python> --with PKG ...
  python -m mcpkit run /abs/server.py``: uv lays the extra packages over that same environment (so
  mcpkit still comes from it rather than from an index) and caches them.
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from .._exits import FAILED, USAGE, CliError

__all__ = ["Launch", "missing_imports", "parse_env", "read_env_file", "remote", "stdio"]


@dataclass(frozen=True)
class Launch:
    """A server as a host starts it: a command line (``url`` is ``None``) or a URL."""

    name: str
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # sent with every request to url


def _server_name(path: Path, attribute: str) -> str | None:
    """The name given to ``Server("name", ...)`` in *path*, read from the source without running it
    (the file may import packages that only ``--with`` provides)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            if not callee.endswith(("Server", "FastMCP")):
                continue
            arg = (
                call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
            )
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        names[target.id] = arg.value
    if attribute:
        return names.get(attribute)
    for preferred in ("server", "mcp", "app"):  # the names ``mcpkit run`` prefers, in its order
        if preferred in names:
            return names[preferred]
    return next(iter(names.values())) if len(set(names.values())) == 1 else None


def stdio(spec: str, name: str | None, env: dict[str, str], packages: list[str]) -> Launch:
    """The command line that serves ``FILE.py[:OBJECT]`` over stdio.

    Raises:
        CliError: the file does not exist (a usage error), or ``--with`` is asked for and uv is not
            installed.
    """
    location, sep, attribute = spec.rpartition(":")
    if not sep or not attribute.isidentifier():  # no :OBJECT (a Windows drive's colon is not one)
        location, attribute = spec, ""
    path = Path(location).expanduser()
    if not path.is_file():
        raise CliError(f"no such file: {location}", USAGE)
    path = path.resolve()
    served = f"{path}:{attribute}" if attribute else str(path)
    run = ["-m", "mcpkit", "run", served]
    if packages:
        uv = shutil.which("uv")
        if uv is None:
            raise CliError(
                "--with needs uv (https://docs.astral.sh/uv/) to add packages when the host "
                "starts the server; install uv, or install the packages into this environment instead",
                FAILED,
            )
        withs = [arg for package in packages for arg in ("--with", package)]
        command, args = uv, ["run", "--no-project", "--python", sys.executable, *withs, "python", *run]
    else:
        command, args = sys.executable, run
    return Launch(name or _server_name(path, attribute) or path.stem, command, args, env)


def missing_imports(spec: str) -> list[str]:
    """The modules the server file imports at its top level that the Python running ``mcpkit
    install`` cannot find (nor the file's own folder): the host, starting the server with this same
    Python, would fail on them. Imports inside functions or ``try`` blocks are optional; not counted."""
    import importlib.util

    location, sep, attribute = spec.rpartition(":")
    path = Path(location if sep and attribute.isidentifier() else spec).expanduser()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    missing = []
    for name in sorted(names - set(sys.stdlib_module_names)):
        if (path.parent / f"{name}.py").is_file() or (path.parent / name).is_dir():
            continue
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def remote(url: str, name: str | None, headers: list[str]) -> Launch:
    """A server already running at *url*, sent *headers* (``"Name: value"`` strings); its default
    name is the URL's host, with ``-`` for dots (some hosts accept only letters, digits, ``-`` and
    ``_`` in a server's name)."""
    host = re.sub(r"[^A-Za-z0-9_-]+", "-", urlsplit(url).hostname or "") or "server"
    fields = {}
    for header in headers:
        # Checked whole, before any stripping: a CR or LF written into a host's config would split
        # the header into two when the host sends it (header injection), a NUL cut it short.
        if control := _CONTROL.search(header):
            raise CliError(
                f"--header {header!r} holds {_named(control.group())}; a header's name "
                "and value cannot hold CR, LF, NUL or other control characters (a tab is allowed)",
                USAGE,
            )
        key, sep, value = header.partition(":")
        if not sep or not _TOKEN.fullmatch(key.strip()):
            raise CliError(f"--header takes 'Name: value', not {header!r}", USAGE)
        fields[key.strip()] = value.strip()
    return Launch(name or host, url=url, headers=fields)


#: RFC 9110 section 5.1: a field name is a token. Section 5.5: a value is visible characters,
#: spaces and tabs (and obs-text); the other control characters (C0, DEL, and C1 here) are invalid.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROL_NAMES = {"\r": "a CR", "\n": "an LF", "\x00": "a NUL"}


def _named(char: str) -> str:
    return _CONTROL_NAMES.get(char, f"the control character U+{ord(char):04X}")


def parse_env(items: list[str]) -> dict[str, str]:
    """``K=V`` strings as a mapping (the last one wins for a repeated key)."""
    env = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--env takes KEY=VALUE, not {item!r}", USAGE)
        env[key.strip()] = value
    return env


def read_env_file(path: str) -> dict[str, str]:
    """The variables of a dotenv file: ``KEY=VALUE`` lines, ``export`` and quotes allowed,
    ``#`` comments and blank lines skipped. No ``${VAR}`` expansion: values are written as they are."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CliError(f"cannot read --env-file {path}: {exc.strerror}", USAGE) from None
    env = {}
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").lstrip()
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key):
            raise CliError(f"{path}, line {number}: expected KEY=VALUE", USAGE)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()  # an inline comment after an unquoted value
        env[key] = value
    return env
