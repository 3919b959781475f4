"""``mcpkit gateway CONFIG``: every server of a host config served as one MCP server.

Over stdio (for a host application to spawn) or Streamable HTTP (``--transport http --port 8000``,
at ``/mcp``). The config is read like ``mcpkit host`` reads it (:mod:`.host`). Only the standard
library is imported here; the gateway is imported inside the handler.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._exits import OK

__all__ = ["register"]


def _cmd_gateway(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..gateway import serve
    from ..host.audit import AuditLog
    from .host import read_config

    config = read_config(args)
    # As `mcpkit host --audit`: this file instead of the config's, with the config's redaction.
    audit = AuditLog(Path(args.audit), config.audit.redact if config.audit else ()) if args.audit else None
    if args.transport == "http":
        import sys

        from ._common import check_listen

        check_listen(args.host, args.port)
        # As `mcpkit run` does: stdout stays free, and the user learns where to point a client.
        count = len(config.servers)
        source = args.config if args.config is not None else f"{args.from_host}'s config"
        print(f"mcpkit: serving {count} server{'s' * (count != 1)} of {source} at "
              f"http://{args.host}:{args.port}/mcp", file=sys.stderr)  # fmt: skip
    serve(config, transport=args.transport, host=args.host, port=args.port, audit=audit)
    return OK


def register(sub: Any) -> None:
    from ._common import port
    from .host import add_config_arguments

    parser = sub.add_parser("gateway", help="serve every server of a host config as one MCP server")
    add_config_arguments(parser)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (http)")
    parser.add_argument("--port", type=port, default=8000, help="the port to listen on (http)")
    parser.add_argument(
        "--audit", metavar="PATH", help="the audit log (default: the config's, else the state dir)"
    )
    parser.set_defaults(handler=_cmd_gateway)
