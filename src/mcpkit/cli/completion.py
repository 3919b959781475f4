"""``mcpkit completion bash|zsh|fish``: a shell completion script, written from the command's own parser.

The script completes command names, each command's options, the values of options that take a
fixed set (``--transport stdio|http``, ``install HOST``), and file names elsewhere (a server file is
the usual TARGET). It is generated, not kept by hand, so it lists exactly what ``mcpkit --help``
does; load it with ``source <(mcpkit completion bash)`` (docs/cli.md says where to put it for good).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._exits import OK

__all__ = ["register"]

SHELLS = ("bash", "zsh", "fish")


class _Command:
    """What a script needs of one command: its help line, options, and fixed sets of values.

    (A plain class: every command's parser imports this module, and a dataclass is compiled at import.)
    """

    __slots__ = ("choices", "help", "name", "options")

    def __init__(self, name: str, help: str) -> None:
        self.name = name
        self.help = help
        self.options: list[str] = []
        #: option -> the values it takes; ``""`` for the command's positional choices (install HOST).
        self.choices: dict[str, list[str]] = {}


def _commands() -> list[_Command]:
    from . import _parser

    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {action.dest: action.help or "" for action in sub._choices_actions}
    commands = []
    for name, command_parser in sub.choices.items():
        command = _Command(name, helps.get(name, ""))
        for action in command_parser._actions:
            if action.option_strings:
                command.options.extend(o for o in action.option_strings if o.startswith("--"))
                if action.choices is not None and action.nargs != 0:
                    for option in action.option_strings:
                        command.choices[option] = [str(c) for c in action.choices]
            elif action.choices is not None:
                command.choices.setdefault("", [str(c) for c in action.choices])
        commands.append(command)
    return commands


def _cases(commands: list[_Command], *, opts: str, prev: str, value: str, first: str, pad: str) -> str:
    """The branches of a bash or zsh ``case`` on the command word, one per command: *opts* sets the
    command's options (``{options}``), *prev* opens a ``case`` on the word before the cursor, *value*
    completes an option's fixed ``{words}`` (``{option}``), *first* the first positional's; *pad*
    indents *value* lines (the two shells nest one level apart). The logic is the same for both
    shells; only these lines differ."""
    cases = []
    for command in commands:
        values = "".join(
            f"{pad}{value.format(option=option, words=' '.join(choices))}\n"
            for option, choices in command.choices.items()
            if option
        )
        positional = command.choices.get("", [])
        cases.append(
            f"        {command.name})\n"
            f"            {opts.format(options=' '.join(command.options))}\n"
            f"            {prev}\n{values}            esac\n"
            + (f"            {first.format(words=' '.join(positional))}\n" if positional else "")
            + "            ;;\n"
        )
    return "".join(cases)


def _bash(commands: list[_Command]) -> str:
    cases = _cases(
        commands,
        opts="opts='{options}'",
        prev='case "$prev" in',
        value="{option}) COMPREPLY=($(compgen -W '{words}' -- \"$cur\")); return;;",
        first="if [[ $COMP_CWORD -eq 2 ]]; then COMPREPLY=($(compgen -W '{words}' -- \"$cur\")); return; fi",
        pad=" " * 12,
    )
    names = " ".join(c.name for c in commands)
    return f"""# bash completion for mcpkit: source <(mcpkit completion bash)
_mcpkit() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" opts=""
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W '{names} --help --version' -- "$cur"))
        return
    fi
    case "${{COMP_WORDS[1]}}" in
{cases}    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
    else
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")  # one file per line: names may hold spaces
    fi
}}
complete -o bashdefault -o default -F _mcpkit mcpkit
"""


def _quoted(text: str) -> str:
    """*text* inside single quotes, for any of the three shells."""
    return "'" + text.replace("'", "'\\''") + "'"


def _zsh(commands: list[_Command]) -> str:
    described = "\n".join(
        f"        {_quoted(c.name + ':' + c.help.replace(':', chr(92) + ':'))}" for c in commands
    )
    cases = _cases(
        commands,
        opts="opts=({options})",
        prev="case $words[CURRENT-1] in",
        value="{option}) compadd -- {words}; return;;",
        first="(( CURRENT == 3 )) && {{ compadd -- {words}; return; }}",
        pad=" " * 16,
    )
    return f"""#compdef mcpkit
# zsh completion for mcpkit: source <(mcpkit completion zsh), after compinit,
# or save it as _mcpkit in a folder of $fpath.
_mcpkit() {{
    local -a commands opts
    commands=(
{described}
    )
    if (( CURRENT == 2 )); then
        _describe 'command' commands
        return
    fi
    case $words[2] in
{cases}    esac
    if [[ $PREFIX == -* ]]; then
        compadd -- $opts --help
    else
        _files
    fi
}}
if [[ $funcstack[1] == _mcpkit ]]; then
    _mcpkit "$@"
else
    compdef _mcpkit mcpkit
fi
"""


def _fish(commands: list[_Command]) -> str:
    lines = [
        "# fish completion for mcpkit: mcpkit completion fish | source",
        "# (or save it as ~/.config/fish/completions/mcpkit.fish)",
        "complete -c mcpkit -f",
        "complete -c mcpkit -n __fish_use_subcommand -l version -d 'print the version'",
        # A command's fixed first argument (install HOST, completion SHELL) is offered alone, as
        # bash and zsh do: files only come after it.
        "function __mcpkit_first_argument",
        "    test (count (commandline -opc)) -eq 2",
        "end",
    ]
    for command in commands:
        lines.append(
            f"complete -c mcpkit -n __fish_use_subcommand -a {command.name} -d {_quoted(command.help)}"
        )
    for command in commands:
        seen = f"-n '__fish_seen_subcommand_from {command.name}'"
        positional = command.choices.get("", [])
        if positional:
            first = f"-n '__fish_seen_subcommand_from {command.name}; and __mcpkit_first_argument'"
            later = f"-n '__fish_seen_subcommand_from {command.name}; and not __mcpkit_first_argument'"
            lines.append(f"complete -c mcpkit {first} -a {_quoted(' '.join(positional))}")
            lines.append(f"complete -c mcpkit {later} -F")
        else:
            lines.append(f"complete -c mcpkit {seen} -F")
        for option in command.options:
            values = command.choices.get(option)
            takes = f" -x -a {_quoted(' '.join(values))}" if values else ""
            lines.append(f"complete -c mcpkit {seen} -l {option[2:]}{takes}")
    return "\n".join(lines) + "\n"


def _cmd_completion(args: argparse.Namespace) -> int:
    write = {"bash": _bash, "zsh": _zsh, "fish": _fish}[args.shell]
    sys.stdout.write(write(_commands()))
    return OK


def register(sub: Any) -> None:
    cmd = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description="Print a completion script for your shell: commands, options, their values, files. "
        "bash: source <(mcpkit completion bash); zsh: source <(mcpkit completion zsh) after compinit; "
        "fish: mcpkit completion fish | source.",
    )
    cmd.add_argument("shell", metavar="SHELL", choices=SHELLS, help=", ".join(SHELLS))
    cmd.set_defaults(handler=_cmd_completion)
