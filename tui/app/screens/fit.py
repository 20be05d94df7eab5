"""Dialogs that fit a small terminal: the part that may be long (a question, a call's input)
scrolls in the rows the rest of the dialog leaves, so the fields and the hint always show."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widget import Widget


def fit_question(screen: Screen[Any], long_part: Widget, most: int) -> None:
    """Cap `long_part` (a scrolling container in the screen's one dialog box) to what the box
    can give it: the box's height limit less its border, padding and every other child."""
    box = long_part.parent
    if not isinstance(box, Widget) or not box.children or screen.size.height <= 0:
        return
    limit = box.styles.max_height
    height = screen.size.height
    cap = int(limit.resolve(screen.size, screen.size, None)) if limit is not None else height
    others = box.gutter.height + long_part.styles.margin.height
    for child in box.children:
        if child is long_part or not child.display:
            continue
        others += _rows(child) + child.styles.margin.height
    rows = max(1, min(most, cap - others))
    if long_part.styles.max_height is None or long_part.styles.max_height.value != rows:
        long_part.styles.max_height = rows


def _rows(widget: Widget) -> int:
    """The rows a child takes: as laid out, or (shown a moment ago, not laid out yet) the
    fixed height its styles give it."""
    if widget.region.height:
        return widget.outer_size.height
    height = widget.styles.height
    return int(height.value) if height is not None and height.is_cells else 1
