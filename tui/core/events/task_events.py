"""What a session reports of itself, its tasks and their turns: start and end, a task's failure,
cancel and reopening, a driver call and its text, the person's questions and answers, hooks'
faults, compaction, retries, progress and warnings, and a task delegated to a peer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from tui.core.events.event import Event, JsonObject

if TYPE_CHECKING:
    from tui.core.events.kinds import (
        CancelPhase,
        ExitStatus,
        FailureCause,
        TaskOrigin,
        TaskSource,
        TaskVia,
        TurnDecision,
    )


# -- session and task ---------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class SessionStarted(Event):
    capsule_name: str
    capsule_version: str
    model: str
    workdir: str
    trace_path: str
    context_id: str
    record_path: str | None
    max_turns: int
    tools: tuple[str, ...]
    max_session_tokens: int | None = None
    capabilities: tuple[str, ...] = ()
    system_prompt_source: str = "none"
    system_prompt_sha256: str | None = None
    credential_source: str = "none"
    context_max_tokens: int | None = None
    resumed_from: str | None = None  # `--resume`: the session whose conversation goes on
    formation_id: str | None = None  # a formation's member (spec murmur-newest §7.6)
    formation_member: str | None = None
    formation_callees: tuple[str, ...] = ()
    spawned_by: str | None = None  # a delegated child: the parent session (§9.1)
    delegation_id: str | None = None


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TaskStarted(Event):
    task_id: str
    context_id: str
    text: str
    source: TaskSource = "task_md"
    origin: TaskOrigin = "user"
    message_parts_bytes: int = 0
    caller_member: str | None = None  # sent by this formation member's `call-member`
    via: TaskVia | None = None  # typed on the supervisor's prompt (not in the trace)


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TaskFailed(Event):
    """A task attempt failed; `cause` is one of Murmur's task_failed causes (spec §2)."""

    task_id: str
    cause: FailureCause
    reason: str
    turn: int | None = None


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TaskCanceled(Event):
    """The running task stopped because it was canceled (Murmur's `task_canceled`): at once,
    before any on-task-end hook runs; TaskEnded (`canceled`) follows once the hooks are done.
    `phase` says what it was doing: a model call, a question, or the turn around them."""

    task_id: str
    turn: int
    phase: CancelPhase
    delegation_ids: tuple[str, ...] = ()  # the live delegations the cancel stopped


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TaskReopened(Event):
    task_id: str
    hook_name: str
    reason: str
    reopen_number: int
    turns_remaining: int


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TaskEnded(Event):
    task_id: str
    exit_status: ExitStatus
    result: str
    duration_ms: int
    turns: int
    input_tokens: int
    output_tokens: int
    tool_calls: int
    shell_calls: int
    reopen_count: int = 0


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class SessionEnded(Event):
    exit_status: ExitStatus
    duration_ms: int
    total_turns: int
    total_input_tokens: int
    total_output_tokens: int
    total_tool_calls: int
    total_shell_calls: int


# -- turns ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TurnStarted(Event):
    task_id: str
    turn: int
    max_turns: int
    input_tokens: int


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TextDelta(Event):
    task_id: str
    turn: int
    text: str


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ThinkingDelta(Event):
    task_id: str
    turn: int
    text: str


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TurnCompleted(Event):
    """One driver call finished (also a failed one: decision `error`)."""

    unredacted: ClassVar[frozenset[str]] = frozenset({"message_ids", "message_shas"})

    task_id: str
    turn: int
    input_tokens: int
    output_tokens: int | None
    decision: TurnDecision
    stop_reason: str
    tool_name: str | None
    model: str
    content: tuple[JsonObject, ...] = ()
    message_ids: tuple[str, ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)
    error: str | None = None
    error_code: str | None = None
    origin: str | None = None
    system_sha: str | None = None
    tools_sha: str | None = None
    response_sha: str | None = None
    message_shas: tuple[str, ...] = ()


# -- the human, hooks, compaction --------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class InputRequested(Event):
    task_id: str | None
    request_id: str
    prompt: str
    tool_name: str
    deadline_ms: int | None = None
    before_restart: bool = False  # the same question was open when the session stopped


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class InputAnswered(Event):
    task_id: str | None
    request_id: str
    answer: str
    journaled: bool = False  # answered before a restart: delivered from the journal, not asked


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class HookFault(Event):
    hook: str
    handler: str
    arm: str | None = None
    error: str | None = None
    task_id: str | None = None
    traced: bool = True  # a blocking hook's fault, not on-stage: a hook_dispatch_error line


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class Compacted(Event):
    task_id: str
    turn: int
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class CompactionDeclined(Event):
    task_id: str
    turn: int
    tokens: int
    reason: str


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class InferenceRetry(Event):
    """A model call failed in a way worth trying again; the next attempt starts after
    `delay_ms`. The failed attempt's partial answer (if it streamed any) is discarded."""

    task_id: str | None
    turn: int
    attempt: int  # the attempt that failed, from 1
    max_attempts: int
    status: int | None  # the provider's HTTP status; None: the connection or stream broke
    reason: str
    delay_ms: int


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class Progress(Event):
    """Something slow is under way (compiling a large component; a task waiting on its
    `call-member` calls, `task_id` naming it: the A2A stream says it as the task's status)."""

    text: str
    task_id: str | None = None


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class Warning(Event):  # noqa: A001 - the vocabulary's name for it
    code: str
    text: str


# -- delegation, appended ---------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class Delegated(Event):
    """A script capsule sent a task to a peer capsule's door (`murmur:message/send`) and the
    peer took it: `peer_task_id` in `peer_context_id`, in `state` as the peer answered at once
    (`submitted`, `working`, …; the peer's later states are the peer's). `task_id` is this
    session's task that asked. Murmur's `a2a_send` trace line."""

    task_id: str
    peer_url: str
    message_id: str
    peer_task_id: str
    peer_context_id: str
    state: str
