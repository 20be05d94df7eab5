"""The tasks waiting for a session (spec §1.7 lifecycle): what the operator sends while a task
runs, or while the session sleeps between tasks, taken in order — a running task is never
preempted. `lifecycle.queue_depth` bounds what may wait; one sent beyond it is refused."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from tui.core.cancel import CancelToken


@dataclass(frozen=True)
class Pending:
    """A task sent to the session: its text, and where it came from (trace `task_start`
    `source` and `origin`, as Murmur names them)."""

    text: str
    source: str = "a2a"  # a2a | task_md
    origin: str = "user"


class Inbox:
    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._waiting: deque[Pending] = deque()
        self._ready = threading.Condition()
        self.closed = False  # nothing more will be sent (stdin ended, the screen closed)

    def send(self, task: Pending) -> bool:
        """Queue `task`; False when the queue is full or closed (the task is refused)."""
        with self._ready:
            if self.closed or len(self._waiting) >= self.depth:
                return False
            self._waiting.append(task)
            self._ready.notify_all()
            return True

    def close(self) -> None:
        with self._ready:
            self.closed = True
            self._ready.notify_all()

    def pending(self) -> tuple[Pending, ...]:
        with self._ready:
            return tuple(self._waiting)

    def take(self, wait: bool, cancel: CancelToken) -> Pending | None:
        """The next task; with `wait`, blocks until one is sent, the inbox is closed or the
        session is canceled (None)."""
        with self._ready:
            while True:
                if self._waiting:
                    return self._waiting.popleft()
                if not wait or self.closed or cancel.is_set():
                    return None
                self._ready.wait(0.1)

    def drain(self) -> tuple[Pending, ...]:
        """Whatever still waits, taken out (the session ended before it ran)."""
        with self._ready:
            left = tuple(self._waiting)
            self._waiting.clear()
            return left
