"""Setting a scrolling view's virtual size without laying the whole screen out.

Textual lays the screen out again whenever a widget's virtual size changes, which re-renders
every widget on it. For a view that keeps its size on screen — already scrolling (its
vertical scrollbar shown, and shown still) and as wide as before — growing or shrinking its
content changes only its scrollbar: that is all `resize_content` updates. Any other change
(the first scrollbar appears, the width changes, a view sized by its content) takes the
ordinary way.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.widget import Widget


def resize_content(view: ScrollView, size: Size) -> None:
    """`view.virtual_size = size`, without a screen layout when the view's own size cannot
    change because of it."""
    old = view.virtual_size
    if size == old:
        return
    height = view.container_size.height
    styles = view.styles
    sized_by_content = styles.is_auto_height and styles.max_height is None
    if (view.is_mounted and view.show_vertical_scrollbar and size.width == old.width
            and old.height > height and size.height > height and not sized_by_content):
        view.set_reactive(Widget.virtual_size, size)
        bar = view.vertical_scrollbar
        bar.window_virtual_size = size.height  # the thumb's size and place
        bar.refresh()
        view.scroll_y = view.validate_scroll_y(view.scroll_y)  # within the new end
        view.refresh()
        return
    view.virtual_size = size
