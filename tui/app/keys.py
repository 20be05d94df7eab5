"""Keys pressed twice: Esc Esc cancels the running turn, Ctrl+C twice quits. A press is the
second of a pair when the first came within the pair's window, timed on `clock` — a test gives
it a clock of its own, so that a slow machine never stretches a window it checks."""

from __future__ import annotations

import time
from collections.abc import Callable

ESC_WINDOW = 1.5
CTRL_C_WINDOW = 2.0  # a second Ctrl+C within it quits


def second_press(last: float | None, now: float, window: float) -> bool:
    """Whether a press at `now` is the second of a pair: the first was within `window`."""
    return last is not None and 0.0 <= now - last <= window


class KeyPairs:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._last: dict[str, float] = {}

    def second(self, key: str, window: float) -> bool:
        """`key` was pressed: True when it completes a pair (the next press starts a new
        one), else it is remembered as the first."""
        now = self.clock()
        if second_press(self._last.get(key), now, window):
            return True
        self._last[key] = now
        return False
