"""`g` on a formation member's screen: the session of the member it called, watched over that
session's door as `attach` watches one — its transcript as its own screen draws it (its tasks,
turns, calls and questions, from the door's events) and its status bar — over the member's
screen, which goes on underneath. Esc (or `q`, or `g` again) comes back; leaving lets the
callee run on. To answer the callee's question or cancel its task, `murmur-tui attach` it (the
header names its session) or use the fleet.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.app.fleet.links import Link, LinkState
from tui.app.keys import CTRL_C_WINDOW, KeyPairs
from tui.app.models.status import SessionState
from tui.app.widgets.transcript import Transcript
from tui.core.events import vocabulary as ev
from tui.core.formation.callee_door import CalleeDoor


class WatchedState(SessionState):
    """The callee's status: nothing is typed to it here (no prompt on this screen)."""

    @property
    def status(self) -> str:
        return "waiting for its next task" if self.kind == "waiting" else super().status


class CalleeScreen(Screen[None]):
    DEFAULT_CSS = """
    CalleeScreen #callee-header { height: 1; padding: 0 1; background: $panel; }
    CalleeScreen #callee-transcript { height: 1fr; }
    CalleeScreen #callee-status { height: 1; padding: 0 1; background: $boost; }
    """
    BINDINGS = [Binding("escape,q,g", "back", "Back to the member"),
                # the member's keys would act on the member underneath, not on this callee
                Binding("a,y", "say_watched", show=False)]
    AUTO_FOCUS = "#callee-transcript"

    def __init__(self, home: Path, door: CalleeDoor) -> None:
        super().__init__()
        self.door = door
        self.state = WatchedState(session_clock=True)  # its clocks: the session's own stamps
        self.header = Static(self._title(), id="callee-header", markup=False)
        self.transcript = Transcript(id="callee-transcript")
        self.status = Static("connecting…", id="callee-status", markup=False)
        self.link_state = "connecting"
        self.link = Link(home, door.session_id, door.url, door.record, self._arrived,
                         token=door.token)

    def _title(self) -> str:
        session = f" · {self.door.session_id}" if self.door.session_id else ""
        return f"{self.door.member}{session} · {self.door.url}"

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.transcript
        yield self.status
        yield Footer()

    def on_mount(self) -> None:
        self.link.start()
        self.set_interval(1.0, self.refresh_status)

    def _arrived(self, _: str, item: list[ev.Event] | LinkState) -> None:
        """On the link's thread: to the screen, on the app's."""
        with contextlib.suppress(RuntimeError):  # the app has gone
            self.app.call_from_thread(self._take, item)

    def _take(self, item: list[ev.Event] | LinkState) -> None:
        if isinstance(item, LinkState):
            self.link_state = item.state
            if item.state == "gone":
                self.notify(f"{self.door.member}: {item.why}", severity="error", timeout=15)
        else:
            for event in item:
                self.state.apply(event)
                if isinstance(event, ev.SessionStarted) and event.session_id:
                    self.door = CalleeDoor(self.door.member, event.session_id, self.door.url,
                                           self.door.record, self.door.token)
                    self.header.update(self._title())
                self.transcript.take(event)
            self.transcript.flush()
        self.refresh_status()

    def refresh_status(self) -> None:
        if self.link_state in ("connecting", "gone") and not self.state.session_id:
            self.status.update(self.link_state)
            return
        line = self.state.line(self.status.size.width or None)
        link = "" if self.link_state == "live" else f"{self.link_state} · "
        self.status.update(link + line)

    def action_back(self) -> None:
        self.dismiss()

    def action_say_watched(self) -> None:
        self.notify(self.note, severity="warning", timeout=8)

    def on_unmount(self) -> None:
        threading.Thread(target=self.link.close, name="callee link close", daemon=True).start()

    @property
    def note(self) -> str:
        """What a key that acts on a session says here: it would act on the member underneath,
        not on the callee this screen shows."""
        callee = self.door.member
        where = f"murmur-tui attach {self.door.session_id}" if self.door.session_id else \
            "murmur-tui attach"
        return (f"This screen watches {callee}: Esc goes back to the member's own screen, where "
                f"its keys act. To answer {callee} or cancel its task, use {where} or the fleet.")


def watched(screen: Screen[Any]) -> str | None:
    """The note for a key of the member's session pressed over a callee's screen; None when
    the member's own screen shows."""
    return screen.note if isinstance(screen, CalleeScreen) else None


def held_ctrl_c(app: App[Any], keys: KeyPairs) -> bool:
    """Ctrl+C over a callee's screen with nothing selected: the note instead of a cancel of
    the member's task underneath; True when that is all it does (a second Ctrl+C within the
    window quits, as anywhere)."""
    note = watched(app.screen)
    if note is None or app.screen.get_selected_text() or keys.second("ctrl+c", CTRL_C_WINDOW):
        return False
    app.notify(f"{note} Ctrl+C again quits.", timeout=CTRL_C_WINDOW)
    return True
