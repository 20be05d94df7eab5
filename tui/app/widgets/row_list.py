"""A table of one-line rows that renders only what is visible (Textual's line API).

DataTable re-renders every visible cell through Rich on each change, which costs tens of
milliseconds per frame once rows stream in. Rows here are plain tuples of strings, formatted
into fixed-width columns once, and drawn as strips; a change re-renders only its own line.

A widget reused by several screens: its own few styles stay in `DEFAULT_CSS`, which the
screen that uses it can override; screens keep theirs in `.tcss` files beside them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.core.printable import printable


@dataclass
class Row:
    key: str
    cells: list[str]
    style: str = ""  # a Rich style for the whole row, e.g. "red"
    # cells made when the row is drawn (a list of many thousands formats only what shows)
    lazy: Callable[[], list[str]] | None = None

    def shown(self) -> list[str]:
        return self.lazy() if self.lazy is not None else self.cells


class RowList(ScrollView, can_focus=True):
    DEFAULT_CSS = "RowList { height: 1fr; }"
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "move(-10)", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("home", "first", show=False),
        Binding("end", "last", show=False),
    ]

    class Highlighted(Message):
        def __init__(self, row_list: RowList, key: str) -> None:
            super().__init__()
            self.row_list = row_list
            self.key = key

    def __init__(self, columns: Sequence[tuple[str, int]], max_rows: int, *,
                 id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.columns = list(columns)
        self.max_rows = max_rows
        self.rows: deque[Row] = deque()
        self.index: dict[str, Row] = {}
        self.cursor: int | None = None  # position in `rows`
        self.follow = True  # the cursor follows the newest row until the user moves it

    # -- rows -------------------------------------------------------------------------------
    def add(self, key: str, cells: list[str], style: str = "") -> None:
        row = Row(key, cells, style)
        self.rows.append(row)
        self.index[key] = row
        while len(self.rows) > self.max_rows:
            dropped = self.rows.popleft()
            self.index.pop(dropped.key, None)
            if self.cursor is not None:
                self.cursor = max(0, self.cursor - 1)
        self.virtual_size = Size(self._width(), len(self.rows))
        if self.follow:  # the cursor rides on the newest row (no message: the owner knows)
            self.cursor = len(self.rows) - 1
            self.scroll_end(animate=False, immediate=False, force=True)
        self.refresh()

    def replace(self, rows: Sequence[Row], keep: str | None = None) -> None:
        """Every row at once (one layout change, one repaint, however many rows); the cursor
        stays on `keep` when it is still there, else goes to the first row."""
        self.rows = deque(rows[-self.max_rows:])
        self.index = {row.key: row for row in self.rows}
        self.cursor = None
        if keep is not None and keep in self.index:
            self.cursor = next(i for i, row in enumerate(self.rows) if row.key == keep)
        elif self.rows:
            self.cursor = 0
        self.virtual_size = Size(self._width(), len(self.rows))
        self.refresh()

    def update(self, key: str, cells: list[str], style: str | None = None) -> None:
        row = self.index.get(key)
        if row is None:
            return
        row.cells = cells
        if style is not None:
            row.style = style
        position = self._position(key)
        if position is not None:
            self.refresh_line(position)

    def get(self, key: str) -> Row | None:
        return self.index.get(key)

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def highlighted(self) -> str | None:
        if self.cursor is None or not self.rows:
            return None
        return self.rows[min(self.cursor, len(self.rows) - 1)].key

    def _position(self, key: str) -> int | None:
        # recent rows change most: search from the end
        for offset, row in enumerate(reversed(self.rows)):
            if row.key == key:
                return len(self.rows) - 1 - offset
        return None

    def _width(self) -> int:
        return sum(width + 1 for _, width in self.columns)

    # -- drawing ----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.size.width
        if index >= len(self.rows):
            return Strip.blank(width)
        row = self.rows[index]
        # a cell is cut and padded to its column by terminal cells (a wide character takes
        # two), and holds nothing a terminal would act on
        text = " ".join(set_cell_size(printable(cell[:w], keep_newlines=False), w)
                        for cell, (_, w) in zip(row.shown(), self.columns, strict=False))
        style = Style.parse(row.style) if row.style else Style()
        if index == self.cursor:
            style += Style(reverse=True, bold=self.has_focus)
        strip = Strip([Segment(text, style)], cell_len(text))
        return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width)

    # -- moving -----------------------------------------------------------------------------
    def _select(self, position: int) -> None:
        if not self.rows:
            return
        position = max(0, min(position, len(self.rows) - 1))
        old = self.cursor
        self.cursor = position
        self.follow = position == len(self.rows) - 1
        if old is not None:
            self.refresh_line(old)
        self.refresh_line(position)
        self.scroll_to_region_line(position)
        self.post_message(self.Highlighted(self, self.rows[position].key))

    def scroll_to_region_line(self, position: int) -> None:
        top = self.scroll_offset.y
        height = max(1, self.size.height)
        if position < top:
            self.scroll_to(y=position, animate=False)
        elif position >= top + height:
            self.scroll_to(y=position - height + 1, animate=False)

    def action_move(self, delta: int) -> None:
        self._select((self.cursor if self.cursor is not None else len(self.rows) - 1) + delta)

    def action_first(self) -> None:
        self._select(0)

    def action_last(self) -> None:
        self._select(len(self.rows) - 1)

    def on_click(self, event: events.Click) -> None:
        self._select(event.y + self.scroll_offset.y)

    def header(self) -> str:
        return " ".join(name[:w].ljust(w) for name, w in self.columns)
