"""Helpers for driving the real app with Pilot."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from tui.app.app import SupervisorApp
from tui.core import events as ev

STREAMS = Path(__file__).resolve().parent / "streams"


def recorded(name: str = "session.jsonl") -> list[ev.Event]:
    """A recorded event stream (a real headless session's --json output)."""
    lines = (STREAMS / name).read_text(encoding="utf-8").splitlines()
    return [ev.event_from_dict(json.loads(line)) for line in lines if line.strip()]


async def replay(pilot: Pilot[int], events: list[ev.Event]) -> None:
    """Feed events through the app's own bridge and let the screen take them in."""
    app = pilot.app
    assert isinstance(app, SupervisorApp)
    for event in events:
        app.bridge.emit(event)
    await settle(pilot)


async def settle(pilot: Pilot[int], seconds: float = 0.2) -> None:
    """Wait until the bridge has delivered everything and the screen has taken it in."""
    app = pilot.app
    assert isinstance(app, SupervisorApp)
    await pilot.pause(seconds)
    await wait_for(pilot, lambda: app.idle)
    await pilot.pause(0.05)


async def wait_for(pilot: Pilot[int], condition: Callable[[], bool],
                   within: float = 20.0) -> None:
    steps = int(within / 0.05)
    for _ in range(steps):
        if condition():
            return
        await pilot.pause(0.05)
    try:
        what = inspect.getsource(condition).strip()
    except (OSError, TypeError):
        what = repr(condition)
    raise AssertionError(f"condition not met within {within} s: {what}")
