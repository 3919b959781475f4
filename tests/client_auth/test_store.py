"""Token stores: the file store keeps secrets readable by their owner only."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path

import pytest

from mcpkit.client.auth import FileTokenStore, MemoryTokenStore, Tokens, default_store_path


def test_memory_store_round_trip_and_copies() -> None:
    async def main() -> None:
        store = MemoryTokenStore()
        entry = {"access_token": "a"}
        await store.set("k", entry)
        entry["access_token"] = "changed"
        assert await store.get("k") == {"access_token": "a"}
        await store.delete("k")
        assert await store.get("k") is None

    asyncio.run(main())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_file_store_is_private_and_survives_a_new_instance(tmp_path: Path) -> None:
    path = tmp_path / "config" / "mcpkit" / "oauth.json"
    os.umask(0o022)

    async def main() -> None:
        await FileTokenStore(path).set("tokens https://h/mcp", Tokens("secret-token").to_json())
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        again = await FileTokenStore(path).get("tokens https://h/mcp")
        assert again is not None and Tokens.from_json(again) == Tokens("secret-token")
        path.chmod(0o644)  # widened by someone: the next write narrows it again
        await FileTokenStore(path).delete("tokens https://h/mcp")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert await FileTokenStore(path).get("tokens https://h/mcp") is None
        assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]

    asyncio.run(main())


def test_a_missing_or_damaged_file_is_an_empty_store(tmp_path: Path) -> None:
    async def main() -> None:
        assert await FileTokenStore(tmp_path / "none.json").get("k") is None
        (tmp_path / "bad.json").write_text("{not json")
        assert await FileTokenStore(tmp_path / "bad.json").get("k") is None

    asyncio.run(main())


def test_default_path_is_under_the_user_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    if sys.platform not in ("win32", "darwin"):
        assert default_store_path() == tmp_path / "mcpkit" / "oauth.json"


def test_the_keyring_store_needs_keyring() -> None:
    from mcpkit.client.auth import KeyringTokenStore

    try:
        import keyring  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="pip install keyring"):
            KeyringTokenStore()
    else:  # pragma: no cover - keyring is not a dependency
        assert KeyringTokenStore().service == "mcpkit"
