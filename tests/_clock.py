"""An event loop whose time the test controls: timer logic tested without timing the machine.

:class:`VirtualTimeLoop` is asyncio's own selector loop with a clock of its own. Whenever the loop
has nothing ready to run and would wait for its next timer, the clock jumps to that timer instead:
``await asyncio.sleep(0.15)`` takes no real time, and every ``call_at``/``call_later`` fires at
exactly its time, in order, however slow or busy the machine is. Code under test reads the time
from the loop (``loop.time()``), as mcpkit's timers do, so it sees the same clock.

For coroutines that wait on timers and on each other only: a loop that waits for a socket or a
subprocess would see its timeouts fire at once.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["VirtualTimeLoop", "run_in_virtual_time"]

T = TypeVar("T")


class _Clock:
    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0.0


class _JumpingSelector(selectors.DefaultSelector):
    """Asked to wait *timeout* s for I/O, moves the clock on by *timeout* and only polls."""

    def __init__(self, clock: _Clock) -> None:
        super().__init__()
        self._clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:  # no timer left and nothing ready: nothing will ever happen
            ready: list[tuple[selectors.SelectorKey, int]] = super().select(5.0)
            if not ready:
                raise RuntimeError("the loop waits for nothing: no timer is armed and nothing is ready")
            return ready
        if timeout > 0:
            self._clock.now += timeout
        polled: list[tuple[selectors.SelectorKey, int]] = super().select(0)
        return polled


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose ``time()`` starts at 0 and moves only to the next timer due."""

    def __init__(self) -> None:
        self._clock = _Clock()
        super().__init__(_JumpingSelector(self._clock))

    def time(self) -> float:
        return self._clock.now


def run_in_virtual_time(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a :class:`VirtualTimeLoop`."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)
