"""Garbage collection that does not pause the screen mid-stream.

A full (generation 2) collection walks every object and took 80–130 ms on the development
machine during a long stream — a visible hitch. At start the app freezes the objects that live
for its whole life (`gc.freeze`), raises the thresholds so that the young generations are
collected in small steps and the oldest one practically never on its own, and runs the full
collection itself: when the screen has been quiet for a second, or at most every
`FORCE_SECONDS` while it streams.
"""

from __future__ import annotations

import gc
import time

THRESHOLDS = (10_000, 50, 1_000_000)
QUIET_SECONDS = 1.0
FORCE_SECONDS = 60.0


class GcPolicy:
    def __init__(self) -> None:
        self.last_activity = time.monotonic()
        self.last_full = time.monotonic()
        self.full_collections = 0
        self._saved = gc.get_threshold()

    def start(self) -> None:
        gc.collect()
        gc.freeze()
        gc.set_threshold(*THRESHOLDS)

    def activity(self) -> None:
        self.last_activity = time.monotonic()

    def tick(self) -> None:
        """Called about once a second: collect fully when quiet, or when overdue."""
        now = time.monotonic()
        quiet = now - self.last_activity >= QUIET_SECONDS
        if (quiet and now - self.last_full >= QUIET_SECONDS) or \
                now - self.last_full >= FORCE_SECONDS:
            if quiet and gc.get_count() == (0, 0, 0):
                return
            gc.collect()
            self.last_full = time.monotonic()
            self.full_collections += 1

    def stop(self) -> None:
        gc.set_threshold(*self._saved)
        gc.unfreeze()
