"""The panes' tables never show a horizontal scrollbar (it read as one more, empty,
highlighted row): a cell longer than its column, and a row wider than the pane, end in `…`."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TabbedContent

from tests.app.conftest import recorded, replay
from tests.app.test_small_terminal import screen_rows
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.widgets.row_list import fit_cell


def test_a_cell_is_padded_or_cut_with_an_ellipsis_in_terminal_cells() -> None:
    assert fit_cell("bash", 8) == "bash    "
    assert fit_cell("exactly8", 8) == "exactly8"
    assert fit_cell("nine char", 8) == "nine ch…"
    assert fit_cell("日本語テキスト", 8) == "日本語… "  # wide characters: two cells each
    assert fit_cell("a\x1b[2Jb\nc", 8) == "a␛[2Jb␤c"
    assert fit_cell("a\x1b[2Jb\ncd", 8) == "a␛[2Jb␤…"
    assert fit_cell("anything", 0) == ""


async def test_at_80_columns_the_panes_rows_fit_and_no_scrollbar_shows(
        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await replay(pilot, recorded())
        screen = app.supervisor
        await pilot.press("p")
        await pilot.press("3")
        faults = screen.faults.rows
        await wait_until(pilot, lambda: screen.query_one(TabbedContent).active == "tab-faults"
                         and faults.region.width == 80 and faults.drawn)
        assert faults.virtual_size.width > 80  # the columns are wider than the pane
        assert not faults.show_horizontal_scrollbar
        top = faults.region.y
        rows = screen_rows(app)
        shown = rows[top:top + faults.region.height]
        assert all(row.split()[1:4] == ["noisy-hook", "on-tool-call", "artifact:"]
                   for row in shown[:4]), shown[:4]
        assert all(row.endswith("…") and len(row) == 80 for row in shown[:4]), shown[:4]
        # under the rows, nothing: no scrollbar's track
        assert all(not row.strip() for row in shown[4:]), shown[4:]
        await pilot.press("1")
        calls = screen.tools.rows
        await wait_until(pilot, lambda: calls.region.width == 80 and calls.drawn)
        assert not calls.show_horizontal_scrollbar
        shown = screen_rows(app)[calls.region.y:calls.region.bottom]
        assert [row.split()[:2] for row in shown if row.strip()] == \
            [["ask-user", "ok"], ["bash", "exit"], ["bash", "exit"], ["bash", "exit"]], shown
