"""Finding the server object a ``FILE.py[:OBJECT]`` or ``package.module[:OBJECT]`` names."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["load_server"]


def load_server(spec: str) -> Any:
    """Load the server object named by ``FILE.py[:OBJECT]`` (or ``package.module[:OBJECT]``).

    Without ``:OBJECT`` the module's one ``LowLevelServer`` instance is used (a module-level name
    ``server``, ``mcp`` or ``app`` wins if there are several).

    Raises:
        SystemExit: with a message a person can act on.
    """
    from ..lowlevel import LowLevelServer

    location, _, attribute = spec.partition(":")
    if location.endswith(".py") or os.sep in location:
        path = Path(location)
        if not path.is_file():
            raise SystemExit(f"mcpkit: no such file: {location}")
        sys.path.insert(0, str(path.resolve().parent))
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise SystemExit(f"mcpkit: cannot load {location}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    if attribute:
        try:
            return getattr(module, attribute)
        except AttributeError:
            raise SystemExit(f"mcpkit: {location} has no attribute {attribute!r}") from None
    found = {name: obj for name, obj in vars(module).items() if isinstance(obj, LowLevelServer)}
    for preferred in ("server", "mcp", "app"):
        if preferred in found:
            return found[preferred]
    if len(found) == 1:
        return next(iter(found.values()))
    if not found:
        raise SystemExit(f"mcpkit: no Server object in {location}; name one with {location}:OBJECT")
    raise SystemExit(
        f"mcpkit: several servers in {location} ({', '.join(sorted(found))}); name one with :OBJECT"
    )
