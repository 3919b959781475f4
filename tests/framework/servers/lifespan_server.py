"""A server whose lifespan records its start and stop in the file $LIFESPAN_LOG (for the tests);
$LIFESPAN_FAIL makes it fail to start. Serves stdio, or HTTP on the port given as argv[1]."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcpkit import Context, Server

LOG = Path(os.environ["LIFESPAN_LOG"])


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    if os.environ.get("LIFESPAN_FAIL"):
        raise ConnectionRefusedError("database at db.invalid:5432 refused the connection")
    with LOG.open("a") as log:  # noqa: ASYNC230 - one line, before anything is served
        log.write(f"enter {os.getpid()}\n")
    try:
        yield {"pool": f"pool-{os.getpid()}"}
    finally:
        with LOG.open("a") as log:  # noqa: ASYNC230 - one line, once nothing is served
            log.write(f"exit {os.getpid()}\n")


server = Server("lifespan", lifespan=lifespan)


@server.tool
def pool_sync(ctx: Context) -> str:
    return str(ctx.lifespan["pool"])


@server.tool
async def pool_async(ctx: Context) -> str:
    return str(ctx.lifespan["pool"])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run("http", port=int(sys.argv[1]))
    else:
        server.run()
