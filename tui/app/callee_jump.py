"""`g` on a formation member's screen: the member it called, opened over that member's door
(tui/app/screens/callee.py). The callee is the one of the newest `call-member` call still out,
else of the newest call made; its door is found in a thread (a running record is verified over
the network) and, when there is none to watch, a toast says why."""

from __future__ import annotations

import threading
from typing import Any

from tui.app.browser.host import AppBase
from tui.app.models.status import SessionState
from tui.app.sources import LocalSource
from tui.core.errors import MurmurTuiError


def jump_to_callee(app: AppBase[Any], state: SessionState) -> None:
    """Open the callee of `state`'s newest call on `app` (a supervisor app, whose `source`
    holds the member's seat when its session runs here)."""
    waiting_on = state.waiting_on
    member = waiting_on.callee
    if member is None:
        app.notify("This session has called no other member: g opens the member of its newest "
                   "call-member call.", timeout=6)
        return
    source = getattr(app, "source", None)
    seat = source.seat if isinstance(source, LocalSource) else None
    formation_id = waiting_on.formation_id or (seat.formation_id if seat is not None else None)

    def find() -> None:
        from tui.app.callee_screen import CalleeScreen
        from tui.core.formation.callee_door import find_callee

        try:
            door = find_callee(app.home, member, formation_id, seat)
        except MurmurTuiError as exc:
            app.call_from_thread(app.notify, f"{member} cannot be opened: {exc.text}",
                                 severity="warning", timeout=10)
            return
        app.call_from_thread(app.push_screen, CalleeScreen(app.home, door))

    try:
        threading.Thread(target=find, name=f"find callee {member}", daemon=True).start()
    except RuntimeError:  # pragma: no cover - no thread left to start
        app.notify(f"{member} cannot be opened now.", severity="warning")
