"""The open questions of a session, answerable from more than one place.

A responder (the screen's dialog, the headless stdin reader) registers each question it asks
here with `open`; anyone else holding the board — the A2A door — can `answer` it by its
request id. The first answer wins: the responder's own wait returns it, and `on_taken` tells the
other side that it was answered elsewhere (the dialog closes, the stdin prompt says so).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from tui.core.asking.request import InputRequest


@dataclass(eq=False)
class OpenQuestion:
    request: InputRequest
    answer: Future[str] = field(default_factory=Future)
    on_taken: Callable[[str], None] | None = None  # called when answered from elsewhere

    def take(self, text: str) -> bool:
        """Answer it; False when it had been answered (or closed) already."""
        try:
            self.answer.set_result(text)
        except Exception:  # InvalidStateError: first answer wins
            return False
        return True


class QuestionBoard:
    def __init__(self) -> None:
        self._open: dict[str, OpenQuestion] = {}
        self._lock = threading.Lock()
        self.door_only = False  # a served headless session: questions wait for the door

    def open(self, request: InputRequest, on_taken: Callable[[str], None] | None = None
             ) -> OpenQuestion:
        question = OpenQuestion(request, on_taken=on_taken)
        with self._lock:
            self._open[request.request_id] = question
        return question

    def close(self, question: OpenQuestion) -> None:
        with self._lock:
            if self._open.get(question.request.request_id) is question:
                del self._open[question.request.request_id]
        if not question.answer.done():
            question.answer.cancel()

    def answer(self, request_id: str, text: str) -> bool:
        """Answer an open question from elsewhere; False when none is open under that id or
        it was answered first by its own side."""
        with self._lock:
            question = self._open.get(request_id)
        if question is None or not question.take(text):
            return False
        if question.on_taken is not None:
            question.on_taken(text)
        return True

    def pending(self) -> list[InputRequest]:
        with self._lock:
            return [q.request for q in self._open.values()]
