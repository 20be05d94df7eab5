"""A formation member's work with others, in its transcript (`tui.app.models.transcript`): each
`call-member` call as a line in the task's turn that made it — `→ coder: "…"` with a clock
while it is out, the callee's answer fenced as the model reads it once it is in — the callee
busy, the task going on with the answers it waited for, a delegated child's start and end,
and the formation ending under the member. No Textual or Rich here."""

from __future__ import annotations

from typing import Protocol

from tui.app.models.transcript_parts import Running, SessionView, TaskBlock, TurnModel
from tui.core.events import formation_wording as words
from tui.core.events import vocabulary as ev
from tui.core.events.words import LineKind, Said


class ModelLines(Protocol):
    """The transcript's model (tui.app.models.transcript), as these lines use it."""

    session: SessionView

    @property
    def block(self) -> TaskBlock | None: ...

    def turn(self, task_id: str, turn: int) -> TurnModel: ...

    def current_turn(self, task_id: str) -> int: ...


class FormationLines:
    """The lines of one transcript model's calls and delegations, kept where they were made:
    a call's start line is replaced in place by its end."""

    def __init__(self, model: ModelLines) -> None:
        self.model = model
        self._out: dict[str, tuple[TurnModel, str]] = {}  # a call or delegation -> its line

    def _current(self, task_id: str) -> TurnModel:
        return self.model.turn(task_id, self.model.current_turn(task_id))

    def take(self, event: ev.Event) -> bool:
        """Take in one formation event; True when the transcript changed."""
        line = words.said(event)
        if line is None:
            return False
        match event:
            case ev.MemberCallStarted():
                self._start(self.model.turn(event.task_id, event.turn),
                            f"mcall:{event.call_id}", event.call_id, event.ts_ms, line)
            case ev.MemberCallBusy():  # one line per callee, told again on each offer
                self._current(event.task_id).say(f"mbusy:{event.member}", line)
            case ev.MemberCallEnded():
                turn, key = self._end(event.task_id, event.call_id, f"mcall:{event.call_id}")
                turn.say(key, line)
                if event.status == "completed" and event.answer is not None:
                    turn.say_after(key, f"manswer:{event.call_id}",
                                   Said(LineKind.NOTE, words.fenced_answer(event)))
                    turn.folded.add(f"manswer:{event.call_id}")
            case ev.DelegationStarted():
                self._start(self._current(event.task_id), f"dlg:{event.delegation_id}",
                            event.delegation_id, event.ts_ms, line)
            case ev.DelegationEnded():
                turn, key = self._end(event.task_id, event.delegation_id or "",
                                      f"dlg:{event.delegation_id or event.seq}")
                turn.say(key, line)
            case ev.TaskContinued():
                self._current(event.task_id).say(f"continued:{event.seq}", line)
            case ev.FormationEnded():
                self.model.session.formation_ended = line.text
                block = self.model.block
                if block is None or block.result is not None:
                    return True  # the top line says it: no task is running
                self._current(block.task_id).say(f"formation:{event.seq}", line)
        return True

    def _start(self, turn: TurnModel, key: str, ident: str, at_ms: int, line: Said) -> None:
        self._out[ident] = (turn, key)
        turn.run(key, Running(at_ms, line.text))

    def _end(self, task_id: str, ident: str, key: str) -> tuple[TurnModel, str]:
        """The line a call or delegation started (the task's newest turn, for a screen that
        joined after it started), its clock stopped."""
        known = self._out.pop(ident, None)
        turn, key = known if known is not None else (self._current(task_id), key)
        turn.stop(key)
        return turn, key
