"""Variable references in host config files, expanded one dialect at a time, never passed through.

Each host writes references its own way: Claude Code ``${VAR}`` and ``${VAR:-default}``, Cursor and
Windsurf ``${env:NAME}`` (plus ``${userHome}``, ``${workspaceFolder}``), VS Code ``${env:NAME}`` and
``${input:id}``. A reference that names an unset variable (or an input nobody answered) is an error
naming it: a server started with a literal ``${API_KEY}`` as its key fails later and less clearly.
``$$`` is not special anywhere (no host documents an escape), and text outside ``${...}`` is kept as is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Expander", "UnsetVariable"]

# A reference: ``${`` then a body without ``}``; the body's meaning is the dialect's.
_REFERENCE: Final = re.compile(r"\$\{([^}]*)\}")
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class UnsetVariable(ValueError):
    """A reference to a variable that is not set (or an input with no answer)."""

    def __init__(self, reference: str, what: str) -> None:
        super().__init__(f"{what} is not set (in {reference!r})")
        self.reference = reference
        self.what = what


@dataclass
class Expander:
    """Expands the references one dialect allows in a string.

    Args:
        env: the variables (``os.environ`` or a test's own mapping).
        shell_style: ``${VAR}`` and ``${VAR:-default}`` (Claude Code, and the mcpServers family).
        env_prefix: ``${env:NAME}`` (Cursor, Windsurf, VS Code).
        inputs: ``${input:id}`` answers (VS Code's), or None in a dialect without inputs.
        declared: the inputs the file declares (id -> description, password); one of them not in
            *inputs* is asked for once, when first used, with ``ask_input(id, description,
            password) -> str | None`` (None: no answer).
        builtins: other names the dialect defines (``userHome``, ``workspaceFolder``).
    """

    env: Mapping[str, str]
    shell_style: bool = True
    env_prefix: bool = True
    inputs: dict[str, str] | None = None
    declared: Mapping[str, tuple[str, bool]] = field(default_factory=dict)
    ask_input: Callable[[str, str, bool], str | None] | None = None
    builtins: Mapping[str, str] = field(default_factory=dict)

    def expand(self, text: str) -> str:
        """*text* with every reference replaced.

        Raises:
            UnsetVariable: a reference names an unset variable or an unanswered input.
            ValueError: a reference this dialect does not know (``${foo bar}``, ``${input:x}`` in a
                dialect without inputs).
        """
        return _REFERENCE.sub(lambda found: self._value(found.group(0), found.group(1)), text)

    def _value(self, reference: str, body: str) -> str:
        if body in self.builtins:
            return self.builtins[body]
        scheme, colon, rest = body.partition(":")
        if colon and scheme == "env" and self.env_prefix:
            if not _NAME.fullmatch(rest):
                raise ValueError(f"invalid variable name in {reference!r}")
            if rest not in self.env:
                raise UnsetVariable(reference, f"environment variable {rest}")
            return self.env[rest]
        if colon and scheme == "input" and self.inputs is not None:
            # An undeclared input is never asked for: it is an error naming it.
            if rest not in self.inputs and rest in self.declared and self.ask_input is not None:
                answer = self.ask_input(rest, *self.declared[rest])
                if answer is not None:
                    self.inputs[rest] = answer
            if rest not in self.inputs:
                raise UnsetVariable(reference, f"input {rest}")
            return self.inputs[rest]
        if self.shell_style:
            name, default_sep, default = body.partition(":-")
            if _NAME.fullmatch(name):
                # As in a shell, ``:-`` takes the default for an empty variable as for an unset one.
                if self.env.get(name) or (name in self.env and not default_sep):
                    return self.env[name]
                if default_sep:
                    return default
                raise UnsetVariable(reference, f"environment variable {name}")
        raise ValueError(f"unknown reference {reference!r} in this config dialect")
