"""The tasks waiting for a session (spec §1.7 lifecycle): what the operator sends while a task
runs, or while the session sleeps between tasks, taken in order — a running task is never
preempted. `lifecycle.queue_depth` bounds what may wait; one sent beyond it is refused.

`TaskCancel` is what cancels one task and no other: the running task's token, set when the
session's own cancel is set (everything stops) or when that one task is canceled by its id (the
door's `CancelTask`); the next task begins with it clear."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from tui.core.cancel import CancelToken
from tui.core.events.kinds import TaskOrigin, TaskSource, TaskVia


@dataclass(frozen=True)
class Pending:
    """A task sent to the session: its text, and where it came from (trace `task_start`
    `source` and `origin`, as Murmur names them)."""

    text: str
    source: TaskSource = "a2a"
    origin: TaskOrigin = "user"
    task_id: str | None = None  # the id it runs under (the door's); None: one is minted
    context_id: str | None = None  # the sender's context (the door's contextId), else the session's
    via: TaskVia | None = None  # typed on the supervisor's prompt: at once, or queued
    caller_member: str | None = None  # sent by this formation member (its mft1. token)


class Inbox:
    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._waiting: deque[Pending] = deque()
        self._ready = threading.Condition()
        self.closed = False  # nothing more will be sent (stdin ended, the screen closed)
        self._ended = False  # the session takes no task at all any more
        self.expecting: Callable[[], bool] = lambda: False  # more will come (background work)

    def send(self, task: Pending, lane: str = "user") -> bool:
        """Queue `task`; False when the queue is full or closed (the task is refused). A
        task in the `bg` lane (a completion the session sent itself) is taken while the
        session still takes tasks, whatever `queue_depth` says."""
        with self._ready:
            if lane == "bg" and not self._ended:
                self._waiting.append(task)
                self._ready.notify_all()
                return True
            if self.closed or len(self._waiting) >= self.depth:
                return False
            self._waiting.append(task)
            self._ready.notify_all()
            return True

    @property
    def ended(self) -> bool:
        """The session takes no task at all any more (what waited was drained)."""
        return self._ended

    def close(self) -> None:
        with self._ready:
            self.closed = True
            self._ready.notify_all()

    def pending(self) -> tuple[Pending, ...]:
        with self._ready:
            return tuple(self._waiting)

    def wake(self) -> None:
        """Something `take` waits on changed besides a send or a close (the session was
        canceled, background work ended): a waiting `take` looks again."""
        with self._ready:
            self._ready.notify_all()

    def take(self, wait: bool, cancel: CancelToken) -> Pending | None:
        """The next task; with `wait`, blocks until one is sent, the inbox is closed (and no
        background work is still expected to send one) or the session is canceled (None).
        Each of those wakes the wait: nothing is polled."""
        unsubscribe = cancel.subscribe(self.wake) if wait else None
        try:
            with self._ready:
                while True:
                    if self._waiting:
                        return self._waiting.popleft()
                    if not wait or cancel.is_set() or (self.closed and not self.expecting()):
                        return None
                    self._ready.wait()
        finally:
            if unsubscribe is not None:
                unsubscribe()

    def remove(self, task_id: str) -> Pending | None:
        """Take the waiting task sent under `task_id` out (it will not run); None when no task
        waits under that id (it started already, or never came)."""
        with self._ready:
            for task in self._waiting:
                if task.task_id == task_id:
                    self._waiting.remove(task)
                    return task
            return None

    def drain(self) -> tuple[Pending, ...]:
        """Whatever still waits, taken out (the session ended before it ran); nothing is
        taken after this."""
        with self._ready:
            self._ended = True
            left = tuple(self._waiting)
            self._waiting.clear()
            return left


class TaskCancel(CancelToken):
    """The running task's cancel token: everything a task runs with (turns, tool calls, a
    question's wait, a script's run) stops when it is set. It is set when `session` is (the
    session's cancel ends everything) or by `cancel_task` naming the running task; `begin` for
    the next task clears a cancel aimed at the one before. A cancel naming a task that has not
    begun yet is kept, and that task is canceled as it begins."""

    def __init__(self, session: CancelToken) -> None:
        super().__init__()
        self.session = session
        self.task_id: str | None = None
        self._scope = threading.Lock()
        self._ahead: set[str] = set()  # canceled before they began
        session.subscribe(self.set)

    def begin(self, task_id: str) -> None:
        with self._scope:
            self.task_id = task_id
            canceled = task_id in self._ahead
            self._ahead.discard(task_id)
            if not self.session.is_set() and not canceled:
                self.clear()
        if canceled:
            self.set()

    def end(self) -> None:
        with self._scope:
            self.task_id = None

    def cancel_task(self, task_id: str) -> bool:
        """Cancel the task `task_id`: now when it runs (True), else as it begins (False)."""
        with self._scope:
            if self.task_id != task_id:
                self._ahead.add(task_id)
                return False
            self.set()  # under the scope: no next task can begin between the check and this
            return True
