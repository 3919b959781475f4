"""Hostile input as data: what to send, and what each transport must answer.

Every :class:`Case` is one message (or one raw line) a careless or hostile client might send. Its
``expect`` maps each transport it applies to onto the answer that transport owes: the HTTP status of
the POST (``None`` over stdio) and the JSON-RPC answer (an error code, :data:`RESULT` for a success,
:data:`NOTHING` for no answer at all, or a tuple of those for a batch's array, member by member),
and where a case says so the id each answer carries.

Bodies are JSON values or raw bytes. For the 2026-07-28 transport a request body gets the per-request
``_meta`` (revision and client capabilities) and the standard headers unless the case says
otherwise, so each case tests the one thing it names.

The answers follow the spec of each revision (``shared/spec/<revision>/docs``); where mcpkit
answers otherwise, the case names the defect in ``known_bug`` and runs in a test of its own (none do now).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "BATCH",
    "CASES",
    "HTTP_TRANSPORTS",
    "NOTHING",
    "RESULT",
    "SESSION",
    "SSE",
    "STATELESS",
    "STDIO",
    "Case",
    "Expect",
    "cases_for",
]

# The transports, each named by what it speaks.
STDIO: Final = "stdio"
STATELESS: Final = "http-2026-07-28"
SESSION: Final = "http-2025-11-25"
BATCH: Final = "http-2025-03-26"
SSE: Final = "http+sse-2024-11-05"
HTTP_TRANSPORTS: Final = (STATELESS, SESSION, BATCH, SSE)
HANDSHAKE_HTTP: Final = (SESSION, BATCH)

RESULT: Final = 0  # a successful result
NOTHING: Final = None  # no JSON-RPC answer at all

PARSE, INVALID, NOT_FOUND, PARAMS, BUSY = -32700, -32600, -32601, -32602, -32000
HEADER_MISMATCH, UNSUPPORTED_VERSION = -32020, -32022

Answer = int | None | tuple[int | None, ...]


@dataclass(frozen=True)
class Expect:
    """What one transport owes a case: the POST's HTTP status and the JSON-RPC answer."""

    status: int | None
    answer: Answer
    #: The id each answer carries, in order (one for a lone answer), where the case checks it.
    ids: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class Case:
    name: str
    #: A JSON value (encoded compactly) or raw bytes, sent as is.
    body: Any
    expect: dict[str, Expect]
    #: Headers for HTTP transports: ``None`` removes a standard one; a list value sends it repeatedly.
    headers: dict[str, str | bytes | list[str] | None] = field(default_factory=dict)
    #: Add the 2026-07-28 ``_meta`` to a request body on that transport.
    meta: bool = True
    #: Sent first and left running (a slow call), in this session or in another (``"other"``).
    prelude: Any = None
    prelude_in: str = "same"
    #: Why mcpkit's answer is wrong today; the case then runs in a ``test_known_bug_*`` function.
    known_bug: str | None = None


def _all(
    stdio: Answer,
    http_status: int,
    http: Answer,
    *,
    sse: int = 400,
    sse_answer: Answer = NOTHING,
    stateless: tuple[int, Answer] | None = None,
) -> dict[str, Expect]:
    """The usual split: stdio answers in band; Streamable HTTP refuses before a session sees the
    message (a status of its own); HTTP+SSE refuses the POST with a plain 400."""
    expect = {
        STDIO: Expect(None, stdio),
        SESSION: Expect(http_status, http),
        BATCH: Expect(http_status, http),
    }
    expect[STATELESS] = Expect(*stateless) if stateless is not None else Expect(http_status, http)
    expect[SSE] = Expect(sse, sse_answer)
    return expect


def _handshake(expect: dict[str, Expect]) -> dict[str, Expect]:
    """*expect* without the 2026-07-28 transport: for a case whose prelude (a slow call in flight)
    has no meaning there (no session holds it)."""
    return {transport: e for transport, e in expect.items() if transport != STATELESS}


def _call(method: str, request_id: Any = "c", params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _note(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


SLOW = _call("tools/call", "slow-1", {"name": "slow_compute", "arguments": {"seconds": 0.5}})
META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
HUGE_BODY = json.dumps(_call("ping", "huge", {"pad": "x" * (4 * 1024 * 1024 + 1)})).encode()
HUGE_LINE = (
    b'{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":"' + b"x" * (16 * 1024 * 1024 + 1) + b'"}}'
)
DEEP_ARRAY = b"[" * 100_000
#: The requests one session may have in flight (the server's default), and a batch far past it.
IN_FLIGHT, BIG_BATCH = 256, 10_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000

# 202 with nothing on any stream: what a notification or an answer owes in a handshake session.
_ACCEPTED = {
    STDIO: Expect(None, NOTHING),
    SESSION: Expect(202, NOTHING),
    BATCH: Expect(202, NOTHING),
    SSE: Expect(202, NOTHING),
}

CASES: Final[list[Case]] = [
    # -- not JSON ----------------------------------------------------------------------------------
    Case("invalid-json", b'{"jsonrpc": "2.0", "id": 1, "method": ', _all(PARSE, 400, PARSE)),
    Case("invalid-utf8", b'{"jsonrpc":"2.0","id":1,"method":"ping\xff\xfe"}', _all(PARSE, 400, PARSE)),
    Case("lone-surrogate", b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}', _all(PARSE, 400, PARSE)),
    Case("trailing-garbage", b'{"jsonrpc":"2.0","id":1,"method":"ping"} x', _all(PARSE, 400, PARSE)),
    Case("nan-id", b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', _all(PARSE, 400, PARSE)),
    Case("deep-array-100k", DEEP_ARRAY, _all(PARSE, 400, PARSE)),
    Case("deep-object-100k", DEEP_OBJECT, _all(PARSE, 400, PARSE)),
    # -- JSON, not JSON-RPC ------------------------------------------------------------------------
    Case("a-number", 42, _all(INVALID, 400, INVALID)),
    Case("a-string", "ping", _all(INVALID, 400, INVALID)),
    Case("null", None, _all(INVALID, 400, INVALID)),
    Case("jsonrpc-missing", {"id": "c", "method": "ping"}, _all(INVALID, 400, INVALID)),
    Case("jsonrpc-1.0", {"jsonrpc": "1.0", "id": "c", "method": "ping"}, _all(INVALID, 400, INVALID)),
    Case("jsonrpc-number", {"jsonrpc": 2.0, "id": "c", "method": "ping"}, _all(INVALID, 400, INVALID)),
    Case("id-object", _call("ping", {"a": 1}), _all(INVALID, 400, INVALID)),
    Case("id-array", _call("ping", [1]), _all(INVALID, 400, INVALID)),
    Case("id-float", _call("ping", 1.5), _all(INVALID, 400, INVALID)),
    Case(
        "id-huge-integer",
        _call("tools/list", 2**70, {}),
        {
            STDIO: Expect(None, RESULT),
            STATELESS: Expect(200, RESULT),
            SESSION: Expect(200, RESULT),
            BATCH: Expect(200, RESULT),
            SSE: Expect(202, RESULT),
        },
    ),
    Case(
        "id-empty-string",
        _call("tools/list", "", {}),
        {
            STDIO: Expect(None, RESULT),
            STATELESS: Expect(200, RESULT),
            SESSION: Expect(200, RESULT),
            BATCH: Expect(200, RESULT),
            SSE: Expect(202, RESULT),
        },
    ),
    Case("id-bool", _call("ping", True), _all(INVALID, 400, INVALID)),
    Case("id-null", _call("ping", None), _all(INVALID, 400, INVALID)),
    Case("method-number", {"jsonrpc": "2.0", "id": "c", "method": 7}, _all(INVALID, 400, INVALID)),
    Case("method-null", {"jsonrpc": "2.0", "id": "c", "method": None}, _all(INVALID, 400, INVALID)),
    Case("params-array", {**_call("tools/list"), "params": [1, 2]}, _all(INVALID, 400, INVALID), meta=False),
    Case("params-string", {**_call("tools/list"), "params": "x"}, _all(INVALID, 400, INVALID), meta=False),
    Case("params-null", {**_call("tools/list"), "params": None}, _all(INVALID, 400, INVALID), meta=False),
    Case(
        "notification-params-array", {**_note("notifications/x"), "params": [1]}, _all(INVALID, 400, INVALID)
    ),
    Case("no-method-no-result", {"jsonrpc": "2.0", "id": "c"}, _all(INVALID, 400, INVALID)),
    Case(
        "result-and-error",
        {"jsonrpc": "2.0", "id": "c", "result": {}, "error": {"code": 1, "message": "m"}},
        _all(INVALID, 400, INVALID),
    ),
    Case("error-not-an-object", {"jsonrpc": "2.0", "id": "c", "error": "bad"}, _all(INVALID, 400, INVALID)),
    # -- valid envelope, odd content ---------------------------------------------------------------
    Case(
        "extra-fields",
        {**_call("tools/list"), "extra": {"x": 1}, "params": {}},
        {
            STDIO: Expect(None, RESULT),
            STATELESS: Expect(200, RESULT),
            SESSION: Expect(200, RESULT),
            BATCH: Expect(200, RESULT),
            SSE: Expect(202, RESULT),
        },
    ),
    Case(
        "unknown-method",
        _call("no/such/method", params={}),
        {
            STDIO: Expect(None, NOT_FOUND),
            STATELESS: Expect(404, NOT_FOUND),
            SESSION: Expect(200, NOT_FOUND),
            BATCH: Expect(200, NOT_FOUND),
            SSE: Expect(202, NOT_FOUND),
        },
    ),
    Case(
        "empty-method",
        _call("", params={}),
        {
            STDIO: Expect(None, NOT_FOUND),
            STATELESS: Expect(404, NOT_FOUND),
            SESSION: Expect(200, NOT_FOUND),
            BATCH: Expect(200, NOT_FOUND),
            SSE: Expect(202, NOT_FOUND),
        },
    ),
    Case(
        "unknown-tool",
        _call("tools/call", params={"name": "no_such_tool", "arguments": {}}),
        {
            STDIO: Expect(None, PARAMS),
            STATELESS: Expect(400, PARAMS),
            SESSION: Expect(200, PARAMS),
            BATCH: Expect(200, PARAMS),
            SSE: Expect(202, PARAMS),
        },
        headers={"Mcp-Name": "no_such_tool"},
    ),
    Case(
        "unknown-notification",
        _note("notifications/no_such_thing"),
        {**_ACCEPTED, STATELESS: Expect(202, NOTHING)},
    ),
    Case(
        "cancel-nothing",
        _note("notifications/cancelled", {"requestId": "never-sent"}),
        {**_ACCEPTED, STATELESS: Expect(202, NOTHING)},
    ),
    Case(
        "cancel-with-bool-id",
        _note("notifications/cancelled", {"requestId": True}),
        {**_ACCEPTED, STATELESS: Expect(202, NOTHING)},
    ),
    # "The client MUST NOT send JSON-RPC responses" on a 2026-07-28 POST: refused, not accepted.
    Case(
        "response-to-nothing",
        {"jsonrpc": "2.0", "id": "never-asked", "result": {}},
        {**_ACCEPTED, STATELESS: Expect(400, INVALID)},
    ),
    Case(
        "error-response-to-nothing",
        {"jsonrpc": "2.0", "id": "never-asked", "error": {"code": -1, "message": "m"}},
        {**_ACCEPTED, STATELESS: Expect(400, INVALID)},
    ),
    Case(
        "error-response-null-id",
        {"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "m"}},
        {**_ACCEPTED, STATELESS: Expect(400, INVALID)},
    ),
    # -- size --------------------------------------------------------------------------------------
    Case(
        "body-over-4MiB",
        HUGE_BODY,
        {
            STATELESS: Expect(413, INVALID),
            SESSION: Expect(413, INVALID),
            BATCH: Expect(413, INVALID),
            SSE: Expect(413, NOTHING),
        },
    ),
    Case("line-over-16MiB", HUGE_LINE, {STDIO: Expect(None, INVALID)}),
    # -- batches -----------------------------------------------------------------------------------
    Case("empty-batch", [], _all(INVALID, 400, INVALID)),
    Case(
        "batch-of-junk",
        [1, "x", None],
        {**_all(INVALID, 400, INVALID), BATCH: Expect(400, (INVALID, INVALID, INVALID))},
    ),
    Case(
        "batch-of-pings",
        [_call("ping", "b1"), _call("ping", "b2")],
        {**_all(INVALID, 400, INVALID), BATCH: Expect(200, (RESULT, RESULT))},
    ),
    Case(
        "batch-good-and-bad",
        [_call("ping", "b1"), {"jsonrpc": "2.0", "id": "b2", "method": 7}],
        {**_all(INVALID, 400, INVALID), BATCH: Expect(200, (RESULT, INVALID))},
    ),
    Case(
        "batch-with-initialize",
        [
            _call(
                "initialize",
                "b1",
                {
                    "protocolVersion": "2025-03-26",
                    "capabilities": {},
                    "clientInfo": {"name": "x", "version": "1"},
                },
            )
        ],
        {**_all(INVALID, 400, INVALID), BATCH: Expect(200, (INVALID,))},
    ),
    Case(
        "batch-of-notifications",
        [_note("notifications/x"), _note("notifications/y")],
        {**_all(INVALID, 400, INVALID), BATCH: Expect(202, NOTHING)},
    ),
    Case(
        "batch-nested",
        [[_call("ping", "b1")]],
        {**_all(INVALID, 400, INVALID), BATCH: Expect(400, (INVALID,))},
    ),
    # -- lifecycle and eras ------------------------------------------------------------------------
    Case(
        "initialize-again",
        _call(
            "initialize",
            params={
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        ),
        {
            STDIO: Expect(None, INVALID),
            SESSION: Expect(200, INVALID),
            BATCH: Expect(200, INVALID),
            SSE: Expect(202, INVALID),
        },
        meta=False,
    ),
    Case(
        "initialize-without-capabilities",
        _call("initialize", params={"protocolVersion": "2025-11-25"}),
        {STATELESS: Expect(200, PARAMS)},
        meta=False,
    ),
    # A 2026-07-28 request names its revision; initialize does not exist there.
    Case(
        "initialize-with-meta",
        _call("initialize", params={"protocolVersion": "2025-11-25", "capabilities": {}}),
        {STATELESS: Expect(404, NOT_FOUND)},
    ),
    Case(
        "discover-without-meta",
        _call("server/discover", params={}),
        {
            STDIO: Expect(None, PARAMS),
            STATELESS: Expect(400, PARAMS),
            SESSION: Expect(200, PARAMS),
            BATCH: Expect(200, PARAMS),
            SSE: Expect(202, PARAMS),
        },
        meta=False,
    ),
    Case(
        "request-before-initialize",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, INVALID)},
        meta=False,
    ),
    Case(
        "unsupported-revision",
        _call(
            "tools/list",
            params={"_meta": {**META_2026, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}},
        ),
        {STATELESS: Expect(400, UNSUPPORTED_VERSION), STDIO: Expect(None, UNSUPPORTED_VERSION)},
        meta=False,
        headers={"MCP-Protocol-Version": "1999-01-01"},
    ),
    Case(
        "revision-not-a-string",
        _call(
            "tools/list", params={"_meta": {**META_2026, "io.modelcontextprotocol/protocolVersion": 20260728}}
        ),
        {STATELESS: Expect(400, UNSUPPORTED_VERSION), STDIO: Expect(None, UNSUPPORTED_VERSION)},
        meta=False,
    ),
    Case(
        "meta-without-capabilities",
        _call("tools/list", params={"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        {STATELESS: Expect(400, PARAMS), STDIO: Expect(None, PARAMS)},
        meta=False,
    ),
    # A dual-era server "MAY serve both eras concurrently on the same endpoint or process": on the
    # stdio connection opened with initialize, a request with modern _meta is served statelessly.
    Case(
        "modern-request-on-stdio",
        _call("tools/list", params={"_meta": META_2026}),
        {STDIO: Expect(None, RESULT)},
    ),
    Case(
        "modern-initialize-in-handshake-connection",
        _call("initialize", params={"_meta": META_2026, "protocolVersion": "2025-11-25", "capabilities": {}}),
        {STDIO: Expect(None, NOT_FOUND), SSE: Expect(202, NOT_FOUND)},
    ),
    Case(
        "modern-ping-on-stdio", _call("ping", params={"_meta": META_2026}), {STDIO: Expect(None, NOT_FOUND)}
    ),
    Case(
        "meta-not-an-object",
        _call("tools/list", params={"_meta": [1]}),
        {STATELESS: Expect(400, INVALID)},
        meta=False,
    ),
    # -- 2026-07-28 header tricks ------------------------------------------------------------------
    Case(
        "mcp-method-mismatch",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Method": "prompts/list"},
    ),
    Case(
        "mcp-method-missing",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Method": None},
    ),
    Case(
        "mcp-method-case",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Method": "TOOLS/LIST"},
    ),
    Case(
        "mcp-method-duplicate",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Method": ["ping", "tools/list"]},
    ),
    Case(
        "mcp-method-non-ascii",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Method": "tools/list\u00e9".encode()},
    ),
    Case(
        "header-names-lowercase",
        _call("tools/list", params={}),
        {STATELESS: Expect(200, RESULT)},
        headers={"mcp-method": "tools/list", "mcp-protocol-version": "2026-07-28"},
    ),
    Case(
        "mcp-name-base64-valid",
        _call("tools/call", params={"name": "greet", "arguments": {"name": "a"}}),
        {STATELESS: Expect(200, RESULT)},
        headers={"Mcp-Name": "=?base64?Z3JlZXQ=?="},
    ),
    Case(
        "mcp-name-missing",
        _call("tools/call", params={"name": "greet", "arguments": {"name": "a"}}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
    ),
    Case(
        "mcp-name-mismatch",
        _call("tools/call", params={"name": "greet", "arguments": {"name": "a"}}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Name": "slow_compute"},
    ),
    Case(
        "mcp-name-base64-garbage",
        _call("tools/call", params={"name": "greet", "arguments": {"name": "a"}}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Name": "=?base64?@@not base64@@?="},
    ),
    Case(
        "mcp-name-base64-not-utf8",
        _call("tools/call", params={"name": "greet", "arguments": {"name": "a"}}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Name": "=?base64?//79?="},
    ),
    Case(
        "mcp-name-raw-non-ascii",
        _call("tools/call", params={"name": "gr\u00e9et", "arguments": {}}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Name": "gr\u00e9et".encode()},
    ),
    Case(
        "mcp-name-duplicate",
        _call("tools/call", params={"name": "greet", "arguments": {"name": "a"}}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"Mcp-Name": ["slow_compute", "greet"]},
    ),
    Case(
        "protocol-version-header-mismatch",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"MCP-Protocol-Version": "2025-11-25"},
    ),
    Case(
        "protocol-version-header-missing",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"MCP-Protocol-Version": None},
    ),
    Case(
        "protocol-version-header-duplicate",
        _call("tools/list", params={}),
        {STATELESS: Expect(400, HEADER_MISMATCH)},
        headers={"MCP-Protocol-Version": ["2025-11-25", "2026-07-28"]},
    ),
    # -- handshake-session header tricks -----------------------------------------------------------
    Case(
        "session-protocol-version-mismatch",
        _call("tools/list", params={}),
        {SESSION: Expect(400, INVALID), BATCH: Expect(400, INVALID)},
        headers={"MCP-Protocol-Version": "2024-11-05"},
    ),
    Case(
        "session-id-unknown",
        _call("tools/list", params={}),
        {SESSION: Expect(404, INVALID), BATCH: Expect(404, INVALID)},
        headers={"Mcp-Session-Id": "no-such-session"},
    ),
    Case(
        "session-id-non-ascii",
        _call("tools/list", params={}),
        {SESSION: Expect(404, INVALID), BATCH: Expect(404, INVALID)},
        headers={"Mcp-Session-Id": "s\u00e9ss".encode()},
    ),
    # "{session}" stands for the session's own id. Two ids: which session is meant is ambiguous.
    Case(
        "session-id-duplicate",
        _call("tools/list", params={}),
        {SESSION: Expect(400, INVALID), BATCH: Expect(400, INVALID)},
        headers={"Mcp-Session-Id": ["no-such-session", "{session}"]},
    ),
    # "A request carrying modern per-request `_meta` is served statelessly according to this revision"
    # (2026-07-28 basic/versioning), whatever Mcp-Session-Id it carries: its standard headers are
    # checked against the body like any other 2026-07-28 request (the session's version header is not
    # the body's: -32020).
    Case(
        "meta-2026-inside-a-session",
        _call("tools/list", params={"_meta": META_2026}),
        {SESSION: Expect(400, HEADER_MISMATCH), BATCH: Expect(400, HEADER_MISMATCH)},
        meta=False,
    ),
    Case(
        "meta-2026-with-session-id-and-its-headers",
        _call("tools/list", params={"_meta": META_2026}),
        {SESSION: Expect(200, RESULT), BATCH: Expect(200, RESULT)},
        meta=False,
        headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
    ),
    # -- ids in flight -----------------------------------------------------------------------------
    # The refusal is addressed to the id it refuses: JSON-RPC answers with the request's id unless it
    # could not be read (here it was), and the client that reused it can match the error.
    Case(
        "duplicate-in-flight-id",
        _call("ping", "slow-1", {}),
        {
            STDIO: Expect(None, INVALID, ("slow-1",)),
            SESSION: Expect(400, INVALID, ("slow-1",)),
            BATCH: Expect(400, INVALID, ("slow-1",)),
            SSE: Expect(202, INVALID, ("slow-1",)),
        },
        prelude=SLOW,
    ),
    # In a batch the reused id is one member's answer; the others are served.
    Case(
        "batch-duplicate-in-flight-id",
        [_call("ping", "b1"), _call("ping", "slow-1"), _note("notifications/x")],
        {
            **_handshake(_all(INVALID, 400, INVALID)),
            BATCH: Expect(200, (RESULT, INVALID), ("b1", "slow-1")),
        },
        prelude=SLOW,
    ),
    Case(
        "batch-only-duplicate-in-flight-id",
        [_call("ping", "slow-1"), _note("notifications/x")],
        {**_handshake(_all(INVALID, 400, INVALID)), BATCH: Expect(200, (INVALID,), ("slow-1",))},
        prelude=SLOW,
    ),
    # A batch larger than the requests a session may have in flight (256): the members that fit are
    # served, each one past the cap answered -32000 with its own id (JSON-RPC owes an answer per
    # request; 2025-03-26 owes a POST with requests in it JSON or an event stream, not a 4xx).
    Case(
        "batch-over-the-in-flight-cap",
        [_call("ping", i) for i in range(BIG_BATCH)],
        {
            **_all(INVALID, 400, INVALID),
            BATCH: Expect(
                200, (RESULT,) * IN_FLIGHT + (BUSY,) * (BIG_BATCH - IN_FLIGHT), tuple(range(BIG_BATCH))
            ),
        },
    ),
    Case(
        "cross-session-id",
        _call("ping", "slow-1", {}),
        {SESSION: Expect(200, RESULT), BATCH: Expect(200, RESULT), SSE: Expect(202, RESULT)},
        prelude=SLOW,
        prelude_in="other",
    ),
    # notifications/cancelled names a request of the sender's own: one in flight in another session
    # must go on (the harness checks that the slow call still completes with its result).
    Case(
        "cross-session-cancel",
        _note("notifications/cancelled", {"requestId": "slow-1", "reason": "not yours"}),
        {SESSION: Expect(202, NOTHING), BATCH: Expect(202, NOTHING), SSE: Expect(202, NOTHING)},
        prelude=SLOW,
        prelude_in="other",
    ),
]


def cases_for(transport: str, *, known_bugs: bool = False) -> list[Case]:
    """The cases that apply to *transport* (those with a known bug, or the others)."""
    return [c for c in CASES if transport in c.expect and (c.known_bug is not None) == known_bugs]
