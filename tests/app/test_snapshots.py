"""Pixel snapshots of the supervisor screen at a fixed size (the recorded session replayed).

What would make them wander is pinned: the event stream is a recorded file (fixed ids,
paths and times), the clock shows the replayed session's own duration (0:00), the hook-fault
times are shown in UTC, the answer field's cursor does not blink. Each pane is taken in the
dark and the light theme, wide and at 80×24 (where the panes take the whole width, `p`); the
question dialog at 60×20. Update with `--snapshot-update` and look at the SVGs before
committing them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from tests.app.conftest import leave_prompt, recorded, replay, settle
from tests.waits import wait_until
from tui.app.app import SupervisorApp


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def replayed(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, SupervisorApp)
    # the prompt has the focus: its cursor steady (shown) long before the picture is taken
    app.supervisor.prompt.cursor_blink = False
    await replay(pilot, recorded())
    transcript = app.supervisor.transcript
    # drawn, and the transcript at its newest line (it follows the output), however slowly a
    # loaded machine gets there
    await wait_until(pilot, lambda: app.idle and transcript.scroll_y >= transcript.max_scroll_y)
    await settle(pilot)


async def show_pane(pilot: Pilot[Any], key: str) -> None:
    """Press a pane's key and wait until its tab is the one showing and its list drawn."""
    app = pilot.app
    assert isinstance(app, SupervisorApp)
    if app.supervisor.prompt.has_focus:
        await leave_prompt(pilot)  # out of the prompt, where the digits are text
    await pilot.press(key)
    screen = app.supervisor
    tab = {PANES[name]: f"tab-{name}" for name in PANES}[key]
    rows = {"1": screen.tools.rows, "2": screen.shell, "3": screen.faults.rows}[key]
    await wait_until(pilot, lambda: screen.query_one(TabbedContent).active == tab
                     and rows.drawn)
    await settle(pilot)


def test_finished_session(snap_compare: Any, murmur_home: Path) -> None:
    assert snap_compare(SupervisorApp(murmur_home), terminal_size=(140, 40),
                        run_before=replayed)


def test_hook_faults_pane(snap_compare: Any, murmur_home: Path) -> None:
    async def faults(pilot: Pilot[Any]) -> None:
        await replayed(pilot)
        await show_pane(pilot, "3")

    assert snap_compare(SupervisorApp(murmur_home), terminal_size=(140, 40), run_before=faults)


PANES = {"tools": "1", "shell": "2", "faults": "3"}
THEMES = ("murmur-dark", "murmur-light")
SIZES = {"wide": (140, 40), "80x24": (80, 24)}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("pane", list(PANES))
def test_each_pane(snap_compare: Any, murmur_home: Path, pane: str, theme: str,
                   size: str) -> None:
    async def shown(pilot: Pilot[Any]) -> None:
        await replayed(pilot)
        if size == "80x24":
            # out of the prompt; narrow: the panes take the whole width
            await leave_prompt(pilot)
            await pilot.press("p")
            app = pilot.app
            assert isinstance(app, SupervisorApp)
            panes = app.supervisor.query_one("#panes")
            await wait_until(pilot, lambda: panes.region.width == 80)
        await show_pane(pilot, PANES[pane])

    assert snap_compare(SupervisorApp(murmur_home, theme=theme), terminal_size=SIZES[size],
                        run_before=shown)


@pytest.mark.parametrize("theme", THEMES)
def test_the_transcript_at_80x24(snap_compare: Any, murmur_home: Path, theme: str) -> None:
    assert snap_compare(SupervisorApp(murmur_home, theme=theme), terminal_size=(80, 24),
                        run_before=replayed)


@pytest.mark.parametrize("theme", THEMES)
def test_the_question_dialog_at_60x20(snap_compare: Any, murmur_home: Path,
                                      theme: str) -> None:
    from tui.app.screens.ask import AskScreen
    from tui.core.asking.question import Question
    from tui.core.asking.request import InputRequest

    async def asked(pilot: Pilot[Any]) -> None:
        await replayed(pilot)
        prompt = "The demo tool would like to know: shall it list the workdir? (yes/no)"
        dialog = AskScreen(Question(InputRequest("r1", prompt, "ask-user")), 1)
        pilot.app.push_screen(dialog)
        await wait_until(pilot, lambda: dialog.is_mounted and dialog.answer.has_focus)
        dialog.answer.cursor_blink = False  # the cursor shows, whenever the picture is taken
        await settle(pilot, 0.4)

    assert snap_compare(SupervisorApp(murmur_home, theme=theme), terminal_size=(60, 20),
                        run_before=asked)


def test_help_screen(snap_compare: Any, murmur_home: Path) -> None:
    async def helped(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, SupervisorApp)
        app.supervisor.prompt.cursor_blink = False  # the prompt behind: a steady cursor
        await pilot.press("f1")

    assert snap_compare(SupervisorApp(murmur_home), terminal_size=(120, 36),
                        run_before=helped)
