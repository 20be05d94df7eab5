"""The one way a session asks a person: a `Responder` makes the question, puts it where it
can be answered, and waits once.

`ask` runs on the session's thread, inside the `request-input` host call. It makes ONE
`Question` (one future), opens it on the board (where the door answers it too), `offer`s it to
its side (the screen's dialog, a stdin prompt), then waits on that future once — until an
answer, the `lifecycle.input_timeout_secs` deadline or a cancel — and `settled` takes it down.
The dialog, a stdin line, an `--answer` value and the door only ever answer the question.
"""

from __future__ import annotations

from tui.core.asking.question import Question, Unanswered
from tui.core.asking.questions import QuestionBoard
from tui.core.asking.request import InputRequest
from tui.core.errors import NoAnswer, StopOnInputTimeout


class Responder:
    board: QuestionBoard | None = None  # open questions, answerable through the door too

    def ask(self, request: InputRequest) -> str:
        question = Question(request)
        board = self.board
        if board is not None:
            board.open(question, self.answered_elsewhere)
        try:
            self.offer(question)
            outcome = question.wait(request.cancel)
        finally:
            if board is not None:
                board.close(question)
        self.settled(question, outcome)
        if not isinstance(outcome, Unanswered):
            return outcome
        if outcome.why == "timed out":
            raise StopOnInputTimeout(f"no answer within {request.timeout_secs:g} s")
        if outcome.why == "canceled":
            raise NoAnswer("the session was canceled")
        raise NoAnswer(f"the question was closed: {outcome.detail}")

    def offer(self, question: Question) -> None:
        """Put the question before the person; it returns at once (the answer comes through
        `question.answer`). NoAnswer when no answer can come."""
        raise NoAnswer("this session has no way to ask the human")

    def settled(self, question: Question, outcome: str | Unanswered) -> None:
        """The wait is over: take the question down (it may raise a NoAnswer of its own)."""

    def answered_elsewhere(self, question: Question) -> None:
        """The door answered first (called on the door's thread)."""
