"""``mcpkit demo``: a host and gateway over the bundled example servers."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def _cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import main as demo_main

    return demo_main()


def register(sub: Any) -> None:
    demo = sub.add_parser("demo", help="a host and gateway over the bundled example servers")
    demo.set_defaults(handler=_cmd_demo)
