"""``mcpkit dev``: serve a server file with the web inspector, reloading it when its files change."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._common import port
from ._exits import USAGE, CliError

__all__ = ["register"]


def _cmd_dev(args: argparse.Namespace) -> int:
    from ..inspector import run

    if args.server is not None:
        location = args.server.partition(":")[0]
        if not Path(location).is_file():
            raise CliError(f"no such file: {location}", USAGE)
    for path in args.watch:
        if not Path(path).exists():
            raise CliError(f"nothing to watch at {path}", USAGE)
    run(
        args.server,
        port=args.port,
        open_browser=not args.no_browser,
        watch=[Path(p) for p in args.watch],
        reload=not args.no_reload,
    )
    return 0


def register(sub: Any) -> None:
    dev = sub.add_parser(
        "dev",
        help="serve a server file with the web inspector, reloading on change",
        description=(
            "Open the web inspector (served by mcpkit on 127.0.0.1, behind a random token) on a server "
            "file, FILE.py[:OBJECT], and reconnect it whenever a .py file beside it changes. Without "
            "FILE the inspector connects to the command lines and URLs you give it in the page."
        ),
    )
    dev.add_argument("server", metavar="FILE.py[:OBJECT]", nargs="?")
    dev.add_argument(
        "--port", type=port, default=0, help="the inspector's port on 127.0.0.1 (default: any free one)"
    )
    dev.add_argument(
        "--no-browser", action="store_true", help="print the inspector's address, do not open it"
    )
    dev.add_argument("--no-reload", action="store_true", help="do not watch the files")
    dev.add_argument("--watch", action="append", default=[], metavar="PATH",
                     help="also watch this folder or file (repeatable)")  # fmt: skip
    dev.set_defaults(handler=_cmd_dev)
