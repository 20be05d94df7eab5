"""From the session's thread to the screen: events in, batched Textual work out.

The session emits events on its own thread. `CoalescingBridge` only appends them to a deque;
the app drains it every `FLUSH_SECONDS` on its event loop, joining consecutive text and
thinking deltas of a turn into one, so the loop does one piece of work per tick however fast
the model streams — keystrokes are never starved. `ImmediateBridge` posts one message per
event as it comes; it exists to measure the difference (tests/benchmarks/screen.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from textual.app import App
from textual.message import Message

from tui.core import events as ev

FLUSH_SECONDS = 0.05


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
        self._flush: Callable[[], None] | None = None  # set by `start`
        self.delivered = 0  # batches handed to the screen (for tests and the benchmark)

    def emit(self, event: ev.Event) -> None:
        self._pending.append(event)  # deque appends are atomic: no lock on the hot path

    @property
    def pending(self) -> int:
        return len(self._pending)

    def start(self, app: App[Any], deliver: Callable[[list[ev.Event]], None]) -> None:
        def flush() -> None:
            batch = self.drain()
            if batch:
                self.delivered += 1
                deliver(coalesce(batch))

        app.set_interval(FLUSH_SECONDS, flush, name="event-bridge")
        self._flush = flush

    def drain(self) -> list[ev.Event]:
        batch: list[ev.Event] = []
        pending = self._pending
        while pending:
            batch.append(pending.popleft())
        return batch

    def flush_now(self) -> None:
        """Deliver what is pending at once (the session ended; tests)."""
        if self._flush is not None:
            self._flush()


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
