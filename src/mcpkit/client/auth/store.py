"""Where tokens and client registrations are kept between runs.

A store maps string keys to JSON objects. :class:`~mcpkit.client.auth.OAuth` keeps two kinds of
entries: ``client <issuer>``, a registration, bound to the authorization server that issued it (the
spec's "Authorization Server Binding": never presented to another), and ``tokens <resource>``, the
tokens for one MCP server, with the issuer they came from.

* :class:`MemoryTokenStore` (the default) forgets everything when the process ends;
* :class:`FileTokenStore` keeps one JSON file, readable by its owner only (0600, in a 0700 folder);
* :class:`KeyringTokenStore` uses the system keyring, when the ``keyring`` package is installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["FileTokenStore", "KeyringTokenStore", "MemoryTokenStore", "TokenStore", "default_store_path"]


@runtime_checkable
class TokenStore(Protocol):
    """What :class:`~mcpkit.client.auth.OAuth` needs of a store."""

    async def get(self, key: str) -> dict[str, Any] | None: ...

    async def set(self, key: str, value: dict[str, Any]) -> None: ...

    async def delete(self, key: str) -> None: ...


class MemoryTokenStore:
    """Keeps entries in this process only."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, Any]] = {}

    async def get(self, key: str) -> dict[str, Any] | None:
        entry = self._entries.get(key)
        return dict(entry) if entry is not None else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        self._entries[key] = dict(value)

    async def delete(self, key: str) -> None:
        self._entries.pop(key, None)


def default_store_path() -> Path:
    """``mcpkit/oauth.json`` in the user's configuration folder (``$XDG_CONFIG_HOME``, ``~/.config``,
    ``~/Library/Application Support`` on macOS, ``%APPDATA%`` on Windows)."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "mcpkit" / "oauth.json"


class FileTokenStore:
    """One JSON file of entries. Written whole to a temporary file created 0600 and renamed over the
    old one, so a reader never sees half a file and the secrets are never readable by others, not even
    for a moment; its folder is created 0700."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self._lock = asyncio.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=1, sort_keys=True)
        os.chmod(temporary, 0o600)  # in case the file existed with wider rights
        os.replace(temporary, self.path)

    async def get(self, key: str) -> dict[str, Any] | None:
        entry = self._read().get(key)
        return entry if isinstance(entry, dict) else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        async with self._lock:
            data = self._read()
            data[key] = value
            self._write(data)

    async def delete(self, key: str) -> None:
        async with self._lock:
            data = self._read()
            if data.pop(key, None) is not None:
                self._write(data)


class KeyringTokenStore:
    """Entries in the system keyring (service *service*, one secret per key), through the optional
    ``keyring`` package.

    Raises:
        RuntimeError: ``keyring`` is not installed.
    """

    def __init__(self, service: str = "mcpkit") -> None:
        try:
            import keyring  # type: ignore[import-not-found, unused-ignore]  # optional
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise RuntimeError("KeyringTokenStore needs the keyring package: pip install keyring") from exc
        self._keyring: Any = keyring
        self.service = service

    async def get(self, key: str) -> dict[str, Any] | None:
        text = await asyncio.to_thread(self._keyring.get_password, self.service, key)
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        await asyncio.to_thread(self._keyring.set_password, self.service, key, json.dumps(value))

    async def delete(self, key: str) -> None:
        with contextlib.suppress(Exception):  # keyring's PasswordDeleteError: nothing was stored
            await asyncio.to_thread(self._keyring.delete_password, self.service, key)
