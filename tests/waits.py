"""Waiting in a test for what it checks, never for a number of seconds.

Two forms with one meaning: `wait_until` for a test driving the app with Pilot (it lets the
app's loop run between looks), `block_until` for a test watching threads, processes or a
server from plain code. Each looks at `condition` until it holds. `within` only turns a hang
into a failure: it is no promise of speed, and a loaded machine (a 2-core box running many
test workers) may need all of it. On failure the message names the condition: `what` when
given (or what it returns, called at
the failure), else the condition's own source line."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

WITHIN = 60.0
# a name for the condition, or what to say of it, called at the failure
What = str | Callable[[], object] | None
STEP = 0.05  # how often the condition is looked at; short next to any real wait


def _named(condition: Callable[[], object], what: What) -> str:
    if callable(what):  # called at the failure: what the test saw then
        return str(what())
    if what:
        return what
    try:
        return inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return repr(condition)


async def wait_until(pilot: Pilot[Any], condition: Callable[[], object],
                     within: float = WITHIN, what: What = None) -> None:
    """Let the app run until `condition` holds."""
    ends = time.monotonic() + within
    while not condition():
        if time.monotonic() >= ends:
            raise AssertionError(f"condition not met within {within} s: "
                                 f"{_named(condition, what)}")
        await pilot.pause(STEP)


def block_until(condition: Callable[[], object], within: float = WITHIN,
                what: What = None, step: float = STEP) -> None:
    """Block this thread until `condition` holds."""
    ends = time.monotonic() + within
    while not condition():
        if time.monotonic() >= ends:
            raise AssertionError(f"condition not met within {within} s: "
                                 f"{_named(condition, what)}")
        time.sleep(step)
