"""Sealing requestState: anything but the genuine, fresh token of the same request is refused."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import InvalidParams
from mcpkit._mrtr import StateSealer, merge_answers

PARAMS = {"name": "plan", "arguments": {"to": "Oslo"}}


def test_a_sealed_state_opens_with_its_answers() -> None:
    sealer = StateSealer(b"k" * 32)
    token = sealer.seal("tools/call", PARAMS, {"elicitation_1": {"action": "accept"}}, ["sampling_2"])
    assert sealer.open(token, "tools/call", {**PARAMS, "_meta": {"x": 1}}) == (
        {"elicitation_1": {"action": "accept"}},
        ["sampling_2"],
    )


@given(
    st.integers(min_value=0),
    st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
)
def test_any_changed_character_is_refused(position: int, replacement: str) -> None:
    sealer = StateSealer(b"k" * 32)
    token = sealer.seal("tools/call", PARAMS, {}, ["elicitation_1"])
    index = position % len(token)
    if token[index] in (replacement, "."):
        return
    tampered = token[:index] + replacement + token[index + 1 :]
    with pytest.raises(InvalidParams):
        sealer.open(tampered, "tools/call", PARAMS)


def test_other_keys_requests_and_expired_tokens_are_refused() -> None:
    sealer = StateSealer(b"k" * 32, ttl=60)
    token = sealer.seal("tools/call", PARAMS, {}, [])
    with pytest.raises(InvalidParams, match="not issued by this server"):
        StateSealer(b"j" * 32).open(token, "tools/call", PARAMS)
    with pytest.raises(InvalidParams, match="different request"):
        sealer.open(token, "tools/call", {**PARAMS, "arguments": {"to": "Paris"}})
    with pytest.raises(InvalidParams, match="different request"):
        sealer.open(token, "prompts/get", PARAMS)
    stale = StateSealer(b"k" * 32, ttl=-1).seal("tools/call", PARAMS, {}, [])
    with pytest.raises(InvalidParams, match="expired"):
        sealer.open(stale, "tools/call", PARAMS)
    for junk in (None, 5, "", "no-dot", "a.b.c"):
        with pytest.raises(InvalidParams):
            sealer.open(junk, "tools/call", PARAMS)
    assert time.time() > 0


def test_only_pending_questions_take_answers() -> None:
    sealer = StateSealer()
    token = sealer.seal("tools/call", PARAMS, {"elicitation_1": "old"}, ["sampling_2"])
    retry = {
        **PARAMS,
        "requestState": token,
        "inputResponses": {"sampling_2": "new", "elicitation_3": "sneaky"},
    }
    assert merge_answers(sealer, "tools/call", retry) == {"elicitation_1": "old", "sampling_2": "new"}
    assert merge_answers(sealer, "tools/call", {**PARAMS, "inputResponses": {"x": 1}}) == {}
