"""Garbage collection for a long-running screen.

At start the app collects once and freezes what it has built (`gc.freeze`): the screen, the
themes, the imported modules never die, and the oldest generation's collections — which walk
every object they hold — no longer walk them. The young generations keep Python's thresholds:
the screen makes garbage cycles at every frame (Textual's strips refer to themselves through
their caches), and frequent small collections keep memory flat.

A full (generation-2) collection pauses the screen for 20–50 ms on a long session. Left to
Python, it starts whenever allocations cross its threshold — often in the middle of applying a
batch or drawing a frame, where its pause adds to theirs. Here it never starts by itself:
while events stream the app collects in full at most once every `FULL_SECONDS`, right after a
frame has been drawn (the batch applied and on screen, the next one not yet due) and what the
frame held up (keys, timers) has run, so its pause never adds to another; and once more
after `QUIET_SECONDS` without events, so an idle screen gives memory back. Measured on a
2,000-events/s stream (docs/benchmarks.md), raising the thresholds instead made pauses rarer
but longer (100–160 ms) and let memory grow.

A full collection walks every object not frozen, and what a long session or a large fleet
builds after the start (rows, transcripts, 200 watched sessions) is never frozen by the first
`gc.freeze`: its collections grew to 90–150 ms. So a collection that takes longer than
`FREEZE_ABOVE_SECONDS` freezes what survived it, and the next ones walk only what is younger.
A cycle that dies after it was frozen is not reclaimed until a *thaw* (`gc.unfreeze`, a full
collection, `gc.freeze`), whose pause is that of a collection before any freeze (100–200 ms
in a fleet of 200): one after `THAW_QUIET_SECONDS` without events, and — so a screen never
quiet does not keep such garbage for ever — one every `THAW_BUSY_SECONDS` while busy
(`trapped` counts what the last one found). `settle` freezes at once, after a young
collection only, what the owner has just built to last (the fleet's watched sessions), so
the first full collection after it does not walk it all.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable

# generation 2 never starts on its own (its threshold is out of reach): see `activity`
THRESHOLDS = (700, 10, 1_000_000)
FULL_SECONDS = 1.0  # while busy: a full collection at most this often, just after a frame
AFTER_FRAME_SECONDS = 0.01  # ... and after keys and timers held up by the frame have run
QUIET_SECONDS = 1.0
FREEZE_ABOVE_SECONDS = 0.01  # a full collection this long (loop CPU) freezes its survivors
THAW_QUIET_SECONDS = 30.0  # quiet this long after a freeze: frozen garbage is reclaimed
THAW_BUSY_SECONDS = 1800.0  # while busy, at most this often


class GcPolicy:
    """`after_frame(callback)` runs the callback once the screen's next frame is drawn (the
    app's `call_after_refresh`)."""

    def __init__(self, after_frame: Callable[[Callable[[], None]], bool]) -> None:
        self._after_refresh = after_frame
        self.last_activity = time.monotonic()
        self.last_full = time.monotonic()
        self.collected_while_quiet = False
        self.full_collections = 0
        self._after_frame = False  # a collection waits for the next frame
        self.frozen_since_thaw = 0  # freezes since the last thaw (or the start)
        self.last_thaw = time.monotonic()
        self.trapped = 0  # cycles the last thaw found among frozen objects
        self.longest = 0.0  # the longest full collection, in seconds
        self._saved = gc.get_threshold()
        self._started = False

    def start(self) -> None:
        gc.collect()
        gc.freeze()
        gc.set_threshold(*THRESHOLDS)
        self._started = True

    def activity(self) -> None:
        """A batch of events is being applied (on the app's loop)."""
        now = time.monotonic()
        self.last_activity = now
        self.collected_while_quiet = False
        if not self._started or self._after_frame or now - self.last_full < FULL_SECONDS:
            return
        self._after_frame = self._after_refresh(self._collect_after_frame)

    def _collect_after_frame(self) -> None:
        asyncio.get_running_loop().call_later(AFTER_FRAME_SECONDS, self._collect_now)

    def _collect_now(self) -> None:
        self._after_frame = False
        if self._started:
            self._collect()

    def tick(self) -> None:
        """Called about once a second: one full collection per quiet spell, and a thaw once
        quiet long enough (or, while busy, when one is due)."""
        now = time.monotonic()
        quiet = now - self.last_activity
        if self.frozen_since_thaw and (quiet >= THAW_QUIET_SECONDS or (
                now - self.last_thaw >= THAW_BUSY_SECONDS and self._after_frame is False)):
            self.thaw()
            return
        if self.collected_while_quiet or quiet < QUIET_SECONDS:
            return
        self._collect()
        self.collected_while_quiet = True

    def _collect(self) -> None:
        started = time.thread_time()  # its cost, whatever else the machine runs
        gc.collect()
        took = time.thread_time() - started
        self.longest = max(self.longest, took)
        self.last_full = time.monotonic()
        self.full_collections += 1
        if took > FREEZE_ABOVE_SECONDS and self._started:
            gc.freeze()  # the next collections walk only what is younger
            self.frozen_since_thaw += 1

    def settle(self) -> None:
        """What was just built lives long (a fleet's watched sessions): the young collected,
        and everything frozen without walking the old (its garbage waits for a thaw)."""
        if not self._started:
            return
        gc.collect(1)
        gc.freeze()
        self.frozen_since_thaw += 1

    def thaw(self) -> None:
        """Every object back in the collector's reach, the cycles among them reclaimed, and
        frozen again: a pause as long as a collection before any freeze."""
        gc.unfreeze()
        self.trapped = gc.collect()
        if self._started:
            gc.freeze()
        self.frozen_since_thaw = 0
        self.last_thaw = self.last_full = time.monotonic()
        self.collected_while_quiet = True

    def stop(self) -> None:
        gc.set_threshold(*self._saved)
        gc.unfreeze()
        self._started = False
