"""The hostile corpus against one real ``mcpkit run`` process over stdio (a 2025-11-25 handshake).

Each case is one line on stdin; its answer is every line the server writes before the answer to the
``ping`` sent right after it. Then a normal call must work, and a second server process opened
beside it (the bystander connection) must have written nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ..conftest import mcpkit_run
from .corpus import NOTHING, RESULT, STDIO, Case, cases_for
from .harness import StdioTarget, answer_ids, encode_body, error_code, probe_id

pytestmark = pytest.mark.e2e

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "hostile", "version": "1"},
}


def _open() -> StdioTarget:
    target = StdioTarget(mcpkit_run("everything.py"))
    [answer] = target.call("initialize", INITIALIZE)
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    target.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    return target


@pytest.fixture(scope="module")
def targets() -> Iterator[tuple[StdioTarget, StdioTarget]]:
    server, bystander = _open(), _open()
    try:
        yield server, bystander
    finally:
        server.close()
        bystander.close()


def send(target: StdioTarget, case: Case) -> list[Any]:
    """Write the case's line; the messages answering it (not the answer to a prelude's slow call)."""
    prelude_id = None
    if case.prelude is not None:
        prelude_id = case.prelude["id"]
        target.write(json.dumps(case.prelude).encode())
    target.write(encode_body(case, STDIO))
    probe = probe_id()
    target.write(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode())
    seen = target.messages_until(probe)
    prelude_answers = [m for m in seen if m.get("id") == prelude_id and "result" in m]
    answers = [m for m in seen[:-1] if m not in prelude_answers]
    if prelude_id is not None:
        # The slow call in flight before the case still completes normally.
        if not prelude_answers:
            prelude_answers = target.messages_until(prelude_id)
        assert error_code(prelude_answers[-1]) == RESULT
    return answers


def check(targets: tuple[StdioTarget, StdioTarget], case: Case) -> None:
    server, bystander = targets
    expect = case.expect[STDIO]
    answers = send(server, case)
    got: Any
    if expect.answer is NOTHING:
        got = NOTHING if not answers else [error_code(m) for m in answers]
    else:
        assert len(answers) == 1, answers
        got = error_code(answers[0])
    assert got == expect.answer, answers
    if expect.ids is not None:
        assert answer_ids(answers) == expect.ids, answers
    # The server keeps serving, and the other connection heard nothing.
    [answer] = server.call("tools/call", {"name": "greet", "arguments": {"name": "Ada"}})
    assert answer["result"]["content"][0]["text"] == "Hello, Ada!"
    assert list(bystander.pending()) == []


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{STDIO}:{c.name}") for c in cases_for(STDIO)])
def test_hostile_case(targets: tuple[StdioTarget, StdioTarget], case: Case) -> None:
    check(targets, case)


def test_both_still_serve(targets: tuple[StdioTarget, StdioTarget]) -> None:
    for target in targets:
        assert [error_code(m) for m in target.call("ping")] == [RESULT]
    assert all(target.proc.poll() is None for target in targets)
