"""From the session's thread to the screen: events in, batched Textual work out.

The session emits events on its own thread. `CoalescingBridge` only appends them to a deque;
the app drains it every `FLUSH_SECONDS` on its event loop, joining consecutive text and
thinking deltas of a turn into one, so the loop does one piece of work per tick however fast
the model streams — keystrokes are never starved.

A flush is capped by time: the bridge measures how long the loop was held by each batch it
handed over (from handing it over until the loop runs the next callback queued behind it),
keeps an estimate of the cost of one event (raised at once by a dearer batch, lowered
slowly), and takes at most as many events as fit in
`FLUSH_BUDGET_SECONDS`; the rest stay queued, in order. A burst of 100,000 events is drawn
over a few seconds instead of freezing the screen while it is applied at once. While a backlog
waits (an attach's replay, a flood), the next flush comes `CATCH_UP_SECONDS` after the loop let
go of the last batch instead of at the next tick: the loop still runs what else waits (a key,
a frame) between two batches, and is not left idle for most of each tick.

`ImmediateBridge` posts one message per event as it comes; it exists to measure the difference
(tests/benchmarks/screen.py).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from textual.app import App
from textual.message import Message

from tui.core.events import vocabulary as ev

FLUSH_SECONDS = 0.05
CATCH_UP_SECONDS = 0.005  # between two batches of a backlog: the loop's other work runs
FLUSH_BUDGET_SECONDS = 0.02  # the loop time one flush may take
MIN_FLUSH_EVENTS = 200  # however slow events seem, a flush moves this many
FIRST_EVENT_COST = 50e-6  # seconds per event until the bridge has measured


class EventsArrived(Message):
    """A batch of session events, in order."""

    def __init__(self, events: list[ev.Event]) -> None:
        super().__init__()
        self.events = events


def coalesce(events: Iterable[ev.Event]) -> list[ev.Event]:
    """Join runs of TextDelta (and of ThinkingDelta) of the same turn into one event each."""
    out: list[ev.Event] = []
    for event in events:
        last = out[-1] if out else None
        if (isinstance(event, (ev.TextDelta, ev.ThinkingDelta)) and type(last) is type(event)
                and isinstance(last, (ev.TextDelta, ev.ThinkingDelta))
                and last.turn == event.turn and last.task_id == event.task_id):
            out[-1] = type(event)(session_id=event.session_id, seq=event.seq,
                                  ts_ms=event.ts_ms, task_id=event.task_id, turn=event.turn,
                                  text=last.text + event.text)
        else:
            out.append(event)
    return out


class CoalescingBridge:
    """An EventSink: thread-safe `emit`, drained on the app's loop by `flush`."""

    def __init__(self) -> None:
        self._pending: deque[ev.Event] = deque()
        self._flush: Callable[[int | None], None] | None = None  # set by `start`
        self.delivered = 0  # batches handed to the screen (for tests and the benchmark)
        self.event_cost = FIRST_EVENT_COST  # seconds of loop time per event, measured
        self._catching_up: asyncio.TimerHandle | None = None  # the backlog's next flush

    def emit(self, event: ev.Event) -> None:
        self._pending.append(event)  # deque appends are atomic: no lock on the hot path

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def flush_limit(self) -> int:
        """How many events the next flush takes: what fits in the budget at the measured
        cost per event."""
        return max(MIN_FLUSH_EVENTS, int(FLUSH_BUDGET_SECONDS / self.event_cost))

    def start(self, app: App[Any], deliver: Callable[[list[ev.Event]], None]) -> None:
        def flush(limit: int | None = None) -> None:
            batch = self.drain(self.flush_limit if limit is None else limit)
            if not batch:
                return
            self.delivered += 1
            handed = time.perf_counter()
            deliver(coalesce(batch))
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # delivered outside the loop (a test): nothing to measure
                return
            # queued behind the consumer the delivery just woke: runs once it let go
            loop.call_soon(self._measured, len(batch), handed)

        app.set_interval(FLUSH_SECONDS, flush, name="event-bridge")
        self._flush = flush

    def _measured(self, count: int, handed: float) -> None:
        # up at once, down slowly: a batch that also redraws costs more than one that does
        # not, and the budget holds for the dear ones
        cost = (time.perf_counter() - handed) / count
        self.event_cost = max(1e-7, cost if cost > self.event_cost else
                              0.9 * self.event_cost + 0.1 * cost)
        if self._pending and self._catching_up is None and self._flush is not None:
            self._catching_up = asyncio.get_running_loop().call_later(
                CATCH_UP_SECONDS, self._catch_up)

    def _catch_up(self) -> None:
        self._catching_up = None
        if self._flush is not None:
            self._flush(None)

    def drain(self, limit: int | None = None) -> list[ev.Event]:
        """Up to `limit` events (all when None), oldest first; the rest stay queued."""
        batch: list[ev.Event] = []
        pending = self._pending
        left = len(pending) if limit is None else limit
        while pending and left > 0:
            batch.append(pending.popleft())
            left -= 1
        return batch

    def flush_now(self) -> None:
        """Deliver everything pending at once (the session ended; tests)."""
        if self._flush is not None:
            self._flush(len(self._pending))


class ImmediateBridge:
    """An EventSink that posts every event to the app as it comes (no coalescing)."""

    def __init__(self) -> None:
        self._app: App[Any] | None = None
        self.delivered = 0

    def start(self, app: App[Any], deliver: Callable[[list[ev.Event]], None]) -> None:
        self._app = app

    def emit(self, event: ev.Event) -> None:
        if self._app is not None:
            self.delivered += 1
            self._app.post_message(EventsArrived([event]))

    pending = 0  # every event is posted as it comes

    def flush_now(self) -> None:
        return None
