"""A server with every built-in middleware (for the tests), serving stdio, or HTTP on argv[1].

Outermost first: Logging(arguments=True) inside RedactArguments, Timing, ErrorMasking of
unexpected errors, RateLimit("2/h") on the tool ``limited``, ResponseLimit(4000). The tool
``seen`` answers what the first two recorded so far (log lines, then timing records).
"""

from __future__ import annotations

import logging
import sys

from mcpkit import Server, ToolError
from mcpkit.middleware import (
    CallRecord,
    ErrorMasking,
    Logging,
    RateLimit,
    RedactArguments,
    ResponseLimit,
    Timing,
)

lines: list[str] = []
timings: list[CallRecord] = []


class Kept(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        lines.append(record.getMessage())


log = logging.getLogger("builtin.requests")
log.setLevel(logging.INFO)
log.addHandler(Kept())
log.propagate = False

server = Server("builtin")
server.add_middleware(RedactArguments(Logging(log, arguments=True)))
server.add_middleware(Timing(timings.append, logger=None))
server.add_middleware(ErrorMasking("tool {name} failed", tool_errors="unexpected"))
server.add_middleware(RateLimit("2/h", tools=["limited"]))
server.add_middleware(ResponseLimit(4000), methods=["tools/call"])


@server.tool
def login(user: str, api_key: str) -> str:
    """Says what the tool itself received: the real key."""
    return f"{user} with a key of {len(api_key)} characters ending {api_key[-2:]}"


@server.tool
def boom() -> str:
    raise ValueError("cannot open /srv/private/db.sqlite")


@server.tool
def refuse() -> str:
    raise ToolError("not today")


@server.tool
def big() -> str:
    return "x" * 5000


@server.tool
def limited() -> str:
    return "done"


@server.tool
def seen() -> dict[str, list[str]]:
    return {
        "lines": list(lines),
        "timings": [f"{t.method} {t.name} {t.outcome}" for t in timings],
    }


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run("http", port=int(sys.argv[1]))
    else:
        server.run()
