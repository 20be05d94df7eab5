"""The open questions of a session, answerable from more than one place.

A responder (the screen's dialog, the headless stdin reader) puts each question it asks on the
board with `open`; anyone else holding the board — the A2A door — can `answer` it by its
request id. The question is the same object either way, with its one future: the first answer
wins, the waiting tool call wakes from it, and `on_taken` tells the responder's side that it
was answered elsewhere (the dialog closes, the stdin prompt says so).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from tui.core.asking.question import Question
from tui.core.asking.request import InputRequest

OnTaken = Callable[[Question], None]  # called, on the answering thread, when answered elsewhere


class QuestionBoard:
    def __init__(self) -> None:
        self._open: dict[str, tuple[Question, OnTaken | None]] = {}
        self._lock = threading.Lock()
        self.door_only = False  # a served headless session: questions wait for the door

    def open(self, question: Question, on_taken: OnTaken | None = None) -> None:
        with self._lock:
            self._open[question.request.request_id] = (question, on_taken)

    def close(self, question: Question) -> None:
        with self._lock:
            found = self._open.get(question.request.request_id)
            if found is not None and found[0] is question:
                del self._open[question.request.request_id]

    def answer(self, request_id: str, text: str) -> bool:
        """Answer an open question from elsewhere; False when none is open under that id or
        it was answered first by its own side."""
        with self._lock:
            found = self._open.get(request_id)
        if found is None or not found[0].answer(text):
            return False
        question, on_taken = found
        if on_taken is not None:
            on_taken(question)
        return True

    def pending(self) -> list[InputRequest]:
        with self._lock:
            return [question.request for question, _ in self._open.values()]
