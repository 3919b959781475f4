"""Finding the server object a ``FILE.py[:OBJECT]`` or ``package.module[:OBJECT]`` names.

A file that fails while it is imported (a SyntaxError, a missing module, any exception) is reported
with the user's own frames only: mcpkit's and importlib's frames say nothing about what to fix.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from types import ModuleType
from typing import Any

from ._exits import CANNOT_CONNECT, USAGE, CliError

__all__ = ["load_server"]

# os.path rather than pathlib: ``mcpkit run`` starts every stdio server, and pathlib (with fnmatch and
# ntpath) would be imported for these two paths alone.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def load_server(spec: str) -> Any:
    """Load the server object named by ``FILE.py[:OBJECT]`` (or ``package.module[:OBJECT]``).

    Without ``:OBJECT`` the module's one ``LowLevelServer`` instance is used (a module-level name
    ``server``, ``mcp`` or ``app`` wins if there are several).

    Raises:
        CliError: with a message a person can act on: a usage error when the file, the module or
            the object is not there or is no server, "cannot connect" when the file fails to load.
    """
    from ..lowlevel import LowLevelServer

    location, _, attribute = spec.partition(":")
    module = _import(location)
    found = {name: obj for name, obj in vars(module).items() if isinstance(obj, LowLevelServer)}
    if attribute:
        if not hasattr(module, attribute):
            known = f"; servers in it: {', '.join(sorted(found))}" if found else ""
            raise CliError(f"{location} has no attribute {attribute!r}{known}", USAGE)
        obj = getattr(module, attribute)
        if not isinstance(obj, LowLevelServer):
            known = f"; servers in it: {', '.join(sorted(found))}" if found else ""
            raise CliError(
                f"{location}:{attribute} is {_what(obj)}, not a server (a Server or LowLevelServer){known}",
                USAGE,
            )
        return obj
    for preferred in ("server", "mcp", "app"):
        if preferred in found:
            return found[preferred]
    if len(found) == 1:
        return next(iter(found.values()))
    if not found:
        raise CliError(f"no Server object in {location}; name one with {location}:OBJECT", USAGE)
    raise CliError(
        f"several servers in {location} ({', '.join(sorted(found))}); name one with :OBJECT", USAGE
    )


def _import(location: str) -> ModuleType:
    if location.endswith(".py") or os.sep in location:
        if not os.path.isfile(location):
            raise CliError(f"no such file: {location}", USAGE)
        path = _normalized(location)
        sys.path.insert(0, os.path.dirname(os.path.realpath(path)))
        stem = _stem(path)
        module_spec = importlib.util.spec_from_file_location(stem, path)
        if module_spec is None or module_spec.loader is None:
            raise CliError(f"cannot load {location}", USAGE)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[stem] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            raise _failure(location, exc) from None
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        # The ``mcpkit`` script's sys.path starts with its own bin folder, not the current one, where
        # a user's ``package.module`` lives (``python -m mcpkit`` has it already).
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as exc:
        if exc.name is not None and location.startswith(exc.name):
            raise CliError(f"no module named {location!r} (and no file of that name)", USAGE) from None
        raise _failure(location, exc) from None
    except Exception as exc:
        raise _failure(location, exc) from None


def _normalized(location: str) -> str:
    """*location* spelled as pathlib spells it (``./a//b.py`` is ``a/b.py``): the module's
    ``__file__`` and its tracebacks show it so, as they did when this module used pathlib."""
    if os.name != "posix":
        from pathlib import Path

        return str(Path(location))
    root = "/" if location.startswith("/") else ""
    if location.startswith("//") and not location.startswith("///"):
        root = "//"  # POSIX leaves the meaning of exactly two leading slashes to the system
    return root + "/".join(part for part in location.split("/") if part not in ("", ".")) or "."


def _stem(path: str) -> str:
    """The file name without its suffix (``pathlib.PurePath.stem``): the module's name."""
    name = "" if path == "." else os.path.basename(path)
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _failure(location: str, exc: BaseException) -> CliError:
    """The error as Python shows it, with only the user's frames (none of mcpkit's or importlib's):
    the server cannot start, as a client command would say of it."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith((_PACKAGE_DIR, "<frozen "))
    ]
    lines = []
    if frames:
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.format_list(frames))
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return CliError(f"{location} failed while loading:", CANNOT_CONNECT, "".join(lines))


def _what(obj: Any) -> str:
    if isinstance(obj, ModuleType):
        return "a module"
    if isinstance(obj, type):
        return f"the class {obj.__name__}"
    if callable(obj):
        return f"a {type(obj).__name__} ({getattr(obj, '__name__', '?')})"
    return f"a {type(obj).__name__}"
