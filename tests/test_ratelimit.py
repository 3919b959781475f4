"""The token-bucket arithmetic (``mcpkit._ratelimit``), on an injected clock."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit._ratelimit import KeyedBuckets, Rate


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("spec", "capacity", "per_second"),
    [
        ("10/s", 10, 10.0),
        ("60/m", 60, 1.0),
        ("5/10s", 5, 0.5),
        ("3600/h", 3600, 1.0),
        (" 2 / 1.5 s ", 2, 2 / 1.5),
    ],
)
def test_specs(spec: str, capacity: float, per_second: float) -> None:
    rate = Rate(spec)
    assert (rate.capacity, rate.per_second) == (capacity, pytest.approx(per_second))


@pytest.mark.parametrize("spec", ["", "10", "10/d", "0/s", "x/s", "10/0s", "-1/s"])
def test_bad_specs_are_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="invalid rate limit"):
        Rate(spec)


def test_a_burst_then_the_refill_and_the_wait_it_announces() -> None:
    clock = Clock()
    buckets = KeyedBuckets("2/10s", clock=clock)
    assert buckets.take("a") == 0 and buckets.take("a") == 0
    wait = buckets.take("a")
    assert wait == pytest.approx(5.0)  # one token every 5 s
    assert buckets.take("b") == 0  # another key has its own bucket
    clock.now += wait
    assert buckets.take("a") == 0
    assert buckets.take("a") > 0


@given(st.lists(st.integers(min_value=0, max_value=500), max_size=400))
def test_the_table_never_holds_more_than_max_keys(keys: list[int]) -> None:
    buckets = KeyedBuckets("1/s", max_keys=50, clock=Clock())
    for key in keys:
        buckets.take(str(key))
        assert len(buckets) <= 50


@given(st.lists(st.floats(min_value=0, max_value=3), max_size=60))
def test_never_more_than_capacity_plus_refill(gaps: list[float]) -> None:
    """Over any run of requests, the allowed ones never exceed the burst plus what the time refilled."""
    clock = Clock()
    buckets = KeyedBuckets("3/s", clock=clock)
    allowed, start = 0, clock.now
    for gap in gaps:
        clock.now += gap
        allowed += buckets.take("k") == 0
    assert allowed <= 3 + (clock.now - start) * 3 + 1e-9
