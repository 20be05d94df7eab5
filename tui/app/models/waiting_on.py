"""What a formation member's task waits on once its turn has ended: the `call-member` calls and
delegations it started that have not answered yet — the status bar's `waiting on coder · 0:12`
(tui.app.models.status). No Textual here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tui.core.events import vocabulary as ev


@dataclass
class WaitingOn:
    """The calls and delegations out (id -> whom, and the clock reading it went out at), and
    whether the turn that made them has ended (then the task waits on them)."""

    out: dict[str, tuple[str, float]] = field(default_factory=dict)
    turn_ended: bool = False
    calls: dict[str, str] = field(default_factory=dict)  # call-member calls out: id -> callee
    last_called: str | None = None  # the callee of the newest call, out or not
    formation_id: str | None = None  # the session is this formation's member

    def apply(self, event: ev.Event, at: Callable[[ev.Event], float]) -> None:
        """Take in `event`; `at(event)` is the clock reading it happened at."""
        match event:
            case ev.SessionStarted():
                self.formation_id = event.formation_id
            case ev.MemberCallStarted():
                self.out[event.call_id] = (event.member, at(event))
                self.calls[event.call_id] = self.last_called = event.member
            case ev.MemberCallEnded():
                self.out.pop(event.call_id, None)
                self.calls.pop(event.call_id, None)
            case ev.DelegationStarted():
                self.out[event.delegation_id] = (f"{event.capsule}@{event.version}", at(event))
            case ev.DelegationEnded() if event.delegation_id:
                self.out.pop(event.delegation_id, None)
            case ev.TaskContinued():  # what it goes on with is no longer waited on
                for taken in (*event.member_calls, *event.delegations):
                    self.out.pop(taken, None)
                    self.calls.pop(taken, None)
                self.turn_ended = False
            case ev.TurnStarted() | ev.TaskStarted():
                self.turn_ended = False
            case ev.TurnCompleted():
                self.turn_ended = event.decision != "tool_call"
            case ev.TaskEnded() | ev.SessionEnded():  # nothing it started is waited on now
                self.out.clear()
                self.calls.clear()
                self.turn_ended = False

    @property
    def callee(self) -> str | None:
        """The member `g` opens: the callee of the newest call still out, else of the newest
        call made."""
        return next(reversed(self.calls.values()), None) or self.last_called

    @property
    def waiting(self) -> bool:
        return self.turn_ended and bool(self.out)

    def text(self, now: float) -> str:
        """`waiting on coder, reviewer · 0:12`: whom, and for how long the oldest is out."""
        names = ", ".join(dict.fromkeys(name for name, _ in self.out.values()))
        since = min(at for _, at in self.out.values())
        minutes, seconds = divmod(int(max(0.0, now - since)), 60)
        hours, minutes = divmod(minutes, 60)
        clock = f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
        return f"waiting on {names} · {clock}"
