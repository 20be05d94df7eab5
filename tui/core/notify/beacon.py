"""The terminal's side of the fleet's notifications: for each session that starts needing the
user, a desktop notification by the terminal's own sequence (`terminal.osc_flavour`), the bell,
and the window title `murmur-tui · 1 needs you`. A question answered elsewhere retracts
nothing already shown; the next title says so (the count drops, `all answered` at none).

The title is saved on the terminal's title stack (XTWINOPS 22/23) before the first change and
given back by `close`. Writes go through `write` (the app's driver), never to stdout.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from tui.core.notify.outbound import Notice
from tui.core.notify.terminal import BELL, clean, notification, osc_flavour, window_title

APP = "murmur-tui"
MAX_TITLE = 80  # characters of a notification's title
MAX_BODY = 200  # characters of a notification's body
SAVE_TITLE = "\x1b[22;2t"
RESTORE_TITLE = "\x1b[23;2t"


def needs_title(count: int) -> str:
    if count <= 0:
        return f"{APP} · all answered"
    return f"{APP} · {count} {'needs' if count == 1 else 'need'} you"


class Beacon:
    def __init__(self, write: Callable[[str], object], env: Mapping[str, str] | None = None,
                 enabled: bool = True) -> None:
        self.write = write
        self.enabled = enabled
        self.flavour = osc_flavour(os.environ if env is None else env)
        self.title: str | None = None  # the title set, None while the terminal's own shows
        self._saved = False

    def asked(self, notice: Notice, waiting: int) -> None:
        """`notice`'s session started needing the user; `waiting` sessions need them now."""
        if not self.enabled:
            return
        if self.flavour is not None:
            self.write(notification(self.flavour, clean(notice.headline(), MAX_TITLE),
                                    clean(notice.question, MAX_BODY)))
        self.write(BELL)
        self.waiting(waiting)

    def waiting(self, count: int) -> None:
        """How many sessions need the user now: the title follows (once one ever did)."""
        if not self.enabled or (self.title is None and count <= 0):
            return
        wanted = needs_title(count)
        if wanted == self.title:
            return
        if not self._saved:
            self.write(SAVE_TITLE)
            self._saved = True
        self.write(window_title(wanted))
        self.title = wanted

    def close(self) -> None:
        """The screen is leaving: the terminal gets its own title back."""
        if self._saved:
            self.write(window_title(APP))  # a terminal without a title stack keeps this one
            self.write(RESTORE_TITLE)
            self._saved = False
        self.title = None
