"""A backlog reaches the screen batch after batch, each as large as the loop's budget allows,
without waiting for the bridge's next tick between two batches (an attach's replay of ten
thousand events was on screen only after some fifty ticks); the loop's other work still runs
between two batches."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App

from tests.waits import wait_until
from tui.app import bridge as bridges
from tui.app.bridge import MIN_FLUSH_EVENTS, CoalescingBridge
from tui.core.events import vocabulary as ev


def started(n: int) -> ev.Event:
    return ev.TaskStarted(task_id=f"t{n}", context_id="c", text="x")


async def test_a_backlog_is_delivered_batch_after_batch_without_waiting_for_ticks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bridges, "FLUSH_SECONDS", 3600.0)  # no tick comes during the test
    bridge = CoalescingBridge()
    bridge.event_cost = 1.0  # dear events: a flush takes MIN_FLUSH_EVENTS, no more
    batches: list[int] = []
    ticks: list[int] = []
    app: App[Any] = App()
    async with app.run_test() as pilot:
        bridge.start(app, lambda batch: batches.append(len(batch)))
        app.set_interval(0.001, lambda: ticks.append(len(batches)))  # other work of the loop
        for n in range(5 * MIN_FLUSH_EVENTS):
            bridge.emit(started(n))
        bridge._flush(None)  # type: ignore[misc]  # the tick that found the backlog
        await wait_until(pilot, lambda: sum(batches) == 5 * MIN_FLUSH_EVENTS,
                         what=lambda: batches)
        assert batches == [MIN_FLUSH_EVENTS] * 5  # each within the budget
        assert bridge.pending == 0
        assert len(set(ticks)) >= 3  # the loop ran its own timer between the batches
