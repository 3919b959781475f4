"""What several subcommands share: turning TARGET into something to connect to, argument types, and
the options every client command takes. Standard library only: ``mcpkit run`` imports this module."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from ._exits import USAGE, CliError

__all__ = [
    "LOG_LEVELS",
    "add_target_options",
    "is_url",
    "parse_env",
    "parse_headers",
    "port",
    "positive",
    "protocol_revision",
    "target_command",
]

#: The syslog levels of ``logging/setLevel``, most verbose first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def target_command(target: str) -> list[str] | str:
    """A TARGET as a command line (a ``FILE.py[:OBJECT]`` is served with ``mcpkit run``), or a URL as is.

    Raises:
        CliError: TARGET names a ``.py`` file that does not exist.
    """
    if is_url(target):
        return target
    try:
        parts = shlex.split(target)
    except ValueError as exc:  # an unclosed quote
        raise CliError(f"cannot split the command line {target!r}: {exc}", USAGE) from None
    if not parts:
        raise CliError("TARGET is empty: give a .py file, a command line or a URL", USAGE)
    if len(parts) == 1 and parts[0].partition(":")[0].endswith(".py"):
        if not Path(parts[0].partition(":")[0]).is_file():
            raise CliError(f"no such file: {parts[0].partition(':')[0]}", USAGE)
        return [sys.executable, "-m", "mcpkit", "run", parts[0]]
    return parts


def protocol_revision(text: str) -> str:
    """``--protocol-version``: a revision mcpkit speaks, or one line listing those it does."""
    from .._versions import SUPPORTED_VERSIONS

    if text not in SUPPORTED_VERSIONS:
        raise argparse.ArgumentTypeError(
            f"unknown protocol revision {text!r}; mcpkit speaks {', '.join(SUPPORTED_VERSIONS)}"
        )
    return text


def parse_headers(values: list[str]) -> dict[str, str]:
    """``--header 'Name: value'`` options as a dict (a later one of the same name wins)."""
    headers: dict[str, str] = {}
    for value in values:
        name, colon, content = value.partition(":")
        if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
            raise CliError(f"--header {value!r} is not 'Name: value'", USAGE)
        headers[name.strip()] = content.strip()
    return headers


def parse_env(values: list[str], files: list[str]) -> dict[str, str]:
    """``--env-file`` files (in order), then ``--env K=V`` options, as one environment."""
    env: dict[str, str] = {}
    for file in files:
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CliError(f"cannot read --env-file {file}: {exc.strerror or exc}", USAGE) from None
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, value = _assignment(line.removeprefix("export ").strip(), f"{file}, line {number}")
            env[key] = _unquoted(value.strip())
    for value in values:
        key, text = _assignment(value, f"--env {value!r}")
        env[key] = text
    return env


def _assignment(text: str, where: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    key = key.strip()
    if (
        not equals
        or not key
        or not (key[0].isalpha() or key[0] == "_")
        or not key.replace("_", "a").isalnum()
    ):
        raise CliError(f"{where}: expected NAME=VALUE", USAGE)
    return key, value


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def add_target_options(cmd: argparse.ArgumentParser) -> Any:
    """TARGET and the options every client command takes; returns the "output" group, for more."""
    cmd.add_argument(
        "target",
        metavar="TARGET",
        help="a server: FILE.py[:OBJECT], a command line in quotes, or an http(s):// URL",
    )
    out = cmd.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print the server's answer as JSON (keys sorted)")
    conn = cmd.add_argument_group("connection")
    conn.add_argument("--protocol-version", metavar="REVISION", type=protocol_revision,
                      help="use this protocol revision instead of negotiating one")  # fmt: skip
    conn.add_argument("--timeout", type=non_negative, default=60.0, metavar="SECONDS",
                      help="give up after this long without an answer or progress; 0 waits for ever "
                           "(default: 60)")  # fmt: skip
    conn.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                      help="URL targets: send this HTTP header with every request; repeatable")  # fmt: skip
    conn.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                      help="spawned servers: set this environment variable; repeatable")  # fmt: skip
    conn.add_argument("--env-file", action="append", default=[], metavar="FILE",
                      help="spawned servers: NAME=VALUE lines to set (before --env); repeatable")  # fmt: skip
    conn.add_argument("--server-stderr", action="store_true",
                      help="spawned servers: show their stderr as it comes (default: only its end, "
                           "when the command fails)")  # fmt: skip
    conn.add_argument("--log-level", choices=LOG_LEVELS, metavar="LEVEL",
                      help=f"ask the server for log messages at LEVEL and above ({', '.join(LOG_LEVELS)})")  # fmt: skip
    asks = cmd.add_argument_group("answering the server")
    asks.add_argument("--sampling-command", metavar="CMD",
                      help="answer sampling requests with this shell command: the request's params as "
                           "JSON on its stdin, its stdout the reply (default: refuse)")  # fmt: skip
    asks.add_argument("--root", action="append", default=[], metavar="DIR",
                      help="offer this directory as a root (roots/list); repeatable")  # fmt: skip
    return out


def port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (1-65535)")
    return port


def positive(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value
