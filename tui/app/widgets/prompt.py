"""The prompt at the bottom of the supervisor screen: what you type for the session to do next.

A multi-line field. Enter sends (an empty prompt is not sent), Shift+Enter — or Ctrl+J, for
terminals that do not report Shift+Enter — starts a new line, and Up on the first line brings
back earlier prompts (Down on the last line goes forward again, to what you were typing).
Pasted text goes in whole, newlines and all. Esc leaves the prompt (what you typed stays) and
counts as the first Esc of Esc Esc.

In the prompt every printable key is text: the screen's single-letter keys (`q`, `a`, `y`, `b`,
`p`, `i`, `1`–`5`) act only out of it, and the footer does not offer them while you type
(docs/screen.md, "Keys and the prompt").
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

HISTORY = 200  # prompts kept for Up
# the screen's and the app's printable keys: text here. Their bindings on the prompt never
# run (the field takes a printable key before any binding is looked at): they only hide those
# keys' actions from the footer while the prompt has the keys
LETTER_KEYS = ("a", "b", "e", "g", "i", "p", "q", "y", "F", "1", "2", "3", "4", "5")


class PromptArea(TextArea):
    BINDINGS = [Binding(key, "typed", show=False) for key in LETTER_KEYS]

    class Sent(Message):
        """A prompt was sent (Enter)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Left(Message):
        """Esc in the prompt: the keys go back to the screen."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.sent_prompts: list[str] = []
        self._recall: int | None = None  # the history index shown, None: your own text
        self._draft = ""  # what was typed before Up started recalling

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            self.send()
            return
        if event.key == "escape":  # leave the prompt (its text stays); Esc goes on to the app
            self.post_message(self.Left())
        if event.key in ("shift+enter", "ctrl+j"):
            event.prevent_default()
            event.stop()
            self.insert("\n")
            return
        await super()._on_key(event)

    def send(self) -> None:
        text = self.text
        if not text.strip():  # nothing to send (the app may start a queue left waiting)
            self.post_message(self.Sent(""))
            return
        self.remember(text)
        self.load_text("")
        self.post_message(self.Sent(text))

    def remember(self, text: str) -> None:
        if not self.sent_prompts or self.sent_prompts[-1] != text:
            self.sent_prompts.append(text)
            del self.sent_prompts[:-HISTORY]
        self._recall = None
        self._draft = ""

    def take_back(self, text: str) -> None:
        """Put `text` in the field to be changed and sent again (a queued prompt)."""
        self.load_text(text)
        self._recall = None
        self.move_cursor(self.document.end)
        self.focus()

    def action_cursor_up(self, select: bool = False) -> None:
        if select or not self.cursor_at_first_line or not self.sent_prompts:
            super().action_cursor_up(select)
            return
        if self._recall is None:
            self._draft = self.text
            self._recall = len(self.sent_prompts) - 1
        elif self._recall > 0:
            self._recall -= 1
        else:
            return
        self._show(self.sent_prompts[self._recall])

    def action_cursor_down(self, select: bool = False) -> None:
        if select or self._recall is None or not self.cursor_at_last_line:
            super().action_cursor_down(select)
            return
        if self._recall < len(self.sent_prompts) - 1:
            self._recall += 1
            self._show(self.sent_prompts[self._recall])
        else:
            self._recall = None
            self._show(self._draft)

    def _show(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)
