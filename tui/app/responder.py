"""The screen's InputResponder: `request-input` questions become dialogs.

`ask` runs on the session's thread: it hands the question to the app (which queues it, rings
the bell and opens the dialog) and waits on a Future — until the answer, the
`lifecycle.input_timeout_secs` deadline, a cancel, or the app closing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from tui.core.asking.request import InputRequest
from tui.core.errors import NoAnswer, StopOnInputTimeout

if TYPE_CHECKING:
    from tui.core.asking.questions import OpenQuestion, QuestionBoard


@dataclass(eq=False)
class Question:
    request: InputRequest
    asked_at: float = field(default_factory=time.monotonic)
    future: Future[str] = field(default_factory=Future)

    @property
    def deadline(self) -> float | None:
        timeout = self.request.timeout_secs
        return self.asked_at + timeout if timeout is not None else None


class QuestionDesk(Protocol):
    """The app side: called on the app's thread."""

    def question_arrived(self, question: Question) -> None: ...

    def question_withdrawn(self, question: Question) -> None: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any
                         ) -> Any: ...


class ScreenResponder:
    def __init__(self, desk: QuestionDesk) -> None:
        self.desk = desk
        self._board: QuestionBoard | None = None
        self._elsewhere: Callable[[Question], None] | None = None

    def serve(self, board: QuestionBoard, answered_elsewhere: Callable[[Question], None]
              ) -> None:
        """Register every question asked from now on with `board` (the door answers it too;
        the first answer wins); `answered_elsewhere` runs on the app's thread when the door's
        answer came first."""
        self._board, self._elsewhere = board, answered_elsewhere

    def ask(self, request: InputRequest) -> str:
        question = Question(request)
        board = self._board
        opened = board.open(request, lambda text: self._taken(question, text)) \
            if board is not None else None
        try:
            return self._wait(question, opened)
        finally:
            if board is not None and opened is not None:
                board.close(opened)

    def _taken(self, question: Question, text: str) -> None:
        """The door answered first (on the door's thread): the wait returns its answer and the
        dialog closes with a note."""
        with contextlib.suppress(Exception):  # InvalidStateError: the screen's answer came
            question.future.set_result(text)
        if self._elsewhere is not None:
            with contextlib.suppress(RuntimeError):  # the app has already gone
                self.desk.call_from_thread(self._elsewhere, question)

    def _wait(self, question: Question, opened: OpenQuestion | None) -> str:
        request = question.request
        try:
            self.desk.call_from_thread(self.desk.question_arrived, question)
        except RuntimeError:
            raise NoAnswer("the screen is not running") from None
        while True:
            wait = 0.1
            if question.deadline is not None:
                wait = max(0.0, min(wait, question.deadline - time.monotonic()))
            try:
                answer = question.future.result(timeout=wait)
            except FutureTimeout:
                answer = None
            except Exception as exc:  # the app closed the question (it is quitting)
                raise NoAnswer(f"the question was closed: {exc}") from None
            if answer is not None:
                if opened is None or opened.take(answer):
                    return answer
                return opened.answer.result()  # the door's answer was taken first
            if request.cancel is not None and request.cancel.is_set():
                self._withdraw(question)
                raise NoAnswer("the session was canceled")
            if question.deadline is not None and time.monotonic() >= question.deadline:
                self._withdraw(question)
                raise StopOnInputTimeout(f"no answer within {request.timeout_secs:g} s")

    def _withdraw(self, question: Question) -> None:
        with contextlib.suppress(RuntimeError):  # the app has already gone
            self.desk.call_from_thread(self.desk.question_withdrawn, question)
