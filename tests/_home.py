"""The suite's own home folder: every test runs with ``HOME`` and the XDG folders in a temporary folder.

mcpkit keeps per-user files there (the gateway's audit log in ``$XDG_STATE_HOME/mcpkit``, the OAuth
token store in ``$XDG_CONFIG_HOME/mcpkit``, the hosts' config files ``mcpkit install`` edits), and
so do the programs the tests start (chromium's profile and dconf). The variables are set in
``os.environ`` before collection, so every subprocess a test starts inherits them too.

The tools the suite needs keep their real caches and settings (uv, npm, pip, Playwright, pyenv,
git): their variables are pointed at the real locations first, so nothing is downloaded again.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

#: The user's own ``HOME`` and XDG variables (JSON), kept for the checks that they are left alone; the
#: xdist workers inherit it from the controller, whose ``HOME`` is already a temporary one.
REAL_ENV = "MCPKIT_TESTS_REAL_ENV"
#: The XDG base folders and where they are when unset.
XDG = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_STATE_HOME": ".local/state",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CACHE_HOME": ".cache",
}


def real_env() -> dict[str, str]:
    """The user's own ``HOME`` and XDG variables, as they were before the suite changed them."""
    kept = os.environ.get(REAL_ENV)
    if kept is not None:
        loaded: dict[str, str] = json.loads(kept)
        return loaded
    own = {name: os.environ[name] for name in ("HOME", *XDG) if os.environ.get(name)}
    own.setdefault("HOME", str(Path.home()))
    return own


def _base(env: dict[str, str], name: str) -> Path:
    value = env.get(name)
    return Path(value) if value and os.path.isabs(value) else Path(env["HOME"]) / XDG[name]


def mcpkit_folders(env: dict[str, str]) -> list[Path]:
    """Where mcpkit keeps per-user files under the home *env* describes (each XDG base, as set and
    as defaulted)."""
    home = Path(env["HOME"])
    return sorted(
        {home / relative / "mcpkit" for relative in XDG.values()} | {_base(env, n) / "mcpkit" for n in XDG}
    )


def snapshot(folders: list[Path]) -> dict[str, tuple[int, int]]:
    """Every file under *folders*: its size and modification time (ns)."""
    seen: dict[str, tuple[int, int]] = {}
    for folder in folders:
        for path in [folder, *folder.rglob("*")] if folder.exists() else []:
            try:
                stat = path.lstat()
            except OSError:
                continue
            seen[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return seen


def _keep_tools(env: dict[str, str]) -> None:
    """Point the tools' caches and settings at their real places, unless already set."""
    home, cache, config = Path(env["HOME"]), _base(env, "XDG_CACHE_HOME"), _base(env, "XDG_CONFIG_HOME")
    always = {
        "UV_CACHE_DIR": cache / "uv",
        "PIP_CACHE_DIR": cache / "pip",
        "PLAYWRIGHT_BROWSERS_PATH": cache / "ms-playwright",
        "npm_config_cache": home / ".npm",
    }
    if_present = {
        "UV_CONFIG_FILE": config / "uv" / "uv.toml",
        "PIP_CONFIG_FILE": config / "pip" / "pip.conf",
        "NPM_CONFIG_USERCONFIG": home / ".npmrc",
        "GIT_CONFIG_GLOBAL": home / ".gitconfig",
        "PYENV_ROOT": home / ".pyenv",
        "CARGO_HOME": home / ".cargo",
        "RUSTUP_HOME": home / ".rustup",
    }
    for name, path in {**always, **{n: p for n, p in if_present.items() if p.exists()}}.items():
        # npm reads its settings from the environment in either case.
        if os.environ.get(name) is None and os.environ.get(name.upper()) is None:
            os.environ[name] = str(path)


def enter() -> Path:
    """Make a temporary home and point ``HOME`` and the XDG folders into it; returns it."""
    if os.environ.get(REAL_ENV) is None:  # the first pytest process: the variables are the user's
        own = real_env()
        _keep_tools(own)
        os.environ[REAL_ENV] = json.dumps(own)
    fake = Path(tempfile.mkdtemp(prefix="mcpkit-test-home-"))
    os.environ["HOME"] = str(fake)
    for name, relative in XDG.items():
        (fake / relative).mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(fake / relative)
    runtime = fake / "run"
    runtime.mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    return fake


def leave(fake: Path) -> None:
    shutil.rmtree(fake, ignore_errors=True)
