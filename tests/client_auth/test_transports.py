"""The transports take ``auth=`` and hand it to httpx: the 2024-11-05 HTTP+SSE one authorizes its
event stream and every POST to the endpoint it was given, knowing nothing of OAuth."""

from __future__ import annotations

import json

import pytest

from mcpkit.client.auth import OAuth
from mcpkit.transports.http.client.legacy_sse import SSEClientTransport

from ._servers import Protected, Reply, Seen, approve, as_json, run

pytestmark = pytest.mark.e2e


def test_the_sse_transport_authorizes_its_stream_and_its_posts() -> None:
    server = Protected(prm_at="/.well-known/oauth-protected-resource/sse", resource_path="/sse")

    def authorized(seen: Seen) -> bool:
        return seen.headers.get("authorization", "").removeprefix("Bearer ") in server.tokens

    @server.router.route("GET", "/sse")
    async def stream(seen: Seen) -> Reply:
        if not authorized(seen):
            return server._challenge(401, "invalid_token", None)
        return 200, {"Content-Type": "text/event-stream"}, b"event: endpoint\ndata: /messages?s=1\n\n"

    @server.router.route("POST", "/messages")
    async def messages(seen: Seen) -> Reply:
        return (202, {}, b"") if authorized(seen) else as_json(401, {"error": "invalid_token"})

    async def main() -> None:
        async with server.running():
            transport = SSEClientTransport(f"{server.base}/sse", auth=OAuth(interactive=approve))
            await transport.open()
            await transport.send(
                json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
            )
            await transport.aclose()

    run(main())
    [authorization] = server.authorizations
    assert authorization["resource"] == f"{server.base}/sse"
    posts = [s for s in server.router.seen if s.path == "/messages"]
    assert len(posts) == 1 and authorized(posts[0])
