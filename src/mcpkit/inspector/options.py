"""What the page says about how to connect, beyond the target: headers, a bearer token and OAuth for
a URL; environment variables and arguments for a command; and the host config entry it amounts to.

>>> options = Options.parse({"headers": "X-Tenant: acme\\n", "bearer": "s3cret", "env": "A=1",
...                          "args": "--port 'two words'"})
>>> options.http_headers()
{'X-Tenant': 'acme', 'Authorization': 'Bearer s3cret'}
>>> options.arguments, options.env
(['--port', 'two words'], {'A': '1'})
>>> host_entry("url", "http://127.0.0.1:8000/mcp", None, options)["headers"]["Authorization"]
'Bearer <token>'
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Options", "host_entry"]

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class Options:
    """The connection's settings; every field is optional."""

    headers: dict[str, str] = field(default_factory=dict)
    bearer: str = ""
    oauth: bool = False
    env: dict[str, str] = field(default_factory=dict)
    arguments: list[str] = field(default_factory=list)

    @staticmethod
    def parse(params: dict[str, Any]) -> Options:
        """From the page's ``connect`` parameters. Raises ``ValueError`` naming the bad line."""
        try:
            arguments = shlex.split(str(params.get("args") or ""))
        except ValueError as exc:
            raise ValueError(f"arguments: {exc} (quote with ' or \")") from None
        return Options(
            headers=_pairs(params.get("headers"), ":", _HEADER_NAME, "header"),
            bearer=str(params.get("bearer") or "").strip(),
            oauth=bool(params.get("oauth")),
            env=_pairs(params.get("env"), "=", _ENV_NAME, "environment variable"),
            arguments=arguments,
        )

    def http_headers(self) -> dict[str, str]:
        """The headers of every HTTP request (the bearer token as ``Authorization``)."""
        headers = dict(self.headers)
        if self.bearer:
            headers["Authorization"] = f"Bearer {self.bearer}"
        return headers


def _pairs(text: Any, separator: str, names: re.Pattern[str], what: str) -> dict[str, str]:
    """``NAME<separator>value`` a line (blank lines and ``#`` comments skipped)."""
    pairs: dict[str, str] = {}
    for number, line in enumerate(str(text or "").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, found, value = line.partition(separator)
        name = name.strip()
        if not found or not names.match(name):
            raise ValueError(f"{what}s, line {number}: expected NAME{separator}value, got {line!r}")
        pairs[name] = value.strip()
    return pairs


def host_entry(kind: str, value: str, command: list[str] | None, options: Options) -> dict[str, Any]:
    """The ``mcpServers`` entry a host (Claude Desktop, Cursor, ...) needs for this target.

    *command* is the target's command line (for ``dev`` and ``command``). A bearer token is not
    copied: the entry holds ``Bearer <token>`` for the user to fill in where secrets belong.
    """
    if kind == "url":
        entry: dict[str, Any] = {"type": "http", "url": value}
        headers = dict(options.headers)
        if options.bearer:
            headers["Authorization"] = "Bearer <token>"
        if headers:
            entry["headers"] = headers
        return entry
    line = [*(command or []), *options.arguments]
    entry = {"command": line[0] if line else "", "args": line[1:]}
    if options.env:
        entry["env"] = dict(options.env)
    return entry
