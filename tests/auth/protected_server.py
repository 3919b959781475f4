"""The server the authorization tests protect: tools that tell who called them (async and sync), one
that needs a scope of its own, and one that shows everything a handler can see of its request."""

from __future__ import annotations

from mcpkit import AuthInfo, Context, Server
from mcpkit.auth import current_auth

server = Server("protected", "1.0.0")


def describe(auth: AuthInfo | None) -> str:
    if auth is None:
        return "anonymous"
    return f"{auth.subject} via {auth.client_id} with {' '.join(sorted(auth.scopes))}"


@server.tool
async def whoami(ctx: Context) -> str:
    """The caller's subject, client and scopes, as the handler sees them."""
    return describe(ctx.auth)


@server.tool
def whoami_sync(ctx: Context) -> str:
    """The same from a worker thread: ``ctx.auth``, and the context variable agreeing with it."""
    assert current_auth.get() == ctx.auth
    return describe(ctx.auth)


@server.tool(scopes=["notes:write"])
async def add_note(text: str, ctx: Context) -> str:
    """Needs notes:write besides the server-wide scopes."""
    return f"saved {text!r} for {describe(ctx.auth)}"


@server.tool
async def peek(ctx: Context) -> str:
    """Everything a handler can reach about its request, as text (the tests look for the token)."""
    seen = {name: repr(getattr(ctx, name, None)) for name in ctx.__slots__}
    seen["claims"] = repr(dict(ctx.auth.claims)) if ctx.auth is not None else ""
    return repr(seen)
