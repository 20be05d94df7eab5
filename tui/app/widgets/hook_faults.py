"""The hook faults pane: one row per fault a hook reported (a bounded number), and the
highlighted fault in full below (the table cuts its text to the column).

A widget a screen places: its own layout stays in `DEFAULT_CSS`, which that screen can
override; screens keep theirs in `.tcss` files beside them."""

from __future__ import annotations

import time

from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from tui.app.widgets.row_list import RowList
from tui.core.events import vocabulary as ev
from tui.core.text.printable import printable

MAX_FAULT_ROWS = 500


class HookFaultsPane(Vertical):
    """hook, handler, arm or error, time; the highlighted fault whole underneath."""

    DEFAULT_CSS = """
    HookFaultsPane .list-header { height: 1; color: $text-muted; text-style: bold; }
    HookFaultsPane RowList { height: 1fr; }
    HookFaultsPane #fault-detail-scroll { height: 1fr; border-top: solid $panel; }
    HookFaultsPane #fault-detail { padding: 0 1; }
    """
    COLUMNS = (("time", 8), ("hook", 16), ("handler", 16), ("arm / error", 60))

    def __init__(self) -> None:
        super().__init__()
        self.rows = RowList(self.COLUMNS, MAX_FAULT_ROWS, id="faults")
        self.detail = Static("No hook has reported a fault.", id="fault-detail", markup=False)
        self.faults: dict[str, ev.HookFault] = {}
        self.count = 0
        self._shown: str | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self.rows.header(), classes="list-header", markup=False)
        yield self.rows
        with VerticalScroll(id="fault-detail-scroll"):
            yield self.detail

    def fault(self, event: ev.HookFault) -> None:
        self.count += 1
        key = str(event.seq)
        self.faults[key] = event
        while len(self.faults) > MAX_FAULT_ROWS:
            self.faults.pop(next(iter(self.faults)))
        what = event.arm or event.error or ""
        if event.arm and event.error:
            what = f"{event.arm}: {event.error}"
        stamp = time.strftime("%H:%M:%S", time.localtime(event.ts_ms / 1000))
        self.rows.add(key, [stamp, event.hook, event.handler, what], "yellow")

    def on_row_list_highlighted(self, message: RowList.Highlighted) -> None:
        self._show(message.key)

    def flush(self) -> None:
        """After a batch: show the highlighted fault (the newest while the cursor follows)."""
        key = self.rows.highlighted
        if key is not None and key != self._shown:
            self._show(key)

    def _show(self, key: str) -> None:
        event = self.faults.get(key)
        if event is None:
            return
        self._shown = key
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.ts_ms / 1000))
        parts = [f"hook: {event.hook}", f"handler: {event.handler}"]
        if event.arm:
            parts.append(f"arm: {event.arm}")
        if event.task_id:
            parts.append(f"task: {event.task_id}")
        parts.append(f"time: {when}.{event.ts_ms % 1000:03d}")
        parts.append("traced: yes (a hook_dispatch_error line)" if event.traced else
                     "traced: no (an async hook's or on-stage fault)")
        if event.error:
            parts += ["", "error:", event.error]
        self.detail.update(printable("\n".join(parts)))
