"""The panes' tables never show a horizontal scrollbar (it read as one more, empty,
highlighted row): a cell longer than its column, and a row wider than the pane, end in `…`."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import TabbedContent

from tests.app.conftest import leave_prompt, recorded, replay
from tests.app.test_small_terminal import screen_rows
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.widgets.row_list import RowList, fit_cell


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
        await leave_prompt(pilot)  # the pane keys act out of the prompt
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


class OneList(App[None]):
    def compose(self) -> ComposeResult:
        yield RowList([("name", 10), ("text", 60)], 100, id="list")

    def on_mount(self) -> None:
        rows = self.query_one(RowList)
        for n in range(30):
            rows.add(f"k{n}", [f"row {n}", "a sentence much longer than the list is wide"])


async def test_with_a_vertical_scrollbar_the_cut_row_still_shows_its_mark() -> None:
    app = OneList()
    async with app.run_test(size=(40, 10)) as pilot:
        rows = app.query_one(RowList)
        await wait_until(pilot, lambda: rows.drawn and rows.row_count == 30)
        assert rows.show_vertical_scrollbar and not rows.show_horizontal_scrollbar
        inside = rows.scrollable_content_region.width
        assert inside < 40
        lines = ["".join(segment.text for segment in strip)
                 for strip in app.screen._compositor.render_strips()]
        shown = [line[:inside] for line in lines]
        assert shown[-1] == "row 29     a sentence much longer than t…"[:inside - 1] + "…"
        assert all(line.endswith("…") for line in shown)
