"""The HTTP+SSE transport of 2024-11-05: one GET stream carries everything the server says.

GET on the SSE path opens a session whose first event, ``endpoint``, names the URL to POST messages
to (``<messages path>?session_id=<id>``). Each POST is accepted with 202 and its message delivered to
the session's peer; answers, notifications and server requests all come back on the GET stream.
Closing that stream ends the session.

In a fleet the session stays on the process holding its stream; a message POSTed to another process
is forwarded there (the app's :class:`~.seams.SessionStrategy`: :mod:`mcpkit.fleet.sessions`).
"""

from __future__ import annotations

from .... import _jsonrpc as jsonrpc
from ...._errors import RemoteProtocolError
from ._asgi import BodyRefused, Receive, Scope, Send, plain, read_body
from .seams import SessionStrategy
from .sessions import SessionTable, standalone_stream

__all__ = ["open_sse", "post_message"]


async def open_sse(
    table: SessionTable,
    strategy: SessionStrategy,
    messages_path: str,
    client: str,
    receive: Receive,
    send: Send,
    owner: str | None = None,
) -> None:
    """GET: a new session and its stream, until the client goes away (503 if there are too many);
    on a protected endpoint it belongs to *owner*, the caller that opened it."""
    new = table.new(legacy=True, client=client)
    if new is None:
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", b"text/plain"), (b"retry-after", b"5")]})  # fmt: skip
        await send({"type": "http.response.body", "body": b"too many sessions, retry later"})
        return
    new.owner = owner
    session = table.add(new)
    endpoint = f"{messages_path}?session_id={session.id}".encode()
    try:
        await strategy.open(session, None)
        await standalone_stream(
            session, receive, send, b"event: endpoint\ndata: " + endpoint + b"\n\n", table.closing
        )
    finally:
        table.end(session)


async def post_message(
    table: SessionTable,
    strategy: SessionStrategy,
    max_body_bytes: int,
    body_timeout: float,
    scope: Scope,
    receive: Receive,
    send: Send,
    owner: str | None = None,
) -> None:
    """POST: one message for the session named in the query string (404 unless *owner* opened it)."""
    query = dict(
        part.split("=", 1) for part in scope.get("query_string", b"").decode().split("&") if "=" in part
    )
    session_id = query.get("session_id", "")
    session = table.sessions.get(session_id)
    elsewhere = session is None and await strategy.held_elsewhere(session_id, owner)
    if not elsewhere and (session is None or not session.legacy or session.owner != owner):
        await plain(send, 404, b"unknown session")
        return
    try:
        body = await read_body(receive, max_body_bytes, body_timeout)
    except BodyRefused as exc:
        await plain(send, exc.status, str(exc).encode())
        return
    if session is None:
        try:
            jsonrpc.decode(body)  # refused here as it would be there
        except RemoteProtocolError as exc:
            await plain(send, 400, str(exc).encode())
            return
        await strategy.forward(session_id, [body])  # first: if it cannot travel now, 503 (its guard)
        await plain(send, 202, b"Accepted")
        return
    peer = session.served.peer
    try:
        events = peer.decode(body)
    except RemoteProtocolError as exc:
        await plain(send, 400, str(exc).encode())
        return
    session.touched = table.clock()
    await plain(send, 202, b"Accepted")
    await peer.deliver(events)
