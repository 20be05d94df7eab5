"""The hook faults pane: one row per fault a hook reported (a bounded number)."""

from __future__ import annotations

import time

from textual.containers import Vertical
from textual.widgets import Static

from tui.app.widgets.row_list import RowList
from tui.core import events as ev

MAX_FAULT_ROWS = 500


class HookFaultsPane(Vertical):
    """hook, handler, arm or error, time."""

    DEFAULT_CSS = """
    HookFaultsPane .list-header { height: 1; color: $text-muted; text-style: bold; }
    """
    COLUMNS = (("time", 8), ("hook", 16), ("handler", 16), ("arm / error", 60))

    def __init__(self) -> None:
        super().__init__()
        self.rows = RowList(self.COLUMNS, MAX_FAULT_ROWS, id="faults")
        self.count = 0

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self.rows.header(), classes="list-header", markup=False)
        yield self.rows

    def fault(self, event: ev.HookFault) -> None:
        self.count += 1
        what = event.arm or event.error or ""
        if event.arm and event.error:
            what = f"{event.arm}: {event.error}"
        stamp = time.strftime("%H:%M:%S", time.localtime(event.ts_ms / 1000))
        self.rows.add(str(event.seq), [stamp, event.hook, event.handler, what], "yellow")
