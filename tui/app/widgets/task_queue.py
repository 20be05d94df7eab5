"""The queue below the transcript: prompts waiting to run, in the order they will run.

Select one (arrows, click) and press `e` to take it back into the prompt, `Delete` to remove
it, `Ctrl+Up` / `Ctrl+Down` to move it. A task the session already holds (marked "next") runs
as it is. The view hides itself while the queue is empty.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList

from tui.app.models.queue import TaskQueue

SHOWN_CHARS = 200  # of a prompt's first line


class QueueView(OptionList):
    BINDINGS = [
        Binding("e", "edit", "Edit"),
        Binding("delete", "remove", "Remove"),
        Binding("ctrl+up", "move(-1)", "Move up"),
        Binding("ctrl+down", "move(1)", "Move down"),
    ]

    class Edit(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Remove(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Move(Message):
        def __init__(self, index: int, by: int) -> None:
            super().__init__()
            self.index = index
            self.by = by

    def show(self, queue: TaskQueue, highlight: int | None = None) -> None:
        """Draw `queue`; keeps the highlighted row (or moves it to `highlight`)."""
        keep = self.highlighted if highlight is None else highlight
        self.clear_options()
        self.add_options([_row(number, item.text, item.sent, item.rejected)
                          for number, item in enumerate(queue.items, 1)])
        self.display = bool(queue.items)
        self.border_title = f"Queue ({len(queue.items)}) · e edit · Del remove · " \
            "Ctrl+↑/↓ move"
        if queue.items:
            self.highlighted = min(keep or 0, len(queue.items) - 1)

    def action_edit(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Edit(self.highlighted))

    def action_remove(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Remove(self.highlighted))

    def action_move(self, by: int) -> None:
        if self.highlighted is not None:
            self.post_message(self.Move(self.highlighted, by))


def _row(number: int, text: str, sent: bool, rejected: str = "") -> Text:
    lines = text.strip().splitlines() or [""]
    first = lines[0][:SHOWN_CHARS]
    more = f"  (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    row = Text(f"{number}. ", style="dim")
    if sent:
        row.append("next ", style="bold")
    elif rejected:  # the session refused it: it waits here, not there
        row.append(f"rejected ({rejected}) ", style="bold red")
    row.append(first)
    row.append(more, style="dim")
    return row
