"""The HTTP client's own connections against a bare server on 127.0.0.1 that writes odd answers: chunked
framing cut anywhere, many callers at once and the pool's limit, a kept-alive connection the server
hung up on, a proxy in the environment, an ``httpx.Auth`` flow, and answers past the client's bound."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncGenerator
from typing import Any

import httpx
import pytest

from mcpkit import Client, RPCError
from mcpkit.transports.http.client._wire import READ_SIZE

from ._client import echo, run
from ._raw import ERAS, MODERN, RawServer, Request, chunked, json_answer, result_of

pytestmark = pytest.mark.e2e


def transport_of(client: Client) -> Any:
    return client._transport


# -- chunked answers -------------------------------------------------------------------------------


def _cut(data: bytes, *sizes: int) -> list[bytes]:
    """*data* cut at the given sizes, then what is left."""
    pieces, start = [], 0
    for size in sizes:
        pieces.append(data[start : start + size])
        start += size
    return [*pieces, data[start:]]


def _chunked_json(request: Request) -> list[bytes]:
    return chunked("application/json", _cut(result_of(request, "chunked json"), 1, 7, 30))


def _chunked_sse(request: Request) -> list[bytes]:
    progress = b'data: {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}\r\n\r\n'
    event = b"id: 1\r\ndata: " + result_of(request, "chunked sse") + b"\r\n\r\n"
    # Cut inside a line, between CR and LF, and inside the JSON.
    return chunked("text/event-stream", [b": hello\n\n", *_cut(progress + event, 20, len(progress) - 21, 40)])


def _chunked_gzip(request: Request) -> list[bytes]:
    packed = gzip.compress(result_of(request, "chunked gzip"))
    return chunked("application/json", _cut(packed, 3, 10), "content-encoding: gzip\r\n")


CHUNKED = {"json": _chunked_json, "sse": _chunked_sse, "gzip": _chunked_gzip}


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("kind", sorted(CHUNKED))
def test_a_chunked_answer_cut_anywhere_is_read_whole(kind: str, version: str) -> None:
    async def answer(request: Request) -> list[bytes]:
        return CHUNKED[kind](request)

    async def main() -> None:
        async with (
            RawServer(answer).running() as server,
            Client(server.url, protocol_version=version) as client,
        ):
            for _ in range(3):  # on one kept-alive connection: each answer ends where its last chunk does
                assert await echo(client) == f"chunked {kind}"
        # An event stream is not over with its answer: the next call, sent before the last chunk
        # came, takes a second connection rather than wait.
        assert len({r.connection for r in server.calls()}) <= (2 if kind == "sse" else 1)

    run(main())


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("kind", ["json", "sse"])
def test_answers_larger_than_one_read_are_read_whole_on_one_connection(kind: str, version: str) -> None:
    # The connection reads its socket into one buffer of READ_SIZE bytes, used again for every read:
    # an answer several reads long (and not a multiple of the buffer) must come out whole, and the
    # small answer after it must not show anything left over from it.
    big = "".join(f"{n:07d}," for n in range(int(READ_SIZE * 3.3) // 8))

    async def answer(request: Request) -> list[bytes]:
        text = big if request.message["params"]["arguments"]["text"] == "big" else "small"
        body = result_of(request, text)
        if kind == "json":
            return json_answer(body)
        event = b"data: " + body + b"\n\n"
        return [
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
            % (len(event), event)
        ]

    async def main() -> None:
        async with (
            RawServer(answer).running() as server,
            Client(server.url, protocol_version=version) as client,
        ):
            for _ in range(2):
                assert await echo(client, "big") == big
                assert await echo(client) == "small"
        assert len({r.connection for r in server.calls()}) == 1

    run(main())


def test_broken_chunked_framing_fails_the_call_and_the_next_call_works() -> None:
    broken = True

    async def answer(request: Request) -> list[bytes]:
        nonlocal broken
        if broken:
            broken = False
            head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            return [head, b"zz\r\n{}\r\n"]  # not a hex size
        return json_answer(result_of(request, "fine"))

    async def main() -> None:
        async with RawServer(answer).running() as server, Client(server.url) as client:
            with pytest.raises(RPCError, match=r"HTTP request failed: ReadError: the answer broke HTTP/1\.1"):
                await echo(client)
            assert await echo(client) == "fine"

    run(main())


# -- the pool: one connection per caller, up to its limit, reused ----------------------------------


def test_callers_get_a_connection_each_up_to_the_pools_limit_and_reuse_them() -> None:
    release, reached = asyncio.Event(), asyncio.Event()

    async def answer(request: Request) -> list[bytes]:
        if len(server.calls()) == 100:
            reached.set()
        await release.wait()
        return json_answer(result_of(request, request.message["params"]["arguments"]["text"]))

    async def main() -> None:
        async with server.running(), Client(server.url) as client:
            limit = transport_of(client)._pool.max_connections
            assert limit == 100
            calls = [asyncio.ensure_future(echo(client, str(n))) for n in range(limit + 20)]
            await reached.wait()
            await asyncio.sleep(0.5)  # time for more to arrive, were the pool not holding them back
            assert len(server.calls()) == limit and server.connections == limit
            release.set()
            assert await asyncio.gather(*calls) == [str(n) for n in range(limit + 20)]
            assert server.most_open == limit
            before = server.connections
            for _ in range(10):  # one caller now: the most recently used connection, again and again
                await echo(client)
            assert server.connections == before
            assert len({r.connection for r in server.calls()[-10:]}) == 1

    server = RawServer(answer)
    run(main())


# -- a kept-alive connection the server hung up on -------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_a_request_on_a_kept_alive_connection_the_server_dropped_is_sent_again_once(version: str) -> None:
    async def answer(request: Request) -> list[bytes] | None:
        arguments = request.message["params"]["arguments"]
        if arguments["text"] == "drop" and len(server.calls()) == 2:
            return None  # a server closing an idle connection just as the request arrived
        return json_answer(result_of(request, arguments["text"]))

    server = RawServer(answer)

    async def main() -> None:
        async with server.running(), Client(server.url, protocol_version=version) as client:
            assert await echo(client, "first") == "first"
            assert await echo(client, "drop") == "drop"
        first, dropped, again = server.calls()
        assert dropped.connection == first.connection and again.connection != first.connection
        assert dropped.message == again.message

    run(main())


def test_a_fresh_connection_dropped_before_its_answer_fails_the_call_without_a_second_try() -> None:
    async def answer(request: Request) -> list[bytes] | None:
        return None

    server = RawServer(answer)

    async def main() -> None:
        async with server.running(), Client(server.url) as client:
            with pytest.raises(RPCError, match="HTTP request failed: ReadError"):
                await echo(client)  # on the probe's kept-alive connection, then once on a fresh one
            assert len(server.calls()) == 2
            with pytest.raises(RPCError, match="HTTP request failed: ReadError"):
                await echo(client)  # a fresh connection at once: not sent again
            assert len(server.calls()) == 3

    run(main())


# -- a proxy in the environment --------------------------------------------------------------------


@pytest.mark.parametrize("bypassed", [False, True], ids=["through-the-proxy", "no-proxy-for-the-host"])
def test_a_proxy_in_the_environment_carries_the_requests(
    monkeypatch: pytest.MonkeyPatch, bypassed: bool
) -> None:
    async def answer(request: Request) -> list[bytes]:
        return json_answer(result_of(request, "proxied"))

    proxy = RawServer(answer)  # as a proxy: it answers what it is asked for, whatever the origin

    async def main() -> None:
        async with proxy.running():
            for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "https_proxy", "HTTPS_PROXY"):
                monkeypatch.delenv(name, raising=False)
            monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/mcp"))
            if bypassed:
                monkeypatch.setenv("NO_PROXY", "127.0.0.1")
                url = proxy.url  # the server itself, reached directly
            else:
                url = "http://127.0.0.1:9/mcp"  # nothing listens here: only the proxy can answer
            async with Client(url, protocol_version=MODERN) as client:
                assert await echo(client) == "proxied"
        targets = {r.target for r in proxy.requests}
        assert targets == ({"/mcp"} if bypassed else {url})  # absolute-form: a request to a proxy

    run(main())


# -- an httpx.Auth flow, driven on the client's own connections ------------------------------------


class Rotating(httpx.Auth):
    """Sends the token it holds; on a 401 takes the next one and tries again (a flow that must see
    the answer: what mcpkit's OAuth does on a refused token)."""

    requires_response_body = False

    def __init__(self, *tokens: str) -> None:
        self.tokens = list(tokens)

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = f"Bearer {self.tokens[0]}"
        response = yield request
        if response.status_code == 401 and len(self.tokens) > 1:
            if self.requires_response_body:
                assert json.loads(response.content) == {"error": "invalid_token"}
            self.tokens.pop(0)
            request.headers["Authorization"] = f"Bearer {self.tokens[0]}"
            yield request


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("body", [False, True], ids=["head-only", "reads-the-body"])
def test_an_httpx_auth_flow_runs_on_the_clients_own_kept_alive_connections(version: str, body: bool) -> None:
    async def answer(request: Request) -> list[bytes]:
        if request.headers.get("authorization") != "Bearer good":
            refused = b'{"error": "invalid_token"}'
            head = "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
            return [
                f"{head}www-authenticate: Bearer\r\ncontent-length: {len(refused)}\r\n\r\n".encode() + refused
            ]
        return json_answer(result_of(request, "authorized"))

    server = RawServer(answer)

    async def main() -> None:
        auth = Rotating("stale", "good")
        auth.requires_response_body = body
        async with server.running(), Client(server.url, protocol_version=version, auth=auth) as client:
            assert transport_of(client)._requests._httpx is None  # not httpx: the client's connections
            for _ in range(3):
                assert await echo(client) == "authorized"
        refused, *authorized = server.calls()
        assert refused.headers["authorization"] == "Bearer stale" and len(authorized) == 3
        assert all(r.headers["authorization"] == "Bearer good" for r in authorized)
        assert len({r.connection for r in server.calls()}) == 1  # one, kept alive

    run(main())


# -- answers past the bound ------------------------------------------------------------------------

LIMIT = 64 * 1024


async def _endless_line(request: Request) -> list[bytes]:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    line = b"x" * 8192
    # About 4 MB of one line: far past the bound, and the client stops reading long before.
    return [head, b"%x\r\ndata: \r\n" % 6, *([b"%x\r\n%s\r\n" % (len(line), line)] * 512)]


async def _long_event(request: Request) -> list[bytes]:
    line = b"data: " + b"y" * 1000 + b"\n"  # each line short, the event they make long
    return chunked("text/event-stream", [line * 20] * 5)


async def _declared(request: Request) -> list[bytes]:
    return [b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500000000\r\n\r\n{"]


async def _chunked_body(request: Request) -> list[bytes]:
    return chunked("application/json", [b"[" + b"1," * 8000] * 8)


OVERSIZE = {"endless-sse-line": _endless_line, "long-sse-event": _long_event,
            "declared-length": _declared, "chunked-json": _chunked_body}  # fmt: skip


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("kind", sorted(OVERSIZE))
def test_an_answer_past_the_bound_fails_its_call_and_the_client_goes_on(kind: str, version: str) -> None:
    async def answer(request: Request) -> list[bytes]:
        if request.message["params"]["arguments"]["text"] == "big":
            return await OVERSIZE[kind](request)
        return json_answer(result_of(request, "small"))

    server = RawServer(answer)

    async def main() -> None:
        async with (
            server.running(),
            Client(server.url, protocol_version=version, max_message_bytes=LIMIT) as client,
        ):
            with pytest.raises(RPCError, match=f"larger than the limit of {LIMIT} bytes.*max_message_bytes"):
                await echo(client, "big")
            assert await echo(client, "after") == "small"
            if kind == "endless-sse-line":  # the client hung up rather than read on
                await asyncio.wait_for(server.hung_up.wait(), 30)

    run(main())
