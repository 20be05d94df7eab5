"""A table of one-line rows that renders only what is visible (Textual's line API).

DataTable re-renders every visible cell through Rich on each change, which costs tens of
milliseconds per frame once rows stream in. Rows here are plain tuples of strings, formatted
into fixed-width columns, and drawn as strips; a strip is kept while its row, the cursor, the
hover and the theme are unchanged, so a frame builds only the lines that changed. Adding rows
costs no layout work per row: the size and the scroll to the newest row are settled once,
after the batch that added them.

Drawn in the theme's colours (background, text, cursor, hover): the component classes below
take their colours from the theme's variables, so switching theme re-styles the rows. The
cursor row is the theme's block cursor while the list has focus, and its muted form when it
does not, so where the focus is shows. A row's own style names a colour by meaning (red for a
failure, yellow for a warning, green for success, cyan for something running): drawn in the
theme's error, warning, success and accent colours.

A widget reused by several screens: its own few styles stay in `DEFAULT_CSS`, which the
screen that uses it can override; screens keep theirs in `.tcss` files beside them.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.app.widgets.scrolling import resize_content
from tui.core.text.printable import printable


@dataclass
class Row:
    key: str
    cells: list[str]
    style: str = ""  # a Rich style for the whole row, e.g. "red"
    # cells made when the row is drawn (a list of many thousands formats only what shows)
    lazy: Callable[[], list[str]] | None = None
    span: bool = False  # one text over the whole row (a section's heading), not in columns

    def shown(self) -> list[str]:
        return self.lazy() if self.lazy is not None else self.cells


SETTLE_SECONDS = 0.1  # added rows are laid out and drawn at most this often (~10 Hz)
MAX_FITTED = 8192  # cells kept fitted to their column (a screenful's are a few hundred)

# a row's colour by meaning -> the theme variable drawn for it
THEME_COLOURS = {"red": "error", "yellow": "warning", "green": "success", "cyan": "accent"}


def fit_cell(cell: str, width: int) -> str:
    """`cell` in exactly `width` terminal cells (a wide character takes two), on one line and
    with nothing a terminal would act on: padded, or cut with `…` as its last cell."""
    if width <= 0:
        return ""
    if cell.isascii() and cell.isprintable():  # most cells: one cell a character
        return cell.ljust(width) if len(cell) <= width else cell[:width - 1] + "…"
    shown = printable(cell[:width + 1] if cell.isascii() else cell[:4 * width + 4],
                      keep_newlines=False)
    if cell_len(shown) <= width:
        return set_cell_size(shown, width)
    cut = set_cell_size(shown, width - 1)
    if not shown.startswith(cut):  # a wide character did not fit: no space before the `…`
        cut = cut.rstrip()
    return set_cell_size(cut + "…", width)


class RowList(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"row-list--cursor", "row-list--hover"}
    DEFAULT_CSS = """
    RowList {
        height: 1fr;
        /* columns are cut to their widths and a row to the view's, each marked `…`: never a
           horizontal scrollbar (it read as one more, empty, highlighted row) */
        overflow-x: hidden;
        background: $surface;
        color: $foreground;
        & > .row-list--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .row-list--hover { background: $block-hover-background; }
        &:focus {
            background-tint: $foreground 5%;
            & > .row-list--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
    }
    """
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
        self.hover: int | None = None  # position in `rows` under the mouse
        self._strips: dict[str, tuple[tuple[object, ...], Strip]] = {}  # by row key
        self._styles: dict[str, Style] = {}  # a row's style string, in the theme's colours
        self._fitted: dict[tuple[str, int], str] = {}  # a cell fitted to its column's width
        self._settling = False  # a settle is scheduled
        self._unsettled = False  # rows came while hidden: settle when shown
        self._settled_at = 0.0

    # -- rows -------------------------------------------------------------------------------
    def add(self, key: str, cells: list[str], style: str = "") -> None:
        row = Row(key, cells, style)
        self.rows.append(row)
        self.index[key] = row
        while len(self.rows) > self.max_rows:
            dropped = self.rows.popleft()
            self.index.pop(dropped.key, None)
            self._strips.pop(dropped.key, None)
            if self.cursor is not None:
                self.cursor = max(0, self.cursor - 1)
            if self.hover is not None:
                self.hover = self.hover - 1 if self.hover > 0 else None
        if self.follow:  # the cursor rides on the newest row (no message: the owner knows)
            self.cursor = len(self.rows) - 1
        if not self._settling:  # once for all the rows a batch (or a tenth of a second) adds
            self._settling = True
            wait = SETTLE_SECONDS - (time.monotonic() - self._settled_at)
            if wait > 0:
                self.set_timer(wait, self._settle)
            else:
                self.call_later(self._settle)

    def _settle(self) -> None:
        """After rows were added: the new size, the scroll to the newest row, one repaint —
        put off while the list is hidden (another tab shows) until it shows."""
        self._settling = False
        if not self.is_on_screen:
            self._unsettled = True
            return
        self._unsettled = False
        self._settled_at = time.monotonic()
        resize_content(self, Size(self._width(), len(self.rows)))
        if self.follow:
            self.call_after_refresh(self._to_end)
        self.refresh()

    def _to_end(self, tries: int = 20) -> None:
        """The newest row in view, once the new size is laid out: a scroll before that stops
        at the old end, and the list would stay there while its cursor follows the newest."""
        if not self.follow or not self.rows or not self.is_on_screen:
            return
        target = max(0, len(self.rows) - self.scrollable_content_region.height)
        if target > self.max_scroll_y and tries > 0:
            self.call_after_refresh(self._to_end, tries - 1)
            return
        self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def replace(self, rows: Sequence[Row], keep: str | None = None) -> None:
        """Every row at once; the cursor stays on `keep` when it is still there, else goes to
        the first row. As many rows as before: only the lines that changed are drawn again
        (the rest keep their strips); a different count: one layout change, one repaint."""
        old, old_cursor, old_hover = self.rows, self.cursor, self.hover
        self.rows = deque(rows[-self.max_rows:])
        self.index = {row.key: row for row in self.rows}
        self.cursor = None
        self.hover = None
        if keep is not None and keep in self.index:
            self.cursor = next(i for i, row in enumerate(self.rows) if row.key == keep)
        elif self.rows:
            self.cursor = 0
        if len(old) != len(self.rows):
            self._strips.clear()
            resize_content(self, Size(self._width(), len(self.rows)))
            self.refresh()
            return
        changed = {i for i, (was, now) in enumerate(zip(old, self.rows, strict=True))
                   if was.key != now.key or was.cells != now.cells or was.style != now.style
                   or was.lazy is not None or now.lazy is not None}
        if old_cursor != self.cursor:
            changed.update(i for i in (old_cursor, self.cursor) if i is not None)
        if old_hover is not None:  # the mouse's row loses its hover
            changed.add(old_hover)
        top, height = self.scroll_offset.y, max(1, self.size.height)
        for position in sorted(changed):
            if top <= position < top + height:  # a line out of view is drawn when it shows
                self.refresh_line(position)

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

    @property
    def drawn(self) -> bool:
        """Every row added is laid out (no settle waits for its turn) and, while the list shows
        and its cursor follows the newest row, that row is in view (a hidden list is laid out
        when it shows)."""
        if self._settling:
            return False
        if self._unsettled:  # hidden, it is laid out when it shows; shown, it is not yet
            return not self.is_on_screen
        if not self.follow or not self.rows or not self.is_on_screen:
            return True
        return self.scroll_y >= self.max_scroll_y

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

    def select_key(self, key: str) -> None:
        """Move the cursor to the row with `key` (nothing when there is none)."""
        position = self._position(key)
        if position is not None:
            self._select(position)

    def _position(self, key: str) -> int | None:
        # recent rows change most: search from the end
        for offset, row in enumerate(reversed(self.rows)):
            if row.key == key:
                return len(self.rows) - 1 - offset
        return None

    def _width(self) -> int:
        return sum(width + 1 for _, width in self.columns)

    # -- drawing ----------------------------------------------------------------------------
    def row_style(self, style: str) -> Style:
        """A row's style string over the list's own style, its colour names in the theme's
        colours (looked up once per theme)."""
        found = self._styles.get(style)
        if found is None:
            found = self.rich_style
            if style:
                parsed = Style.parse(style)
                if parsed.color is not None and parsed.color.name in THEME_COLOURS:
                    colour = self.app.theme_variables.get(THEME_COLOURS[parsed.color.name])
                    if colour:
                        parsed += Style(color=RichColor.parse(colour))
                found += parsed
            self._styles[style] = found
        return found

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.scrollable_content_region.width  # inside the vertical scrollbar
        base = self.row_style("")
        if index >= len(self.rows):
            return Strip.blank(width, base)
        row = self.rows[index]
        cells = row.shown()
        mark = "cursor" if index == self.cursor else "hover" if index == self.hover else ""
        state = (tuple(cells), row.style, mark, self.has_focus, width, scroll_x)
        kept = self._strips.get(row.key)
        if kept is not None and kept[0] == state:
            return kept[1]
        # a cell is cut and padded to its column by terminal cells (a wide character takes
        # two), and holds nothing a terminal would act on; the row is cut to the view
        text = fit_cell(cells[0] if row.span and cells else
                        " ".join(self._fit(cell, w) for cell, (_, w)
                                 in zip(cells, self.columns, strict=False)).rstrip(), width)
        style = self.row_style(row.style)
        if mark == "cursor":  # the theme's cursor, its colours over the row's own
            style += self.get_component_rich_style("row-list--cursor")
        elif mark == "hover":  # the hover background under the row's own colours
            style += Style(bgcolor=self.get_component_rich_style("row-list--hover").bgcolor)
        strip = Strip([Segment(text, style)], cell_len(text)).extend_cell_length(width, style)
        if len(self._strips) > 4 * max(self.size.height, 16):
            self._strips.clear()  # kept for what is on screen, not for every row ever drawn
        self._strips[row.key] = (state, strip)
        return strip

    def _fit(self, cell: str, width: int) -> str:
        """`fit_cell`, kept by cell and width: a row that changes one cell (its tokens, its
        age) fits only that one again."""
        key = (cell, width)
        found = self._fitted.get(key)
        if found is None:
            if len(self._fitted) >= MAX_FITTED:
                self._fitted.clear()
            found = self._fitted[key] = fit_cell(cell, width)
        return found

    def notify_style_update(self) -> None:
        """The theme, the CSS or the focus changed: every kept strip and style is stale."""
        super().notify_style_update()
        self._strips.clear()
        self._styles.clear()
        self.refresh()

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

    def on_show(self) -> None:
        if self._unsettled:
            self._settle()

    def on_resize(self, event: events.Resize) -> None:
        """A new size (the panes narrowed, the terminal resized, the tab shown at last): a list
        that follows its newest row keeps it in view at the new height."""
        if self.follow and self.rows and not self._unsettled:
            self.scroll_end(animate=False, immediate=False, force=True)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        position = event.y + self.scroll_offset.y
        self._hover_on(position if 0 <= position < len(self.rows) else None)

    def on_leave(self, event: events.Leave) -> None:
        self._hover_on(None)

    def _hover_on(self, position: int | None) -> None:
        if position == self.hover:
            return
        old, self.hover = self.hover, position
        for line in (old, position):
            if line is not None:
                self.refresh_line(line)

    def header(self) -> str:
        return " ".join(name[:w].ljust(w) for name, w in self.columns)
