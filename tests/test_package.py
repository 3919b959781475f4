"""The package surface: what it exports, what importing it costs, and that the code stays clean."""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
import tomllib
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import pytest

import mcpkit

from .conftest import ROOT


def test_all_is_sorted_and_complete() -> None:
    assert mcpkit.__all__ == sorted(mcpkit.__all__, key=lambda n: (not n.isupper(), n))
    for name in mcpkit.__all__:
        assert hasattr(mcpkit, name), name
    public = {n for n, v in vars(mcpkit).items() if not n.startswith("_") and isinstance(v, type)}
    assert public <= set(mcpkit.__all__)


def _namespace(module: types.ModuleType) -> dict[str, Any]:
    """The names *module*'s annotations may use: its globals and its ``if TYPE_CHECKING:`` imports."""
    namespace = dict(vars(module))
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            exec(
                compile(ast.Module(body=node.body, type_ignores=[]), str(module.__file__), "exec"), namespace
            )
    return namespace


def _annotated_members(cls: type) -> Iterator[tuple[str, Any]]:
    """(name, annotated object) for the public API of *cls*: its public methods and properties,
    ``__init__`` and ``__call__``, and its public annotated attributes, mcpkit's own bases included."""
    for klass in cls.__mro__:
        if not klass.__module__.startswith("mcpkit"):
            continue
        yield "", klass  # the class's own annotations: fields of structs, dataclasses, TypedDicts
        for name, member in vars(klass).items():
            if name.startswith("_") and name not in ("__init__", "__call__"):
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            elif isinstance(member, property):
                member = member.fget
            if inspect.isfunction(member):
                yield name, member


def _mcpkit_types(annotation: Any) -> Iterator[type]:
    """The classes defined in mcpkit that *annotation* mentions, however deeply nested."""
    if isinstance(annotation, TypeVar):
        for bound in (annotation.__bound__, *annotation.__constraints__):
            yield from _mcpkit_types(bound)
        return
    if isinstance(annotation, (list, tuple)):  # Callable[[A, B], R] holds its parameters in a list
        for item in annotation:
            yield from _mcpkit_types(item)
        return
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        yield from _mcpkit_types(typing.get_args(annotation)[0])
        return
    for tp in (annotation, origin):
        if isinstance(tp, type) and tp.__module__.startswith("mcpkit"):
            yield tp
    for arg in typing.get_args(annotation):
        yield from _mcpkit_types(arg)


def test_every_type_in_a_public_signature_is_exported() -> None:
    # A user must be able to name what the API takes and gives (to annotate a callback, build an
    # argument, subclass) without reaching into private modules. Types are resolved, not read as
    # text, so `X | None`, `list[X]`, `Callable[[X], Awaitable[Y]]` and TypeVar bounds all count.
    exported = {id(getattr(mcpkit, name)) for name in mcpkit.__all__}
    missing: dict[str, set[str]] = {}
    for name in mcpkit.__all__:
        value = getattr(mcpkit, name)
        members = _annotated_members(value) if isinstance(value, type) else [("", value)]
        for member_name, member in members:
            if not callable(member):
                continue
            where = f"{name}.{member_name}" if member_name else name
            module = sys.modules[member.__module__]
            try:
                hints = inspect.get_annotations(member, globals=_namespace(module), eval_str=True)
            except NameError as exc:
                missing.setdefault(f"(unresolvable annotation: {exc})", set()).add(where)
                continue
            for attribute, hint in hints.items():
                if isinstance(member, type) and attribute.startswith("_"):
                    continue  # a private attribute's annotation
                for tp in _mcpkit_types(hint):
                    if id(tp) not in exported:
                        missing.setdefault(f"{tp.__module__}.{tp.__qualname__}", set()).add(where)
    assert not missing, "types used by public signatures but not exported from mcpkit:\n" + "\n".join(
        f"  {tp}  (in {', '.join(sorted(uses))})" for tp, uses in sorted(missing.items())
    )


def test_the_package_is_marked_typed() -> None:
    # PEP 561: without the marker, type checkers ignore mcpkit's annotations in a user's project.
    marker = Path(mcpkit.__file__).parent / "py.typed"
    assert marker.is_file()
    assert marker.read_bytes() == b""
    # The wheel ships the package folder whole (hatch's `packages`), so the marker goes with it.
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["src/mcpkit"]  # tests/e2e/test_wheel.py checks a real wheel


def test_version_matches_the_project() -> None:
    assert f'version = "{mcpkit.__version__}"' in (ROOT / "pyproject.toml").read_text()


HEAVY = ("httpx", "starlette", "uvicorn", "h11", "anyio", "pydantic", "rich", "aiohttp", "yaml")


@pytest.mark.parametrize("module", ["mcpkit", "mcpkit.cli"])
def test_import_loads_no_http_stack_and_no_pydantic(module: str) -> None:
    code = f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    assert [m for m in loaded if m.split(".")[0] in HEAVY] == []


def test_ruff_is_clean() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "src", "tests", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "src", "tests", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_is_clean() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


#: Modules a stdio server has no use for until it asks for what they hold: each is imported on first
#: use (a resource template, an elicitation form, a rate limit, telemetry, a fleet, a command line
#: with options), so that spawning a server, which every host does at its start, does not pay for them.
ON_FIRST_USE = (
    "argparse",
    "mcpkit._ratelimit",
    "mcpkit._signature_elicit",
    "mcpkit._uritemplate",
    "mcpkit.transports.http.server.event_store",
    "mcpkit.fleet",
    "mcpkit.telemetry",
    "pathlib",
    "urllib.parse",
)


def test_serving_stdio_imports_nothing_it_does_not_use() -> None:
    code = (
        "import sys, json, mcpkit, mcpkit.cli, mcpkit.transports.stdio\n"
        "from mcpkit.cli._load import load_server\n"
        f"load_server({str(ROOT / 'bench' / 'servers' / 'mcpkit_server.py')!r})\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    assert [m for m in loaded if m in ON_FIRST_USE] == []
    assert mcpkit.ElicitationForm.__module__ == "mcpkit._signature_elicit"  # and each is still there
    assert mcpkit.Telemetry.__module__ == "mcpkit.telemetry"
