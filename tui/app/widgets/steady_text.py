"""A line (or a few) of plain text redrawn often — a totals line, a detail under a list — that
lays the screen out again only when its height may change.

`Static.update` lays the whole screen out by default, which re-renders every widget on it: a
fleet redrawn ten times a second, its totals line changing with every token, spent most of its
frames re-rendering what had not changed. Here the same text is not drawn again, and other
text is drawn in place unless it has another number of lines or a line that may wrap (wider
than the widget), which can change the widget's height.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.visual import VisualType
from textual.widgets import Static


class SteadyText(Static):
    """A `Static` of plain text (`markup=False`) whose `update` re-lays out only when needed."""

    def __init__(self, text: str = "", *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(text, id=id, markup=False)
        self.text = text

    def update(self, content: VisualType = "", *, layout: bool | None = None) -> None:
        """`layout`: None decides (a text with another line count, or a line that may wrap),
        True or False as `Static.update` takes them."""
        if not isinstance(content, str):
            super().update(content, layout=True if layout is None else layout)
            return
        if content == self.text and layout is None:
            return
        if layout is None:
            layout = self.may_resize(self.text, content)
        self.text = content
        super().update(content, layout=layout)

    def may_resize(self, old: str, new: str) -> bool:
        if old.count("\n") != new.count("\n") or not self.is_mounted:
            return True
        width = self.content_region.width
        return any(cell_len(line) > width for text in (old, new) for line in text.split("\n"))
