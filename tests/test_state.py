"""The lifecycle tables: total where they must be, and the paths the spec describes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcpkit._state import HANDSHAKE, MRTR, Input, Role, State, mermaid, transition

HANDSHAKE_STATES = (State.IDLE, State.INITIALIZING, State.INITIALIZED, State.READY)
HANDSHAKE_INPUTS = (
    Input.INITIALIZE,
    Input.INITIALIZE_OK,
    Input.INITIALIZE_FAILED,
    Input.INITIALIZED,
    Input.REQUEST,
)


@given(st.sampled_from(Role), st.sampled_from(HANDSHAKE_STATES), st.sampled_from(HANDSHAKE_INPUTS))
def test_every_pair_has_an_answer_and_stays_in_the_era(role: Role, state: State, inp: Input) -> None:
    nxt = transition(role, state, inp)
    assert nxt is None or nxt in HANDSHAKE_STATES


def test_the_happy_path() -> None:
    state = State.IDLE
    for inp in (Input.INITIALIZE, Input.INITIALIZE_OK, Input.INITIALIZED, Input.REQUEST):
        nxt = transition(Role.SERVER, state, inp)
        assert nxt is not None
        state = nxt
    assert state is State.READY


@given(st.sampled_from(HANDSHAKE_STATES[1:]))
def test_initialize_happens_once(state: State) -> None:
    assert transition(Role.SERVER, state, Input.INITIALIZE) is None


def test_no_requests_while_initialize_is_unanswered() -> None:
    assert transition(Role.SERVER, State.INITIALIZING, Input.REQUEST) is None


def test_a_failed_initialize_can_be_retried() -> None:
    assert transition(Role.SERVER, State.INITIALIZING, Input.INITIALIZE_FAILED) is State.IDLE


def test_mrtr_loop_ends_only_on_complete_or_error() -> None:
    finals = {nxt for (_, inp), nxt in MRTR.items() if inp in (Input.RESULT_COMPLETE, Input.ERROR)}
    assert finals == {State.DONE}
    assert MRTR[(State.INPUT_REQUIRED, Input.RETRY)] is State.SENT
    assert not [key for key in MRTR if key[0] is State.DONE]


def test_both_roles_share_one_table() -> None:
    client = {(s, i): n for (r, s, i), n in HANDSHAKE.items() if r is Role.CLIENT}
    server = {(s, i): n for (r, s, i), n in HANDSHAKE.items() if r is Role.SERVER}
    assert client == server


def test_diagram_names_every_transition() -> None:
    text = mermaid()
    assert "idle --> initializing: initialize" in text
    assert "input_required --> sent: retry" in text
