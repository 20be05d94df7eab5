"""Helpers for driving the real app with Pilot (the waits are in tests/waits.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.core.events import vocabulary as ev

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
    await wait_until(pilot, lambda: app.idle)
    await pilot.pause(0.05)


async def leave_prompt(pilot: Pilot[int], key: str = "tab") -> None:
    """Leave the prompt — which has the keys when the screen opens — as a user does (Tab, or
    Esc), and wait until it has: a key sent right behind would still reach the prompt."""
    app = pilot.app
    assert isinstance(app, SupervisorApp)
    await pilot.press(key)
    await wait_until(pilot, lambda: not app.supervisor.prompt.has_focus)


class KeyClock:
    """The clock an app's key windows (Esc Esc, Ctrl+C twice) are timed on, in a test: it
    stands still until the test moves it, so that a loaded machine never puts more than a
    window between two key presses, and a test can step past a window at will."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def key_clock(app: SupervisorApp) -> KeyClock:
    """Give `app` a clock of the test's own for its key windows."""
    clock = KeyClock()
    app.keys.clock = clock
    return clock


def keep_notes(app: App[Any]) -> list[str]:
    """Every note `app` shows from now on, kept: a toast leaves the screen on the real clock,
    which a loaded machine can outrun before the test looks."""
    said: list[str] = []
    show = app.notify

    def notify(message: str, **options: Any) -> None:
        said.append(message)
        show(message, **options)

    app.notify = notify  # type: ignore[method-assign]
    return said


def answerable(app: SupervisorApp) -> bool:
    """The app's question dialog is on screen and past its type-ahead guard: keys typed before
    that go elsewhere or are ignored, by design."""
    dialog = app.desk.dialog
    return dialog is not None and dialog.armed
