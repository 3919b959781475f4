"""What several subcommands share: turning TARGET into something to connect to, argument types."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_target_options", "port", "positive", "target_command"]


def target_command(target: str) -> list[str] | str:
    """A TARGET as a command line (a ``.py`` file is served with ``mcpkit run``), or a URL as is."""
    if target.startswith(("http://", "https://")):
        return target
    parts = shlex.split(target)
    if len(parts) == 1 and parts[0].endswith(".py") and Path(parts[0]).is_file():
        return [sys.executable, "-m", "mcpkit", "run", parts[0]]
    return parts


def add_target_options(cmd: argparse.ArgumentParser) -> None:
    """TARGET and the options every client command takes."""
    cmd.add_argument("target", metavar="TARGET", help="a command line that starts a server, or a .py file")
    cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
    cmd.add_argument("--protocol-version", metavar="REVISION", help="force a protocol revision")


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
