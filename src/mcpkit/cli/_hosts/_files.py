"""Where configuration lives on each platform, and replacing a config file safely.

Paths follow the environment (``HOME``, ``XDG_CONFIG_HOME``, ``APPDATA``) read at call time, so a
test, or a user with a non-standard layout, can point them anywhere.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["app_config_dir", "home", "replace_file", "xdg_config_home"]


def home() -> Path:
    return Path(os.environ.get("HOME") or os.environ.get("USERPROFILE") or Path.home())


def xdg_config_home() -> Path:
    """``$XDG_CONFIG_HOME``, else ``~/.config`` (what Linux desktop apps, Zed and Goose use)."""
    value = os.environ.get("XDG_CONFIG_HOME")
    return Path(value) if value and os.path.isabs(value) else home() / ".config"


def app_config_dir(name: str) -> Path:
    """An Electron app's per-user folder: macOS Application Support, Windows ``%APPDATA%``, else XDG."""
    if sys.platform == "darwin":
        return home() / "Library" / "Application Support" / name
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home() / "AppData" / "Roaming") / name
    return xdg_config_home() / name


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as file:  # CRLF stays CRLF
            return file.read()
    except FileNotFoundError:
        return None


def replace_file(path: Path, edit: Callable[[str], str]) -> tuple[str, Path | None]:
    """Apply *edit* to the text of *path* (``""`` if it does not exist) and write the result back.

    The new text goes to a temporary file in the same folder that is then renamed over the old one,
    so a reader (the host itself) sees the old file or the new one, never half of either. The old
    file is first copied to ``<name>.bak``. If the file changed while *edit* ran (a host saving its
    own settings), the edit is made again on the new text rather than undoing the host's change.

    Returns:
        The text written, and the backup's path (``None`` when there was no file before).
    """
    path = Path(os.path.realpath(path))  # through a symlink (dotfile managers), not over it
    for _ in range(5):
        before = _read(path)
        after = edit(before or "")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
                out.write(after)
                out.flush()
                os.fsync(out.fileno())
            if before is not None:
                shutil.copymode(path, temp)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(temp, 0o666 & ~umask)
            if _read(path) != before:
                continue  # changed under us: edit the new text instead
            backup = None
            if before is not None:
                backup = path.with_name(path.name + ".bak")
                shutil.copy2(path, backup)
            os.replace(temp, path)
            temp = ""
            return after, backup
        finally:
            if temp:
                os.unlink(temp)
    raise OSError(f"{path} kept changing while it was being edited; try again")
