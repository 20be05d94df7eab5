"""A yes/no question from the app itself (quitting while a session runs)."""

from __future__ import annotations

from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    CSS_PATH = "confirm.tcss"
    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str, enter: Literal["yes", "no"] = "no") -> None:
        """`enter`: the answer Enter gives (its button has the focus first)."""
        super().__init__()
        self.question = question
        self.enter = enter

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, markup=False)
            with Horizontal():
                yield Button("No", id="no")
                yield Button("Yes", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one(f"#{self.enter}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
