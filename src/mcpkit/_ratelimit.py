"""Token buckets: the one rate-limit arithmetic behind per-tool limits and per-client HTTP limits.

A spec is ``N/UNIT`` or ``N/COUNT UNIT`` with UNIT one of ``s``, ``m``, ``h`` (``"10/s"``: bursts of
10 and 10 a second; ``"5/10s"``: 5 per 10 seconds). A bucket is two floats, ``[tokens, last]``, kept
by whoever owns the key (a connection, a client address), so this module holds no I/O and no state
of its own beyond the table a :class:`KeyedBuckets` bounds.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Final

__all__ = ["KeyedBuckets", "Rate"]

_RATE: Final = re.compile(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*(s|sec|second|m|min|minute|h|hour)\s*")
_UNIT_SECONDS: Final = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0}


class Rate:
    """A parsed rate: *capacity* tokens, refilled at *per_second*.

    Raises:
        ValueError: for a spec that is not ``N/s``, ``N/m``, ``N/h`` or ``N/10s``-like, or not positive.
    """

    __slots__ = ("capacity", "per_second", "spec")

    def __init__(self, spec: str) -> None:
        found = _RATE.fullmatch(spec)
        if found is None:
            raise ValueError(f"invalid rate limit {spec!r}: expected 'N/s', 'N/m', 'N/h' or 'N/10s'")
        count, span, unit = found.groups()
        seconds = float(span or 1) * _UNIT_SECONDS.get(unit, 3600.0)
        if int(count) < 1 or seconds <= 0:
            raise ValueError(f"invalid rate limit {spec!r}: the count and the period must be positive")
        self.spec = spec.strip()
        self.capacity = float(count)
        self.per_second = self.capacity / seconds

    def new_bucket(self, now: float) -> list[float]:
        return [self.capacity, now]

    def take(self, bucket: list[float], now: float) -> float:
        """Spend one token of *bucket*: 0.0 if there was one, else the seconds until there is."""
        tokens = min(self.capacity, bucket[0] + (now - bucket[1]) * self.per_second)
        bucket[1] = now
        if tokens < 1.0:
            bucket[0] = tokens
            return (1.0 - tokens) / self.per_second
        bucket[0] = tokens - 1.0
        return 0.0


class KeyedBuckets:
    """One bucket per string key (a client address), at most *max_keys* of them.

    Past *max_keys* the oldest tenth of the table is forgotten: a forgotten key starts full again,
    so an attacker with that many addresses gains a burst each, and memory stays bounded.
    *clock* is injectable for tests.
    """

    def __init__(
        self, spec: str, *, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = Rate(spec)
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: dict[str, list[float]] = {}

    def take(self, key: str) -> float:
        """Spend one of *key*'s tokens: 0.0 if allowed, else the seconds to wait."""
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_keys:
                for old in list(self._buckets)[: max(1, self.max_keys // 10)]:
                    del self._buckets[old]
            bucket = self._buckets[key] = self.rate.new_bucket(now)
        return self.rate.take(bucket, now)

    def __len__(self) -> int:
        return len(self._buckets)
