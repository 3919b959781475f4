"""``mcpkit completion SHELL``: bash's script sourced in a real bash completes commands, options,
their values and files; zsh's and fish's are checked by their shells when installed, and for every
command otherwise."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import run_mcpkit

COMMANDS = ["run", "info", "tools", "resources", "templates", "prompts", "call", "read", "prompt",
            "dev", "install", "host", "gateway", "demo", "completion"]  # fmt: skip


def _script(shell: str) -> str:
    done = run_mcpkit("completion", shell)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _complete(script: Path, cwd: Path, *words: str) -> list[str]:
    """What bash offers for ``mcpkit WORDS`` (the last word being completed) with *script* sourced."""
    line = " ".join(["mcpkit", *(f"'{w}'" if w else "''" for w in words)])
    program = (
        f"source '{script}'\n"
        f"COMP_WORDS=({line}); COMP_CWORD={len(words)}\n"
        '_mcpkit; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], cwd=cwd, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [word for word in done.stdout.splitlines() if word]


def test_bash_completes_commands_options_values_and_files(tmp_path: Path) -> None:
    script = tmp_path / "mcpkit.bash"
    script.write_text(_script("bash"))
    (tmp_path / "weather app.py").write_text("")
    assert _complete(script, tmp_path, "to") == ["tools"]
    assert _complete(script, tmp_path, "pro") == ["prompts", "prompt"]
    assert set(_complete(script, tmp_path, "")) >= set(COMMANDS)
    assert _complete(script, tmp_path, "run", "--tra") == ["--transport"]
    assert _complete(script, tmp_path, "run", "--transport", "") == ["stdio", "http"]
    assert "cursor" in _complete(script, tmp_path, "install", "")
    assert _complete(script, tmp_path, "completion", "") == ["bash", "zsh", "fish"]
    assert _complete(script, tmp_path, "tools", "wea") == ["weather app.py"]
    assert "--protocol-version" in _complete(script, tmp_path, "call", "x.py", "--pro")


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts(shell: str, tmp_path: Path) -> None:
    script = _script(shell)
    for command in COMMANDS:
        assert f" {command}" in script or f"'{command}:" in script, command
    assert ("-l protocol-version" if shell == "fish" else "--protocol-version") in script
    assert "stdio" in script
    program = shutil.which(shell)
    if program is None:
        return  # the shell is not installed here: the script is checked for its commands above
    path = tmp_path / f"mcpkit.{shell}"
    path.write_text(script)
    checked = subprocess.run([program, "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr


def test_an_unknown_shell_is_a_usage_error() -> None:
    done = run_mcpkit("completion", "powershell")
    assert done.returncode == 2
    assert "invalid choice: 'powershell'" in done.stderr
