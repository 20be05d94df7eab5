"""Pixel snapshots of the supervisor screen at a fixed size (the recorded session replayed).

What would make them wander is pinned: the event stream is a recorded file (fixed ids,
paths and times), the clock shows the replayed session's own duration (0:00), the hook-fault
times are shown in UTC, and the theme is the default. Update with `--snapshot-update` and
look at the SVGs before committing them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.app.conftest import recorded, replay
from tui.app.app import SupervisorApp


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def replayed(pilot: Pilot[Any]) -> None:
    await replay(pilot, recorded())
    await pilot.pause(0.3)


def test_finished_session(snap_compare: Any, murmur_home: Path) -> None:
    assert snap_compare(SupervisorApp(murmur_home), terminal_size=(140, 40),
                        run_before=replayed)


def test_hook_faults_pane(snap_compare: Any, murmur_home: Path) -> None:
    async def faults(pilot: Pilot[Any]) -> None:
        await replayed(pilot)
        await pilot.press("3")
        await pilot.pause(0.2)

    assert snap_compare(SupervisorApp(murmur_home), terminal_size=(140, 40), run_before=faults)


def test_help_screen(snap_compare: Any, murmur_home: Path) -> None:
    assert snap_compare(SupervisorApp(murmur_home), terminal_size=(120, 36), press=["f1"])
