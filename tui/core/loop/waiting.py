"""A formation member's runtime tools as the turn loop sees them (spec murmur-newest §7.5, §9.1):
the task that waits on its `call-member` calls when the model ends its turn and goes on with
their answers, the task the model ended with `end-without-answer`, and the calls a task leaves
behind when it ends.

When the model ends its turn (`end_turn`) with a turn left and the task has calls out or
answers in, the stream says `waiting on call-member: <n> call(s) outstanding` (when some are
out), the task waits for every one (`Awaiting.wait`; a cancel ends the wait and the task), then
one user message holds all that arrived (member answers first, then delegation outcomes), the
stream says `continuing with <n> member answer(s)` (the door's status frame for
`TaskContinued`, which the log and the screen word with how long the task waited),
`task_continued` is traced, and the next turn runs. A task that ends with calls out abandons
them (`member_call` `abandoned`).
"""

from __future__ import annotations

import time
from typing import Protocol

from tui.core.a2a.net_policy import parse_rule
from tui.core.cancel import CancelToken
from tui.core.chat import user_message
from tui.core.errors import NetworkAllowError, StopOnCancel
from tui.core.events import vocabulary as ev
from tui.core.formation.awaiting import Arrival, Awaiting
from tui.core.formation.call_member import (
    CALL_MEMBER,
    END_WITHOUT_ANSWER,
    NETWORK_WARNING,
    Callers,
    CallMember,
    EndWithoutAnswer,
)
from tui.core.formation.member_calls import MemberCalls, deadline_secs
from tui.core.formation.seat import Seat
from tui.core.loop.context import Context
from tui.core.loop.report import Report
from tui.core.loop.state import TaskState, WithoutAnswer
from tui.core.manifest.model import Capsule
from tui.core.tools.table import ToolTable


class Delegations(Protocol):
    """The session's `delegate-task` (tui/core/formation/delegate.py), as a cancel stops it."""

    def stop_task(self, task_id: str) -> tuple[str, ...]: ...

    def settle(self, ids: tuple[str, ...]) -> None: ...


class Waiting:
    def __init__(self, awaiting: Awaiting, calls: MemberCalls | None, callers: Callers,
                 report: Report) -> None:
        self.awaiting = awaiting
        self.calls = calls
        self.callers = callers
        self.delegations: Delegations | None = None
        self._report = report
        self._continued: dict[str, int] = {}  # task -> continuations so far

    def unanswered(self, task: TaskState) -> WithoutAnswer | None:
        """After a turn's tool calls: the task ends here when the model called
        `end-without-answer`."""
        reason = self.callers.take(task.task_id)
        return None if reason is None else WithoutAnswer(f"no answer: {reason}")

    def go_on(self, task: TaskState, max_turns: int, context: Context,
              cancel: CancelToken) -> bool:
        """The model ended its turn: True when the task waited and goes on with the answers
        (one user message appended), False when it ends now (raises StopOnCancel when it was
        canceled while it waited)."""
        task_id, awaiting, report = task.task_id, self.awaiting, self._report
        out = awaiting.outstanding(task_id)
        if out + awaiting.arrived(task_id) == 0 or task.usage.turns >= max_turns:
            return False
        started = time.monotonic()
        if out:
            report.emit(ev.Progress(text=f"waiting on call-member: {out} call(s) outstanding",
                                    task_id=task_id))
            report.position.phase = "member_call" if "member" in awaiting.kinds(task_id) \
                else "delegation"
        arrivals = awaiting.wait(task_id, cancel)
        if cancel.is_set():
            raise StopOnCancel()
        report.position.phase = "turn"
        members = [a.ident for a in arrivals if a.kind == "member"]
        number = self._continued[task_id] = self._continued.get(task_id, 0) + 1
        report.emit(ev.TaskContinued(
            task_id=task_id, continuation_number=number, member_calls=tuple(members),
            delegations=tuple(a.ident for a in arrivals if a.kind == "delegation"),
            waited_ms=int((time.monotonic() - started) * 1000),
            turns_remaining=max_turns - task.usage.turns))
        context.append(user_message("\n\n".join(a.text for a in arrivals)))
        return True

    def canceled(self, task_id: str) -> tuple[str, ...]:
        """The task was canceled: its live delegations are stopped (their lifelines closed);
        their ids. `settled` waits for them to end."""
        return self.delegations.stop_task(task_id) if self.delegations is not None else ()

    def settled(self, ids: tuple[str, ...]) -> None:
        """The delegations `ids` a cancel stopped have ended and their outcomes are reported
        (a child still running after the wind-down time is killed)."""
        if ids and self.delegations is not None:
            self.delegations.settle(ids)

    def ended(self, task_id: str) -> None:
        """The task ended: its calls still out are abandoned; nothing of it is kept."""
        if self.calls is not None:
            self.calls.abandon(task_id)
        self.awaiting.drop(task_id)
        self._continued.pop(task_id, None)
        self.callers.take(task_id)


def localhost_allowed(allow: tuple[str, ...]) -> bool:
    """`capabilities.network.allow` names `localhost` (any scheme, any port)."""
    for entry in allow:
        try:
            if parse_rule(entry).host == "localhost":
                return True
        except NetworkAllowError:
            continue
    return False


def formation_tools(table: ToolTable, capsule: Capsule, seat: Seat | None,
                    report: Report, awaiting: Awaiting) -> Waiting | None:
    """A formation member's runtime tools, added to `table`: `end-without-answer` for every
    member, `call-member` for one the roster lets call someone (W-RUN-008 at start when
    `capabilities.network.allow` lacks `localhost`). None for a session that is no member."""
    if seat is None:  # a delegation still waits (delegate-task, spawn.allow)
        return Waiting(awaiting, None, Callers(), report) if capsule.capabilities.spawn_allow \
            else None
    callers = Callers()
    report.stream.add(callers)
    calls = None
    if seat.callees:
        reachable = localhost_allowed(capsule.capabilities.network_allow)
        calls = MemberCalls(
            seat, reachable, deadline_secs(capsule.lifecycle.delegation_deadline_secs),
            report.emit, lambda task_id, ident: awaiting.expect(task_id, ident, "member"),
            lambda task_id, ident, member, status, text: awaiting.arrive(
                task_id, Arrival("member", ident, member, status, text)))
        table.runtime[CALL_MEMBER] = CallMember(calls)
        table.closers.append(calls.close)
        if not reachable:
            table.notices.append(NETWORK_WARNING)
    table.runtime[END_WITHOUT_ANSWER] = EndWithoutAnswer(callers)
    return Waiting(awaiting, calls, callers, report)
