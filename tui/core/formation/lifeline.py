"""A member's lifeline (spec murmur-newest §7.4): the read end of a pipe only the launcher
writes — and it never writes. End of file means the formation ended: the launcher closed it, or
died (SIGKILL and OOM included: the kernel closes a dead process's pipes).

On end of file the member says so first (`FormationEnded`, trace `formation_ended`), then winds
down as a first SIGTERM winds it down — the running task canceled, queued ones refused, the
session's files finished with `session_end.exit_status: formation_ended` — and if it has not
ended `within` seconds (20) it stops at once and exits 143.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

WIND_DOWN_WITHIN = 20.0  # seconds from the lifeline's end to the forced exit
EXIT_TERMINATED = 143  # 128 + SIGTERM: how a member the formation ended exits


def watch(fd: int, on_end: Callable[[], None]) -> threading.Thread:
    """A daemon thread that blocks on `fd` until its end of file, then calls `on_end`."""

    def run() -> None:
        try:
            while os.read(fd, 1024):
                pass  # the launcher writes nothing; bytes, if any, are not a message
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)
        on_end()

    thread = threading.Thread(target=run, name="formation-lifeline", daemon=True)
    thread.start()
    return thread


@dataclass
class WindDown:
    """What a member does when its formation ends, each step handed in by the command that
    runs the session: `tell` the event, `mark` the session's exit status, `cancel` as a first
    SIGTERM does; `force` (finish the files where they are, stop what runs, exit 143) if the
    session has not ended `within` seconds later."""

    tell: Callable[[], None]
    mark: Callable[[], None]
    cancel: Callable[[], None]
    force: Callable[[], None]
    within: float = WIND_DOWN_WITHIN
    ended: threading.Event = field(default_factory=threading.Event)
    _timer: threading.Timer | None = None

    def __call__(self) -> None:
        if self.ended.is_set():
            return
        self.ended.set()
        self.mark()
        timer = self._timer = threading.Timer(self.within, self.force)
        timer.daemon = True
        timer.start()  # first: whatever telling does, the member is gone within `within`
        try:
            self.tell()  # may find its output gone with a SIGKILLed launcher (a broken pipe)
        except Exception:  # the wind-down goes on whatever the telling met
            pass
        finally:
            self.cancel()

    def done(self) -> None:
        """The session ended by itself: no forced exit."""
        if self._timer is not None:
            self._timer.cancel()
