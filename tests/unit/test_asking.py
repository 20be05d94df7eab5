"""A question's answer wakes the waiting tool call itself: the asking thread sleeps once, with
no interval, and the answer (or the cancel, or the deadline) is what ends that sleep.

Every blocking wait the asking thread makes is recorded (threading.Condition.wait, which
Event.wait, Future.result and our own wait all come down to): a poll loop — waiting 0.1 s at a
time and looking again — shows up as a finite timeout and as more than one sleep."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tui.core.asking.question import Question, Unanswered
from tui.core.asking.questions import QuestionBoard
from tui.core.asking.request import InputRequest
from tui.core.cancel import CancelToken
from tui.core.errors import StopOnInputTimeout
from tui.core.headless import HeadlessResponder


class Sleeps:
    """The blocking waits made by one thread: their timeouts, and a signal once it sleeps."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.timeouts: list[float | None] = []
        self.asleep = threading.Event()


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sleeps]:
    seen = Sleeps()
    original = threading.Condition.wait

    def wait(self: threading.Condition, timeout: float | None = None) -> bool:
        if threading.current_thread() is seen.thread:
            seen.timeouts.append(timeout)
            seen.asleep.set()
        return original(self, timeout)

    monkeypatch.setattr(threading.Condition, "wait", wait)
    yield seen


def asking(sleeps: Sleeps, ask: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    got: list[Any] = []

    def run() -> None:
        try:
            got.append(ask())
        except Exception as exc:
            got.append(exc)

    thread = threading.Thread(target=run, name="asking")
    sleeps.thread = thread
    thread.start()
    assert sleeps.asleep.wait(30), "the asking thread never went to sleep"
    return thread, got


def test_the_doors_answer_wakes_the_waiting_call_which_slept_once_without_an_interval(
        sleeps: Sleeps) -> None:
    board = QuestionBoard()
    board.door_only = True  # a served headless session: the door answers
    responder = HeadlessResponder([], stdin=io.StringIO(""), err=io.StringIO(), board=board)
    request = InputRequest("req_1", "Which branch?", "ask-user", timeout_secs=None,
                           cancel=CancelToken())
    thread, got = asking(sleeps, lambda: responder.ask(request))
    assert board.answer("req_1", "main")  # as the door does, on its own thread
    thread.join(30)
    assert got == ["main"]
    assert sleeps.timeouts == [None]  # one sleep, unbounded: the answer alone ended it


def test_a_far_deadline_bounds_the_one_sleep_and_does_not_turn_it_into_a_poll(
        sleeps: Sleeps) -> None:
    question = Question(InputRequest("req_2", "q?", "t", timeout_secs=3600))
    thread, got = asking(sleeps, question.wait)
    assert question.answer("yes")
    thread.join(30)
    assert got == ["yes"]
    assert len(sleeps.timeouts) == 1
    left = sleeps.timeouts[0]
    assert left is not None and left > 3000  # the deadline's own distance, not an interval


def test_a_cancel_wakes_the_waiting_call_through_the_tokens_callback(sleeps: Sleeps) -> None:
    token = CancelToken()
    question = Question(InputRequest("req_3", "q?", "t", cancel=token))
    thread, got = asking(sleeps, lambda: question.wait(token))
    token.set()
    thread.join(30)
    assert got == [Unanswered("canceled")]
    assert sleeps.timeouts == [None]
    assert not question.answer("late")  # settled: a later answer is refused


def test_the_deadline_ends_the_one_sleep_and_a_later_answer_is_refused(
        sleeps: Sleeps) -> None:
    board = QuestionBoard()
    board.door_only = True
    responder = HeadlessResponder([], stdin=io.StringIO(""), err=io.StringIO(), board=board)
    thread, got = asking(sleeps, lambda: responder.ask(
        InputRequest("req_4", "q?", "t", timeout_secs=0.05)))
    thread.join(30)
    assert len(got) == 1 and isinstance(got[0], StopOnInputTimeout)
    assert len(sleeps.timeouts) == 1  # woken by its deadline once, not by an interval
    assert not board.answer("req_4", "too late")  # off the board: nothing to answer


def test_the_first_answer_wins_and_the_other_side_is_told() -> None:
    board = QuestionBoard()
    question = Question(InputRequest("req_5", "q?", "t"))
    told: list[Question] = []
    board.open(question, told.append)
    assert question.answer("from the dialog")
    assert not board.answer("req_5", "from the door")
    assert told == [] and question.wait() == "from the dialog"
    other = Question(InputRequest("req_6", "q?", "t"))
    board.open(other, told.append)
    assert board.answer("req_6", "from the door")
    assert told == [other] and not other.answer("from the dialog")
    assert other.wait() == "from the door"


def test_a_formation_entrys_question_waits_for_the_door_when_stdin_ends(
        sleeps: Sleeps) -> None:
    """The person at `launch --roster` answers on stdin; stdin at its end (a launcher run in
    the background) leaves the question to the door — the fleet — instead of failing it."""
    board = QuestionBoard()  # door_only stays False: stdin answers too
    err = io.StringIO()
    responder = HeadlessResponder([], stdin=io.StringIO(""), err=err, board=board)
    responder.door_after_stdin = True
    request = InputRequest("req_9", "Which branch?", "ask-user", timeout_secs=None,
                           cancel=CancelToken())
    thread, got = asking(sleeps, lambda: responder.ask(request))
    assert board.answer("req_9", "main")  # the door, after stdin ended
    thread.join(30)
    assert got == ["main"]
    assert "(stdin ended: waiting for an answer through the door)" in err.getvalue()
    assert board.door_only  # and the next question waits for the door alone
