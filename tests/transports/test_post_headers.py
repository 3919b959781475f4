"""The headers of an MCP POST (``transports/http/client/_post_headers.py``): the lines written on the
fast path, whose fixed part is kept per method, name, revision and session, always equal the headers
made afresh, whatever the message, and the kept parts follow the session and the arguments."""

from __future__ import annotations

import doctest
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.transports.http.client import _post_headers
from mcpkit.transports.http.client._post_headers import PostHeaders


def fresh(heads: PostHeaders, data: dict[str, Any], version: str | None, session: str | None) -> bytes:
    return "".join(f"{k}: {v}\r\n" for k, v in heads.headers(data, version, session).items()).encode(
        "latin-1"
    )


def test_the_module_example_runs() -> None:
    failed, attempted = doctest.testmod(_post_headers)
    assert attempted > 0 and failed == 0


def test_kept_lines_follow_the_session_the_revision_and_the_arguments() -> None:
    heads = PostHeaders()
    heads.mirrored["book"] = {"City": ("where", "city")}
    call = {"method": "tools/call", "params": {"name": "book", "arguments": {"where": {"city": "Oslo"}}}}
    first = heads.lines(call, "2026-07-28", None)
    assert b"Mcp-Param-City: Oslo\r\n" in first and b"Mcp-Session-Id" not in first
    call["params"]["arguments"] = {"where": {"city": "Zürich"}}
    second = heads.lines(call, "2026-07-28", None)
    assert b"Oslo" not in second and second == fresh(heads, call, "2026-07-28", None)
    in_session = heads.lines(call, "2025-11-25", "abc")
    assert b"Mcp-Session-Id: abc\r\n" in in_session and b"MCP-Protocol-Version: 2025-11-25\r\n" in in_session
    # The message's own _meta revision wins over the transport's.
    call["params"]["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    assert b"MCP-Protocol-Version: 2026-07-28\r\n" in heads.lines(call, "2025-11-25", None)


def test_initialize_names_the_revision_it_offers() -> None:
    heads = PostHeaders()
    init = {"method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}
    assert b"MCP-Protocol-Version: 2025-06-18\r\n" in heads.lines(init, None, None)


def test_the_kept_parts_are_bounded() -> None:
    heads = PostHeaders()
    for number in range(3000):
        heads.lines({"method": "tools/call", "params": {"name": f"tool{number}"}}, "2026-07-28", None)
    assert len(heads._fixed) <= 1024


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
methods = st.sampled_from(["tools/call", "prompts/get", "resources/read", "ping", "initialize", "tøøls/ç"])
names = st.none() | st.text(max_size=10) | json_values


@given(
    method=methods | json_values,
    name=names,
    city=json_values,
    version=st.none() | st.sampled_from(["2025-11-25", "2026-07-28"]),
    session=st.none() | st.text(alphabet="abcdef0123456789", min_size=1, max_size=8),
    meta=st.none() | st.fixed_dictionaries({"io.modelcontextprotocol/protocolVersion": json_values}),
)
def test_the_fast_path_writes_what_the_headers_say(
    method: Any, name: Any, city: Any, version: str | None, session: str | None, meta: Any
) -> None:
    heads = PostHeaders()
    heads.mirrored["book"] = {"City": ("city",)}
    params: dict[str, Any] = {"name": name, "uri": name, "arguments": {"city": city}}
    if meta is not None:
        params["_meta"] = meta
    data = {"method": method, "params": params}
    for _ in range(2):  # made, then kept
        assert heads.lines(data, version, session) == fresh(heads, data, version, session)
