"""Where the fleet's notifications (toasts: "Needs you", notes) sit while its input line is
open (docs/fleet.md, "Answering from the fleet"): Textual stacks them at the bottom right,
just where the input line and the hint over it are, so while either shows the toasts step up
above the hint — still read, never covering what is being typed nor the question it
answers — and go back down when the line closes. Nothing is dismissed: a toast keeps its own
timeout."""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets._toast import ToastRack

FOOTER_ROWS = 1  # the footer under the input line, which Textual's own margin keeps clear


def place_toasts(screen: Screen[Any], above: Widget | None) -> None:
    """The toasts over `above` (the top of what they must not cover) while it shows; with
    None (or `above` hidden), where Textual puts them."""
    try:
        rack = screen.get_child_by_type(ToastRack)
    except NoMatches:  # notifications are off
        return
    if above is None or not above.display or not above.region:
        rack.styles.clear_rule("margin")
        return
    lift = max(FOOTER_ROWS, screen.size.height - above.region.y)
    rack.styles.margin = (0, 0, lift, 0)
