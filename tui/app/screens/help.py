"""F1: what the keys do."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# murmur-tui

The prompt has the keys: type, and it goes there. The letter keys below act **out of the
prompt** — after `Esc`, `Tab`, `F2` or a click on a pane; there a key with no action starts
the prompt with it. From the prompt: `Esc` `Esc`, `Ctrl+C`, `Ctrl+Q`, `F1`, `F2`, `Ctrl+P`.
(Letters that acted while the prompt is empty would turn the first letter of a prompt into a
command; `Alt` keys do not reach every terminal.)

| key | what it does |
|---|---|
| `i` | back to the prompt: what the session does next |
| `F2` | the queue of prompts waiting to run |
| `Esc` `Esc` | cancel the running turn (the session ends *canceled*; its files stay complete) |
| `a` | answer the waiting question (reopens the dialog you hid with `Esc`) |
| `End` | jump to the latest output and follow it again |
| `t` | in the transcript: show or hide the model's thinking |
| `o` | in the transcript: show the other members' answers whole, or folded to their first lines |
| `g` | a formation member: open the member it called (its newest call still out); `Esc` back |
| `Tab` / `Shift+Tab` | move between the transcript and the panes |
| `1` … `5` | bring the calls, shell, hook faults, background or tools pane forward, in focus |
| `x` | in the background pane: stop the highlighted work (`shell_abandoned`, reason stopped) |
| `p` | narrower than 100 columns: switch between the transcript and the panes |
| `y` | copy the task's result |
| `e` | export the transcript: every task, as Markdown, to `<session>-transcript.md` here |
| `b` | browse every conversation record (Esc comes back) |
| `Ctrl+C` | cancel the running task; again within 2 s: quit; with text selected: copy it |
| `Ctrl+P` | the command palette: every action, theme switching |
| `F1` | this help |
| `Ctrl+Q` / `q` | quit (asks first while a session runs) |

In the prompt: `Enter` sends, `Shift+Enter` (or `Ctrl+J`) adds a line, `Up` on the first
line brings back earlier prompts (`Down` goes forward again), `Esc` leaves the prompt (the text
stays; it is the first `Esc` of `Esc` `Esc`), `Tab` moves on. While a task runs, a prompt
waits in the queue below the transcript and runs after it, in order; once the session has
ended, a prompt starts a follow-up session in the same conversation. After a canceled session
the queue waits: `Enter` on an empty prompt starts it again.

In the queue (`F2`): `e` takes the selected prompt back into the prompt to change it (sent
again, it keeps its place), `Delete` removes it, `Ctrl+Up` / `Ctrl+Down` move it. The one
marked *next* is already the session's. `Esc` never clears the queue.

In the question dialog: `Enter` sends, `Shift+Enter` (or `Ctrl+J`) adds a line, `Esc`
hides the dialog without dropping the question.

In the browser (`b`): type to filter the list, `Up` / `Down` move it, `Enter` opens the
highlighted conversation, `/` (first in the filter) or `Ctrl+F` searches every record; `Tab`
moves to the list, where `r` / `R` resume a conversation (full / compacted) and `q` goes back.
In a conversation: `/` searches it, `e` exports it, `r` / `R` resume it, `Esc` goes back.

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
