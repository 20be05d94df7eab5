"""F1: what the keys do."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# murmur-tui

| key | what it does |
|---|---|
| `Esc` `Esc` | cancel the running turn (the session ends *canceled*; its files stay complete) |
| `a` | answer the waiting question (reopens the dialog you hid with `Esc`) |
| `End` | jump to the latest output and follow it again |
| `Tab` / `Shift+Tab` | move between the transcript and the panes |
| `1` `2` `3` | show the tool calls, shell or hook faults pane |
| `y` | copy the task's result |
| `b` | browse every conversation record (Esc comes back) |
| `Ctrl+C` | copy the selected text (select with the mouse) |
| `Ctrl+P` | the command palette: every action, theme switching |
| `F1` | this help |
| `q` | quit (asks first while a session runs) |

In the question dialog: `Enter` sends, `Shift+Enter` (or `Ctrl+J`) adds a line, `Esc`
hides the dialog without dropping the question.

The transcript keeps the latest turns on screen; scroll to the top to bring back earlier
ones. Everything the session did is in its `trace.jsonl` and the conversation record.
"""


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,f1,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)

    def action_close(self) -> None:
        self.dismiss(None)
