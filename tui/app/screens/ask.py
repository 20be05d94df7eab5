"""The request-input dialog: a tool's question, and the answer going back to it.

Enter sends, Shift+Enter (or Ctrl+J) adds a line. Keys pressed in the first half second after
it opens are ignored, so type-ahead meant for the main screen cannot answer by accident. Esc
hides the dialog without dropping the question; `a` on the main screen brings it back.
"""

from __future__ import annotations

import time

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static, TextArea

from tui.app.screens.fit import fit_question
from tui.core.asking.question import Question

ARMING_SECONDS = 0.5
COMPACT_BELOW = 30  # rows: a shorter terminal gets the dialog's tighter spacing
QUESTION_ROWS = 20  # at most, on a tall terminal


class AnswerArea(TextArea):
    """A multi-line answer field: Enter submits, Shift+Enter / Ctrl+J add a new line."""

    async def _on_key(self, event: events.Key) -> None:
        screen = self.screen
        if isinstance(screen, AskScreen) and not screen.armed:
            event.prevent_default()
            event.stop()
            return
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            if isinstance(screen, AskScreen):
                screen.submit()
            return
        if event.key in ("shift+enter", "ctrl+j"):
            event.prevent_default()
            event.stop()
            self.insert("\n")
            return
        await super()._on_key(event)


class AskScreen(ModalScreen[str | None]):
    CSS_PATH = "ask.tcss"
    BINDINGS = [Binding("escape", "hide", "Hide (keeps the question)")]
    arming_seconds = ARMING_SECONDS

    def __init__(self, question: Question, waiting: int) -> None:
        super().__init__()
        self.question = question
        self.waiting = waiting
        self.opened: float | None = None  # on screen since (the guard waits for that)
        self.answer = AnswerArea(id="answer", soft_wrap=True, show_line_numbers=False)
        self.waiting_line = Static("", id="waiting")
        self.countdown = Static("", id="countdown")

    @property
    def armed(self) -> bool:
        opened = self.opened
        return opened is not None and time.monotonic() - opened >= self.arming_seconds

    def compose(self) -> ComposeResult:
        with Vertical():
            request = self.question.request
            again = " (asked before the restart)" if request.before_restart else ""
            yield Static(f"{request.tool_name} asks{again}:", id="asker", markup=False)
            with VerticalScroll(id="question-scroll"):
                yield Markdown(self.question.request.prompt, id="question")
            yield self.countdown
            self.waiting_line.update(self._waiting_text())
            yield self.waiting_line
            yield self.answer
            yield Static("Enter sends · Shift+Enter (or Ctrl+J) new line · Esc hides",
                         id="hint")

    def _waiting_text(self) -> str:
        if not self.waiting:
            return ""
        return f"{self.waiting} more question{'s' if self.waiting > 1 else ''} waiting"

    def on_mount(self) -> None:
        self.opened = time.monotonic()  # the guard runs from when the dialog is on screen
        self.answer.focus()
        self._tick()
        self.set_interval(0.25, self._tick)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < COMPACT_BELOW, "compact")
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The question gets the rows the rest of the dialog leaves (it scrolls beyond): the
        answer field, with its border, and the hint always show."""
        fit_question(self, self.query_one("#question-scroll"), QUESTION_ROWS)

    def set_waiting(self, waiting: int) -> None:
        self.waiting = waiting
        self.waiting_line.update(self._waiting_text())

    def _tick(self) -> None:
        deadline = self.question.deadline
        if deadline is None:
            return
        left = max(0.0, deadline - time.monotonic())
        self.countdown.update(f"answer within {left:.0f} s")

    def submit(self) -> None:
        if not self.armed:
            return
        self.dismiss(self.answer.text)

    def action_hide(self) -> None:
        self.dismiss(None)
