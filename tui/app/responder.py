"""The screen's responder: `request-input` questions become dialogs.

`ask` (asking.responder.Responder) runs on the session's thread and waits once on the
question's future; here the question is handed to the app (which queues it, rings the bell and
opens the dialog), and the dialog answers it — or the door does, and the dialog closes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Protocol

from tui.core.asking.question import Question, Unanswered
from tui.core.asking.questions import QuestionBoard
from tui.core.asking.responder import Responder
from tui.core.errors import NoAnswer


class QuestionDesk(Protocol):
    """The app side: called on the app's thread."""

    def question_arrived(self, question: Question) -> None: ...

    def question_withdrawn(self, question: Question) -> None: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any
                         ) -> Any: ...


class ScreenResponder(Responder):
    def __init__(self, desk: QuestionDesk) -> None:
        self.desk = desk
        self._elsewhere: Callable[[Question], None] | None = None

    def serve(self, board: QuestionBoard, answered_elsewhere: Callable[[Question], None]
              ) -> None:
        """Put every question asked from now on on `board` (the door answers it too; the
        first answer wins); `answered_elsewhere` runs on the app's thread when the door's
        answer came first."""
        self.board, self._elsewhere = board, answered_elsewhere

    def offer(self, question: Question) -> None:
        try:
            self.desk.call_from_thread(self.desk.question_arrived, question)
        except RuntimeError:
            raise NoAnswer("the screen is not running") from None

    def settled(self, question: Question, outcome: str | Unanswered) -> None:
        if isinstance(outcome, Unanswered) and outcome.why != "closed":
            with contextlib.suppress(RuntimeError):  # the app has already gone
                self.desk.call_from_thread(self.desk.question_withdrawn, question)

    def answered_elsewhere(self, question: Question) -> None:
        """The dialog closes with a note (on the app's thread)."""
        if self._elsewhere is not None:
            with contextlib.suppress(RuntimeError):  # the app has already gone
                self.desk.call_from_thread(self._elsewhere, question)
