"""A list redrawn whole (`RowList.replace`, the fleet every few tenths of a second) draws again
only the lines that changed, each cell fitted once per text and width; a text line redrawn
often (`SteadyText`) lays the screen out only when its height may change."""

from __future__ import annotations

from rich.cells import set_cell_size
from textual.app import App, ComposeResult
from textual.strip import Strip

from tests.waits import wait_until
from tui.app.widgets.row_list import Row, RowList, fit_cell
from tui.app.widgets.steady_text import SteadyText
from tui.core.text.printable import printable

COLUMNS = [("name", 6), ("tokens", 8), ("task", 20)]


def slow_fit(cell: str, width: int) -> str:
    """fit_cell as it was before the ASCII path: the reference."""
    shown = printable(cell, keep_newlines=False)
    if len(shown) <= width:
        return set_cell_size(shown, width)
    return set_cell_size(set_cell_size(shown, width - 1) + "…", width)


def test_an_ascii_cell_fits_as_any_other_cell_does() -> None:
    for cell in ["", "a", "bash", "exactly8", "nine char", "x" * 40, "  spaced  ", "~!@#$%^&*"]:
        for width in (1, 2, 7, 8, 9, 30):
            assert fit_cell(cell, width) == slow_fit(cell, width), (cell, width)
    # control characters are shown, never sent: not the ASCII path
    assert fit_cell("a\x07b", 5) == "a␇b  "
    assert fit_cell("tab\there", 9) == "tab here "


def rows(tokens: list[int]) -> list[Row]:
    return [Row(f"s{n}", [f"s{n}", f"{count:,}", "streaming"]) for n, count in enumerate(tokens)]


class Fleetish(App[None]):
    def compose(self) -> ComposeResult:
        yield SteadyText("0 sessions", id="totals")
        yield RowList(COLUMNS, 100, id="list")
        yield SteadyText("", id="detail")


def screen_rows(app: App[None]) -> list[str]:
    """The terminal's rows as a person reads them."""
    return ["".join(segment.text for segment in strip).rstrip()
            for strip in app.screen._compositor.render_strips()]


def line_of(app: Fleetish, y: int) -> Strip:
    return app.query_one(RowList).render_line(y)


async def test_a_list_replaced_whole_draws_again_only_the_rows_that_changed() -> None:
    app = Fleetish()
    async with app.run_test(size=(60, 12)) as pilot:
        listed = app.query_one(RowList)
        listed.replace(rows([100, 200, 300]), keep="s0")
        await wait_until(pilot, lambda: "s2     300" in "\n".join(screen_rows(app)))
        kept = [line_of(app, y) for y in range(3)]
        listed.replace(rows([100, 250, 300]), keep="s0")
        await pilot.pause()
        assert "s1     250      streaming" in screen_rows(app)
        assert "s1     200" not in "\n".join(screen_rows(app))
        now = [line_of(app, y) for y in range(3)]
        assert now[0] is kept[0] and now[2] is kept[2]  # unchanged: the strip drawn before
        assert now[1] is not kept[1]
        # the cursor moves: both its old and its new row are drawn again
        listed.replace(rows([100, 250, 300]), keep="s2")
        await pilot.pause()
        assert line_of(app, 1) is now[1]
        assert line_of(app, 0) is not now[0] and line_of(app, 2) is not now[2]
        # one row more: every row is shown, the new one too
        listed.replace(rows([100, 250, 300, 7]), keep="s2")
        await wait_until(pilot, lambda: "s3     7" in "\n".join(screen_rows(app)))


async def test_a_row_changed_in_place_shows_its_new_cells() -> None:
    app = Fleetish()
    async with app.run_test(size=(60, 12)) as pilot:
        listed = app.query_one(RowList)
        listed.replace(rows([1, 2]), keep="s0")
        await wait_until(pilot, lambda: "s1     2" in "\n".join(screen_rows(app)))
        listed.update("s1", ["s1", "a cell far too long for its column", "asked"])
        await wait_until(pilot, lambda: "s1     a cell … asked" in screen_rows(app))


async def test_steady_text_keeps_its_height_until_its_lines_change() -> None:
    app = Fleetish()
    async with app.run_test(size=(40, 12)) as pilot:
        totals = app.query_one("#totals", SteadyText)
        detail = app.query_one("#detail", SteadyText)
        totals.update("12 sessions · 3 need you")
        await wait_until(pilot, lambda: screen_rows(app)[0] == "12 sessions · 3 need you")
        assert not totals.may_resize("12 sessions", "13 sessions")
        detail.update("one line")
        await wait_until(pilot, lambda: "one line" in screen_rows(app))
        assert detail.size.height == 1
        detail.update("first\nsecond")  # another line count: laid out again
        await wait_until(pilot, lambda: detail.size.height == 2)
        assert screen_rows(app)[-2:] == ["first", "second"]
        assert detail.may_resize("a", "b" * 60)  # a line wider than the widget may wrap
        detail.update("word " * 12)
        await wait_until(pilot, lambda: detail.size.height == 2)
        detail.update("back to one")
        await wait_until(pilot, lambda: detail.size.height == 1 and
                         screen_rows(app)[-1] == "back to one")
