"""One thing a person is asked, and the one future its answer settles.

An `Asked` holds a single `concurrent.futures.Future`. Whoever can answer — the screen's
dialog, a stdin line or an `--answer` value, the door, the approval dialog — calls `answer`;
the first answer wins and every later one is refused (False). `close` settles it with no answer
(the screen quit, the remote question was withdrawn, stdin ended).

The one who asked waits ONCE (`wait`): the thread sleeps until something wakes it — the answer
(the future's callback), a cancel (the cancel token's callback cancels the future), the
deadline (the sleep's own bound) or the deadline being moved. Nothing is polled: no interval
wakes the waiting thread to look.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, Self, TypeVar

from tui.core.asking.request import InputRequest
from tui.core.cancel import CancelToken

if TYPE_CHECKING:  # loaded with the first question: the headless stack starts without it
    from concurrent.futures import Future

T = TypeVar("T")
Why = Literal["canceled", "timed out", "closed"]


@dataclass(frozen=True)
class Unanswered:
    """Why a wait ended with no answer; `detail` is what closed it (for "closed")."""

    why: Why
    detail: str = ""


class Asked(Generic[T]):
    def __init__(self) -> None:
        from concurrent.futures import Future

        self.future: Future[T] = Future()
        self._wake = threading.Condition()  # what the one wait sleeps on
        self.future.add_done_callback(self._rouse)

    def answer(self, value: T) -> bool:
        """Answer it; False when it was settled already (the first answer wins)."""
        from concurrent.futures import InvalidStateError

        try:
            self.future.set_result(value)
        except InvalidStateError:
            return False
        return True

    def close(self, why: str) -> bool:
        """Settle it with no answer; False when it was settled already."""
        from concurrent.futures import InvalidStateError

        try:
            self.future.set_exception(RuntimeError(why))
        except InvalidStateError:
            return False
        return True

    @property
    def done(self) -> bool:
        return self.future.done()

    @property
    def answered(self) -> bool:
        return self.future.done() and not self.future.cancelled() and \
            self.future.exception() is None

    @property
    def deadline(self) -> float | None:
        """When the wait gives up (`time.monotonic()`); None: never."""
        return None

    def when_settled(self, callback: Callable[[Self], None]) -> None:
        """Call `callback` once it is settled (now, if it is), on the settling thread."""
        self.future.add_done_callback(lambda _: callback(self))

    def _rouse(self, _: object = None) -> None:
        """Wake the waiting thread: settled, or the deadline moved."""
        with self._wake:
            self._wake.notify_all()

    def _cancel(self) -> None:
        """The cancel token's callback (on the canceling thread): the wait ends, unless an
        answer came first."""
        self.future.cancel()

    def wait(self, cancel: CancelToken | None = None) -> T | Unanswered:
        """The answer, or why none came: the thread sleeps until the answer, the deadline, a
        cancel or a close wakes it — each of them, not an interval."""
        from concurrent.futures import CancelledError

        unsubscribe = cancel.subscribe(self._cancel) if cancel is not None else None
        try:
            with self._wake:
                while not self.future.done():
                    deadline = self.deadline
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        if self.future.cancel():  # nothing settled it since: none counts now
                            return Unanswered("timed out")
                        break  # settled in the same instant: that stands
                    self._wake.wait(left)
            return self.future.result(0)
        except CancelledError:  # only the cancel token cancels a pending future
            return Unanswered("canceled")
        except Exception as exc:  # closed: the screen quit, it was withdrawn, stdin ended
            return Unanswered("closed", str(exc))
        finally:
            if unsubscribe is not None:
                unsubscribe()


class Question(Asked[str]):
    """A `request-input` question: what is asked, since when, and its one answer."""

    def __init__(self, request: InputRequest) -> None:
        super().__init__()
        self.request = request
        self._asked_at = time.monotonic()

    @property
    def asked_at(self) -> float:
        return self._asked_at

    @asked_at.setter
    def asked_at(self, value: float) -> None:
        self._asked_at = value
        self._rouse()  # the waiting thread takes the new deadline

    @property
    def deadline(self) -> float | None:
        timeout = self.request.timeout_secs
        return self._asked_at + timeout if timeout is not None else None
