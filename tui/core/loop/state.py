"""The loop's state, with no behaviour: where the session is, what a task has spent, and how a
turn and a task end (a small union of frozen outcomes). A leaf: it imports nothing of the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from tui.core.events.kinds import CancelPhase, FailureCause
from tui.core.frozen import Frozen


@dataclass(frozen=True, repr=False, eq=False)
class Usage(Frozen):
    """What was spent; `a + b` adds each counter."""

    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    shell_calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.turns + other.turns, self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     self.tool_calls + other.tool_calls, self.shell_calls + other.shell_calls)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class Position:
    """Where the session is: the running task (the record scope) and its turn. Read by what
    reports from another thread or a component (hook faults, a tool's streamed text)."""

    task_id: str | None = None
    turn: int = 0
    phase: CancelPhase = "turn"  # what the task is doing: where a cancel would strike


@dataclass
class TaskState:
    """One task while it runs: its id, when it started, what it has spent."""

    task_id: str
    started: float  # time.monotonic()
    usage: Usage = field(default_factory=Usage)
    reopens: int = 0

    def spend(self, **counts: int) -> None:
        self.usage = self.usage + Usage(**counts)


# -- outcomes ---------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False, eq=False)
class Finished(Frozen):
    """The model (or the script) finished: the task's result."""

    result: str
    exit_status: Literal["ok"] = "ok"
    cause: None = None
    turn: None = None


@dataclass(frozen=True, repr=False, eq=False)
class Failed(Frozen):
    """A task attempt failed (trace `task_failed`, with its cause)."""

    result: str
    cause: FailureCause
    turn: int | None = None
    exit_status: Literal["failed", "reopen_budget_exhausted"] = "failed"


@dataclass(frozen=True, repr=False, eq=False)
class Canceled(Frozen):
    """The human canceled."""

    result: str = "error: canceled by the user"
    exit_status: Literal["canceled"] = "canceled"
    cause: None = None
    turn: None = None


@dataclass(frozen=True, repr=False, eq=False)
class Limited(Frozen):
    """A limit ended the task: inference.max_turns or inference.max_session_tokens."""

    exit_status: Literal["max_turns_reached", "spend_ceiling_reached"]
    result: str
    cause: None = None
    turn: None = None


@dataclass(frozen=True, repr=False, eq=False)
class WithoutAnswer(Frozen):
    """The model ended a task another formation member sent with `end-without-answer`: the
    task ends with no answer and no failure (`result`: `no answer: <reason>`)."""

    result: str
    exit_status: Literal["no_answer"] = "no_answer"
    cause: None = None
    turn: None = None


TaskOutcome: TypeAlias = Finished | Failed | Canceled | Limited | WithoutAnswer


@dataclass(frozen=True, repr=False, eq=False)
class Continue(Frozen):
    """A turn ended and the task goes on (tool results were appended)."""


TurnOutcome: TypeAlias = TaskOutcome | Continue


@dataclass(frozen=True, repr=False, eq=False)
class Reopen(Frozen):
    """An on-task-end hook sent the task back with a reason."""

    hook: str
    reason: str


