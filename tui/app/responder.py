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
from typing import Any, Protocol

from tui.core.asking import InputRequest, InputTimeout, NoAnswer


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

    def ask(self, request: InputRequest) -> str:
        question = Question(request)
        try:
            self.desk.call_from_thread(self.desk.question_arrived, question)
        except RuntimeError:
            raise NoAnswer("the screen is not running") from None
        while True:
            wait = 0.1
            if question.deadline is not None:
                wait = max(0.0, min(wait, question.deadline - time.monotonic()))
            try:
                return question.future.result(timeout=wait)
            except FutureTimeout:
                pass
            except Exception as exc:  # the app closed the question (it is quitting)
                raise NoAnswer(f"the question was closed: {exc}") from None
            if request.cancel is not None and request.cancel.is_set():
                self._withdraw(question)
                raise NoAnswer("the session was canceled")
            if question.deadline is not None and time.monotonic() >= question.deadline:
                self._withdraw(question)
                raise InputTimeout(f"no answer within {request.timeout_secs:g} s")

    def _withdraw(self, question: Question) -> None:
        with contextlib.suppress(RuntimeError):  # the app has already gone
            self.desk.call_from_thread(self.desk.question_withdrawn, question)
