"""Pixel snapshots of the supervisor screen at a fixed size (the recorded session replayed).

What would make them wander is pinned: the event stream is a recorded file (fixed ids,
paths and times), the clock shows the replayed session's own duration (0:00), the hook-fault
times are shown in UTC, the answer field's cursor does not blink. Each pane is taken in the
dark and the light theme, wide and at 80×24 (where the panes take the whole width, `p`); the
question dialog at 60×20; the session mid-run at 80×24 and 60×20 in each of the three themes
(its clock standing still). Update with `--snapshot-update` and look at the SVGs before
committing them.
"""

from __future__ import annotations

import dataclasses
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
                     and rows.is_on_screen and rows.drawn)
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


ALL_THEMES = ("murmur-dark", "murmur-light", "murmur-high-contrast")
SMALL = {"80x24": (80, 24), "60x20": (60, 20)}


class StoppedClock:
    """The status bar's clock, standing still: a session mid-run reads the same elapsed time
    whenever the picture is taken (the replay's own pace varies with the machine's load)."""

    @staticmethod
    def monotonic() -> float:
        return 1000.0


@pytest.mark.parametrize("size", list(SMALL))
@pytest.mark.parametrize("theme", ALL_THEMES)
def test_mid_session_in_a_small_terminal(snap_compare: Any, murmur_home: Path, theme: str,
                                         size: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded session mid-run — its question answered, two commands' output, a
    sentence with inline code — in each theme at 80×24 and 60×20: the header keeps the
    session id, the status line its state, the footer Help and Quit, nothing cut mid-word."""
    from tui.app.models import status
    from tui.core.events import vocabulary as ev

    monkeypatch.setattr(status, "time", StoppedClock)
    events = []
    for event in recorded():
        if event.seq > 30:  # after turn 2's commands and their hook faults
            break
        if isinstance(event, ev.TextDelta) and event.text == "**two** ":
            event = dataclasses.replace(event, text="`two` ")  # inline code, in the theme
        events.append(event)

    async def mid_run(pilot: Pilot[Any]) -> None:
        await replay(pilot, events)
        app = pilot.app
        assert isinstance(app, SupervisorApp)
        app.supervisor.prompt.cursor_blink = False  # the focused prompt: a steady cursor
        transcript = app.supervisor.transcript
        await wait_until(pilot, lambda: app.idle and transcript.scroll_y >= transcript.max_scroll_y
                         and app.state.kind == "busy")
        await settle(pilot)

    assert snap_compare(SupervisorApp(murmur_home, theme=theme), terminal_size=SMALL[size],
                        run_before=mid_run)
