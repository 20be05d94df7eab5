"""The cancel token: set once (Esc twice, Ctrl-C, quitting); everything running stops.

It is a `threading.Event` (loops check `is_set()`, drivers `wait()` on it) that also calls back
whoever subscribed, so a blocked child process or stream is stopped at once instead of polled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class CancelToken(threading.Event):
    def __init__(self) -> None:
        super().__init__()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._guard = threading.Lock()
        self._next_key = 0

    def set(self) -> None:
        super().set()
        with self._guard:
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            callback()

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when the token is set (now, if it already is); returns an
        unsubscribe function."""
        with self._guard:
            if not self.is_set():
                key = self._next_key
                self._next_key += 1
                self._callbacks[key] = callback
                return lambda: self._drop(key)
        callback()
        return lambda: None

    def _drop(self, key: int) -> None:
        with self._guard:
            self._callbacks.pop(key, None)
