"""What a session reports of its formation and of the work it hands to others (spec
murmur-newest §7.5–7.6, §9.1): a `call-member` call started, re-offered while the callee is busy
and ended; a task that waited on its calls and delegations and continues with their answers;
a delegated child started and ended, and its parent gone under it; the formation ended under
the member. Each is one of Murmur's trace lines (`member_call_start`, `member_call_busy`,
`member_call`, `task_continued`, `delegation_start`, `delegation`, `spawner_ended`,
`formation_ended`)."""

from __future__ import annotations

from dataclasses import dataclass

from tui.core.events.event import Event


# -- call-member ---------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class MemberCallStarted(Event):
    """`call-member` sent `task` to `member`, whose door took it as `callee_task_id`."""

    task_id: str
    call_id: str  # mcl_…
    member: str
    task: str
    callee_task_id: str
    turn: int


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class MemberCallBusy(Event):
    """The callee was busy; the call is offered again after `retry_in_ms`."""

    task_id: str
    member: str
    attempt: int
    retry_in_ms: int


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class MemberCallEnded(Event):
    """A call's outcome: `completed` (with the callee's `answer`), `failed`, `canceled`,
    `rejected`, `timed_out`, `unreachable`, `abandoned` or `no_answer` (with `reason`)."""

    task_id: str
    call_id: str
    member: str
    status: str
    duration_ms: int
    answer: str | None = None
    reason: str | None = None


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TaskContinued(Event):
    """The task waited on its calls and delegations and goes on with their answers, in one user
    message (`continuation_number` from 1)."""

    task_id: str
    continuation_number: int
    member_calls: tuple[str, ...]  # the mcl_… ids answered
    delegations: tuple[str, ...]  # the dlg_… ids whose outcome arrived
    waited_ms: int
    turns_remaining: int


# -- delegate-task -------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class DelegationStarted(Event):
    task_id: str
    delegation_id: str  # dlg_…
    capsule: str
    version: str
    child_session_id: str
    child_workdir: str


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class DelegationEnded(Event):
    """The delegating call's outcome: `completed`, `timed_out`, `failed` or `refused`."""

    task_id: str
    delegation_id: str | None
    capsule: str
    version: str
    child_session_id: str | None
    duration_ms: int
    outcome: str
    reason: str | None = None


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class SpawnerEnded(Event):
    """A delegated child's spawner lifeline closed: the session that started it ended (or,
    `canceled`, the task that delegated it was canceled), and the child winds down."""

    spawned_by: str
    delegation_id: str
    canceled: bool = False  # the parent said so before closing the lifeline (not traced)


# -- the formation -------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class FormationEnded(Event):
    """The member's lifeline closed: the formation ended, and the session winds down."""

    formation_id: str
