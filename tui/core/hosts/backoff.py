"""How long a host that cannot be reached waits before it is tried again: 2 s, doubling to
60 s, each wait lengthened by up to a tenth at random so that many fleets (or many hosts behind
one unreachable network) do not all try again at the same moment."""

from __future__ import annotations

import random
from collections.abc import Callable

FIRST = 2.0
LONGEST = 60.0
JITTER = 0.1  # at most this share of the wait is added


def retry_after(failures: int, draw: Callable[[], float] = random.random) -> float:
    """Seconds to wait after `failures` tries in a row failed (1 for the first): 2, 4, 8, 16,
    32, 60, 60, … plus up to a tenth of that (`draw` gives 0 ≤ x < 1)."""
    base = min(LONGEST, FIRST * 2.0 ** (max(1, failures) - 1)) if failures < 64 else LONGEST
    return base * (1.0 + JITTER * draw())
