"""``mcpkit completion SHELL``: each script loaded the way docs/cli.md says, in the real shell,
completes commands, options, their values and files: bash's through its completion function, zsh's
by pressing Tab in an interactive zsh on a pseudo-terminal, fish's with ``complete -C``. The zsh and
fish tests skip, saying so, only where that shell is not installed."""

from __future__ import annotations

import os
import pty
import select
import shlex
import shutil
import subprocess
import sys
import time
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
def test_zsh_and_fish_scripts_name_every_command(shell: str) -> None:
    script = _script(shell)
    for command in COMMANDS:
        assert f" {command}" in script or f"'{command}:" in script, command
    assert ("-l protocol-version" if shell == "fish" else "--protocol-version") in script
    assert "stdio" in script


def _shell(name: str) -> str:
    program = shutil.which(name)
    if program is None:
        pytest.skip(f"{name} is not installed (apt-get install {name}; .ci/run does)")
    return program


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_the_script_parses_in_its_shell(shell: str, tmp_path: Path) -> None:
    program = _shell(shell)
    path = tmp_path / f"mcpkit.{shell}"
    path.write_text(_script(shell))
    flag = "--no-execute" if shell == "fish" else "-n"
    checked = subprocess.run([program, flag, str(path)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and checked.stderr == "", checked.stderr


#: Put in a real interactive zsh (on a pseudo-terminal) before a line is completed: the completion
#: system, the script loaded as docs/cli.md says (LOAD), a compadd that also writes down each match it
#: adds (-O, -A and -D calls only filter arrays), and Ctrl-X writing the line as completed (then DONE).
_ZSH_SETUP = """\
autoload -U compinit && compinit -u -d "$HOME/.zcompdump"
LOAD
compadd() {
  if (( ! ${@[(I)-[OAD]*]} )); then
    local -a added; builtin compadd -O added "$@"; print -rl -- $added >> MATCHES
  fi
  builtin compadd "$@"
}
_grab() { print -r -- "$BUFFER" > DONE }; zle -N _grab; bindkey '^X' _grab
print > READY
"""


def _zsh_complete(program: str, load: str, cwd: Path, line: str) -> tuple[str, list[str]]:
    """What a real zsh does when Tab is pressed after *line*: the line it leaves, and the matches."""
    matches, ready, done = cwd / ".matches", cwd / ".ready", cwd / ".done"
    for path in (matches, ready, done):
        path.unlink(missing_ok=True)
    setup = _ZSH_SETUP.replace("LOAD", load)
    for word, path in (("MATCHES", matches), ("DONE", done), ("READY", ready)):
        setup = setup.replace(word, f"'{path}'")
    main, child = pty.openpty()
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "TERM": "dumb"}
    zsh = subprocess.Popen([program, "-f", "-i"], stdin=child, stdout=child, stderr=child, cwd=cwd,
                           env=env, start_new_session=True)  # fmt: skip
    os.close(child)
    try:
        os.write(main, setup.encode())
        _drain(main, ready)  # typed ahead, a Tab would reach zsh before its completion is set up
        os.write(main, (line + "\t\x18").encode())
        _drain(main, done)
        os.write(main, b"\x15exit\n")
        zsh.wait(timeout=60)
    finally:
        if zsh.poll() is None:
            zsh.kill()
            zsh.wait()
        os.close(main)
    written = matches.read_text().splitlines() if matches.exists() else []
    return done.read_text().rstrip("\n"), written


def _drain(main: int, until: Path) -> None:
    """Read the terminal (so zsh never blocks writing to it) until *until* exists."""
    deadline = time.monotonic() + 60
    while not until.exists():
        assert time.monotonic() < deadline, f"zsh did not get to {until.name} within 60 s"
        if select.select([main], [], [], 0.05)[0]:
            os.read(main, 65536)


def test_zsh_completes_commands_options_values_and_files(tmp_path: Path) -> None:
    program = _shell("zsh")
    script = tmp_path / "mcpkit.zsh"
    script.write_text(_script("zsh"))
    (tmp_path / "weather app.py").write_text("")
    load = f"source '{script}'"  # docs/cli.md: source <(mcpkit completion zsh), after compinit
    assert _zsh_complete(program, load, tmp_path, "mcpkit to") == ("mcpkit tools ", ["tools"])
    line, offered = _zsh_complete(program, load, tmp_path, "mcpkit pro")
    assert line == "mcpkit prompt" and sorted(offered) == ["prompt", "prompts"]
    assert _zsh_complete(program, load, tmp_path, "mcpkit run --tra")[0] == "mcpkit run --transport "
    assert _zsh_complete(program, load, tmp_path, "mcpkit run --transport ")[1] == ["stdio", "http"]
    assert _zsh_complete(program, load, tmp_path, "mcpkit completion ")[1] == ["bash", "zsh", "fish"]
    assert "cursor" in _zsh_complete(program, load, tmp_path, "mcpkit install ")[1]
    assert _zsh_complete(program, load, tmp_path, "mcpkit tools wea")[0] == "mcpkit tools weather\\ app.py "
    line = _zsh_complete(program, load, tmp_path, "mcpkit call x.py --proto")[0]
    assert line == "mcpkit call x.py --protocol-version "

    # The other way docs/cli.md gives: saved as _mcpkit in a folder of $fpath, before compinit.
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_mcpkit").write_text(_script("zsh"))
    autoloaded = f"fpath=('{functions}' $fpath); compinit -u -d \"$HOME/.zcompdump-fpath\""
    assert _zsh_complete(program, autoloaded, tmp_path, "mcpkit to") == ("mcpkit tools ", ["tools"])


def _fish_complete(program: str, home: Path, cwd: Path, line: str) -> list[str]:
    """The candidates ``complete -C`` prints for *line* (descriptions cut off), the script being
    where docs/cli.md says to save it and ``mcpkit`` on PATH, as for a user."""
    env = {
        "PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    done = subprocess.run([program, "-c", f"complete -C {shlex.quote(line)}"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [candidate.split("\t", 1)[0] for candidate in done.stdout.splitlines()]


def test_fish_completes_commands_options_values_and_files(tmp_path: Path) -> None:
    program = _shell("fish")
    home = tmp_path / "home"
    completions = home / ".config" / "fish" / "completions"
    completions.mkdir(parents=True)
    (completions / "mcpkit.fish").write_text(_script("fish"))
    # fish loads a command's completions when the command exists: a stand-in is enough to find.
    (home / "bin").mkdir()
    (home / "bin" / "mcpkit").write_text(f"#!/bin/sh\nexec '{sys.executable}' -m mcpkit \"$@\"\n")
    (home / "bin" / "mcpkit").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "weather app.py").write_text("")
    assert _fish_complete(program, home, work, "mcpkit to") == ["tools"]
    assert sorted(_fish_complete(program, home, work, "mcpkit pro")) == ["prompt", "prompts"]
    assert _fish_complete(program, home, work, "mcpkit run --tra") == ["--transport"]
    assert sorted(_fish_complete(program, home, work, "mcpkit run --transport ")) == ["http", "stdio"]
    assert sorted(_fish_complete(program, home, work, "mcpkit completion ")) == ["bash", "fish", "zsh"]
    hosts = _fish_complete(program, home, work, "mcpkit install ")
    assert "cursor" in hosts and "weather app.py" not in hosts  # the host first, then a file
    assert _fish_complete(program, home, work, "mcpkit install cursor wea") == ["weather app.py"]
    assert _fish_complete(program, home, work, "mcpkit tools wea") == ["weather app.py"]
    assert _fish_complete(program, home, work, "mcpkit call x.py --proto") == ["--protocol-version"]


def test_an_unknown_shell_is_a_usage_error() -> None:
    done = run_mcpkit("completion", "powershell")
    assert done.returncode == 2
    assert "invalid choice: 'powershell'" in done.stderr
