"""A scrolling widget that draws a list of pre-rendered `Text` lines with Textual's line API.

The transcript and the browser's message view both keep their content as lines — rendered once
per message or turn (again when the width changes) — and draw only those on screen, so their
cost per frame does not grow with what they hold. The theme's base style is looked up once per
style change.

Selecting text with the mouse selects what the mouse went over, as Textual intends for a
line-API widget: each drawn strip carries the offsets of its characters (`apply_offsets`: the
line's index in the view and the column), so the screen knows where a drag starts and ends in
the text, and `get_selection` gives back exactly that text (`Ctrl+C` copies it). A selection
is drawn with the screen's selection background and keeps the text's own colours (the
selection's foreground is transparent: taken as a colour, it painted the text in the
background's colour).

A line's strip is kept while the line, the scroll, the width, the theme and the selection on it
are unchanged: a frame that adds a line to the end builds that line, not all the lines on
screen. Kept strips are only those of lines recently on screen.

Drawn in the theme's colours: the background and text are the theme's, a selection is the
screen's selection colour, and a focused view is tinted so where the focus is shows.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

from tui.core.text.printable import printable


class LinesView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    LinesView {
        /* lines are wrapped to the width: never a horizontal scrollbar (shown while the
           width settles, it took a row and hid the last line of a view at its end) */
        overflow-x: hidden;
        background: $background;
        color: $foreground;
        &:focus { background-tint: $foreground 4%; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._lines: list[Text] = []
        self._width = 0
        self._base: Style | None = None
        self._selected: Style | None = None  # the selection's style, made from the theme
        # id(line) -> (the line, what it was drawn for, its strip)
        self._strips: dict[int, tuple[Text, tuple[object, ...], Strip]] = {}

    def _to_lines(self, renderable: RenderableType) -> list[Text]:
        """`renderable` as lines of the current width, with nothing a terminal would act on
        (`printable`: the text may come from a component or a record)."""
        console = self.app.console
        options = console.options.update_width(self._width)
        return [Text.assemble(*((printable(seg.text), seg.style or Style()) for seg in line
                                if not seg.control))
                for line in console.render_lines(renderable, options, pad=False)]

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.scrollable_content_region.width
        base = self._base
        if base is None:
            base = self._base = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, base)
        line = self._lines[index]
        selection = self.text_selection
        span = selection.get_span(index) if selection is not None else None
        state = (index, scroll_x, width, base, span)
        kept = self._strips.get(id(line))
        if kept is not None and kept[0] is line and kept[1] == state:
            return kept[2]
        if span is not None:
            start, end = span
            line = line.copy()
            line.stylize(self.selection_style, start, len(line.plain) if end == -1 else end)
        strip = Strip(list(Segment.apply_style(line.render(self.app.console), base)))
        # the offsets let a mouse drag find the characters it went over
        strip = strip.crop_extend(scroll_x, scroll_x + width, base).apply_offsets(scroll_x,
                                                                                  index)
        if len(self._strips) > 4 * max(self.size.height, 16):
            self._strips.clear()  # kept for what was on screen lately, not for every line
        self._strips[id(self._lines[index])] = (self._lines[index], state, strip)
        return strip

    def notify_style_update(self) -> None:
        """The theme, the CSS or the focus changed: the base style and kept strips are
        stale."""
        super().notify_style_update()
        self._base = None
        self._selected = None
        self._strips.clear()
        self.refresh()

    @property
    def selection_style(self) -> Style:
        """The screen's selection colours over a line: its background, blended with the
        view's; the text keeps its own colour unless the theme gives the selection one."""
        style = self._selected
        if style is None:
            screen = self.screen
            rich = screen.get_component_rich_style("screen--selection")
            if screen.get_component_styles("screen--selection").color.a == 0:
                rich = Style(bgcolor=rich.bgcolor)
            style = self._selected = rich
        return style

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text selected, exactly: the lines as shown (without the blanks a rendering
        pads them with), cut where the selection starts and ends."""
        return selection.extract("\n".join(line.plain.rstrip() for line in self._lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    @property
    def plain_lines(self) -> list[str]:
        return [line.plain for line in self._lines]
