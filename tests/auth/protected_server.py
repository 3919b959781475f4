"""The server the authorization tests protect: a tool that tells who called it, in both eras."""

from __future__ import annotations

from mcpkit import Context, Server
from mcpkit.auth import current_auth

server = Server("protected", "1.0.0")


@server.tool
async def whoami(ctx: Context) -> str:
    """The caller's subject, client and scopes, as the handler sees them."""
    auth = current_auth.get()
    if auth is None:
        return "anonymous"
    return f"{auth.subject} via {auth.client_id} with {' '.join(sorted(auth.scopes))}"
