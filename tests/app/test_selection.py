"""Selecting transcript text with the mouse: a drag selects what it went over — part of one
line, or across lines — drawn with the selection's background and the text's own colour, and
Ctrl+C copies exactly that. The real app under Pilot; the copy read from its clipboard."""

from __future__ import annotations

from pathlib import Path

from rich.style import Style

from tests.app.conftest import keep_notes, recorded, replay
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.widgets.transcript import Transcript


def row_of(view: Transcript, text: str) -> tuple[int, int]:
    """The index of the line starting with `text` and its row on screen."""
    index = next(n for n, line in enumerate(view.plain_lines) if line.startswith(text))
    return index, index - round(view.scroll_y)


def cell(app: SupervisorApp, view: Transcript, column: int, row: int) -> Style:
    region = view.content_region
    return app.screen.get_style_at(region.x + column, region.y + row)


async def test_a_drag_over_part_of_a_line_selects_and_copies_exactly_that(
        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    said = keep_notes(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await replay(pilot, recorded())
        view = app.supervisor.transcript
        view.scroll_home(animate=False, immediate=True)  # where the lines below are
        await wait_until(pilot, lambda: view.scroll_y == 0 and not view.is_following)
        _, row = row_of(view, "Asking first.")
        assert 0 <= row < view.content_region.height
        pad = view.content_region.x - view.region.x
        await pilot.mouse_down(view, offset=(pad + 3, row))
        await pilot.hover(view, offset=(pad + 9, row))
        await pilot.mouse_up(view, offset=(pad + 9, row))
        await wait_until(pilot, lambda: app.screen.get_selected_text() == "ing fir")
        assert set(app.screen.selections) == {view}  # the transcript only, not all of it
        # drawn legibly: the selection's background, the text in its own colour
        await pilot.pause()
        plain = cell(app, view, 1, row)  # "s", not selected
        chosen = cell(app, view, 5, row)  # "g", selected
        assert chosen.bgcolor != plain.bgcolor
        assert chosen.color == plain.color and chosen.color != chosen.bgcolor
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app.clipboard == "ing fir")
        assert "Copied 7 characters." in said


async def test_a_drag_across_lines_copies_from_where_it_started_to_where_it_ended(
        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await replay(pilot, recorded())
        view = app.supervisor.transcript
        view.scroll_home(animate=False, immediate=True)  # where the lines below are
        await wait_until(pilot, lambda: view.scroll_y == 0 and not view.is_following)
        first, top = row_of(view, "I should ask before touching anything.")
        _, bottom = row_of(view, "Asking first.")
        assert bottom == top + 1
        pad = view.content_region.x - view.region.x
        await pilot.mouse_down(view, offset=(pad + 9, top))
        await pilot.hover(view, offset=(pad + 5, bottom))
        await pilot.mouse_up(view, offset=(pad + 5, bottom))
        wanted = "ask before touching anything.\nAsking"
        await wait_until(pilot, lambda: app.screen.get_selected_text() == wanted)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app.clipboard == wanted)
        assert view.plain_lines[first].startswith("I should ")
