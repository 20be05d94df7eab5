"""The event vocabulary: what a session reports, to every sink alike (ARCHITECTURE §4).

Events are frozen dataclasses, built with their own constructors where they happen
(`ev.TurnStarted(task_id=..., turn=...)`), so mypy checks every field. The stamp — the
`session_id`, a per-session `seq` (from 1) and a timestamp in Unix milliseconds — is filled in
by the `EventStream` that delivers the event (`tui.core.events.stream`). `to_dict()` /
`event_from_dict()` give the JSON form used by `launch --headless --json`: the fields plus
`"event": <class name>`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from tui.core.events.kinds import CancelPhase, ExitStatus, FailureCause, TurnDecision

JsonObject = dict[str, Any]


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class Event:
    session_id: str = ""  # the stamp: filled by the stream that delivers the event
    seq: int = 0
    ts_ms: int = 0

    registry: ClassVar[dict[str, type[Event]]] = {}
    # fields that hold no text from outside by construction (ids the session minted or
    # redacted when it read them, hex digests): the stream does not scan them
    unredacted: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Event.registry[cls.__name__] = cls

    # One __eq__, __hash__ and __repr__ for every event, as a dataclass would write them: the
    # dataclass decorator writing them again for each class costs start-up time.
    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.session_id, self.seq))

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__qualname__}({values})"

    @property
    def event_type(self) -> str:
        return type(self).__name__

    def to_dict(self) -> JsonObject:
        data: JsonObject = {"event": self.event_type}
        for item in fields(self):
            data[item.name] = getattr(self, item.name)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, (tuple, frozenset, set)):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """The inverse of `Event.to_dict()`; raises ValueError for an unknown event."""
    kind = data.get("event")
    cls = Event.registry.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event {kind!r}")
    names = {item.name for item in fields(cls)}
    return cls(**{key: value for key, value in data.items() if key in names})


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


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TaskStarted(Event):
    task_id: str
    context_id: str
    text: str
    source: str = "task_md"  # task_md | a2a (sent to the running session)
    origin: str = "user"
    message_parts_bytes: int = 0


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


# -- tools ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToolCallStarted(Event):
    task_id: str
    turn: int
    call_id: str | None
    tool_name: str
    kind: str  # shell | skill | wasm | unknown
    input: JsonObject


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToolCallFinished(Event):
    task_id: str
    turn: int
    call_id: str | None
    tool_name: str
    kind: str
    status: Literal["ok", "error"]
    duration_ms: int
    input: JsonObject
    input_bytes: int
    output: str
    output_bytes: int
    state_effect: str | None = None
    resource_id: str | None = None
    attachments: tuple[JsonObject, ...] = ()
    truncated: bool = False  # the output was cut (the tool's own flag, or a result cap)


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToolCallRestored(Event):
    """A call of a rebuilt turn that had finished before the restart: its journaled result
    is used and it is not run again (no trace line: it ran in `from_session`)."""

    task_id: str
    turn: int
    call_id: str
    tool_name: str
    status: Literal["ok", "error"]
    output_bytes: int
    from_session: str


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ShellExecuted(Event):
    task_id: str
    turn: int
    call_id: str | None
    binary: str
    command: str
    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    duration_ms: int
    truncated: bool
    full_output_path: str | None = None


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
    """Something slow is under way (compiling a large component)."""

    text: str


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class Warning(Event):  # noqa: A001 - the vocabulary's name for it
    code: str
    text: str


# -- streaming, appended --------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToolCallComposing(Event):
    """The model is writing tool call `call_id` (`murmur:stream/events`, from a WebAssembly
    driver): first with `input_bytes` 0 when it starts, then each time the input JSON written
    so far grows. The call itself follows as ToolCallStarted with the same `call_id`."""

    task_id: str
    turn: int
    call_id: str
    tool_name: str
    input_bytes: int


# -- approvals, appended ----------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class CallDenied(Event):
    """A shell command or tool call was refused before it ran (`launch --approve`): the person
    denied it, or nobody could approve it. Murmur's `call_denied` trace line; no `tool_call`
    or `shell` line accompanies it. The model reads `reason` as the call's error result."""

    task_id: str
    turn: int
    call_id: str | None
    tool_name: str
    kind: str  # shell | wasm
    event: Literal["on-shell", "on-tool-call"]
    hook_name: str
    target: str  # the resolved binary for a shell command, the tool's name otherwise
    reason: str


# -- live tool calls, appended ------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ShellOutput(Event):
    """Lines a shell command wrote while it runs (redacted; no trace line). `text` is one
    or more whole lines joined by "\\n"; a line that waited `live.PARTIAL_SECONDS` for its
    end comes as a line of its own. At most one per stream every `report.LIVE_INTERVAL`;
    `skipped_lines` lines written since the last one were left out of it (the result and the
    log keep them). ShellExecuted still follows with the call's result."""

    task_id: str
    turn: int
    call_id: str
    stream: Literal["stdout", "stderr"]
    text: str
    skipped_lines: int = 0


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToolProgress(Event):
    """A WebAssembly tool's progress while its call runs: the text its `emit-chunk` calls
    sent since the last ToolProgress of the call (at most one every `report.LIVE_INTERVAL`;
    the newest 4 KiB of it, "…" marking a cut), redacted. No trace line."""

    task_id: str
    turn: int
    call_id: str
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


# -- background work (a shell command demoted after lifecycle.shell_grace_secs), appended --------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ShellDetached(Event):
    """A shell command outran `lifecycle.shell_grace_secs` and went on in the background as
    `work_id` (`wrk_…`); its output goes to `output_path` (`logs/<work_id>.log`). Murmur's
    `shell_detached` line, in place of the command's `shell` line."""

    unredacted: ClassVar[frozenset[str]] = frozenset({"work_id", "output_path"})

    task_id: str
    turn: int
    call_id: str | None
    work_id: str
    binary: str
    command: str
    grace_ms: int
    output_path: str


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ShellCompleted(Event):
    """Background work ended and its result was queued as the `completion` task
    `completion_task_id`. Murmur's `shell_completed` line."""

    unredacted: ClassVar[frozenset[str]] = frozenset({"work_id", "output_path",
                                                      "completion_task_id"})

    work_id: str
    binary: str
    command: str
    exit_code: int
    duration_ms: int
    output_path: str
    output_bytes: int
    status: Literal["ok", "error"]
    completion_task_id: str


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ShellAbandoned(Event):
    """The session ended (or the person stopped it: `reason`) without carrying the work's
    result back. `exit_code`, `output_path` and `output_bytes` are set only for work that had
    ended; work still running was killed. Murmur's `shell_abandoned` line."""

    unredacted: ClassVar[frozenset[str]] = frozenset({"work_id", "output_path"})

    work_id: str
    binary: str
    command: str
    running_ms: int
    exit_code: int | None = None
    output_path: str | None = None
    output_bytes: int | None = None
    reason: str | None = None  # "stopped" when the person stopped it; None: the session ended


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ShellLost(Event):
    """`--resume` found background work the resumed session `lost_session_id` died with: no
    result of it survives. Its Murmur `shell_lost` line goes to that session's own trace, so
    this event has none in this session's."""

    unredacted: ClassVar[frozenset[str]] = frozenset({"work_id", "lost_session_id"})

    work_id: str
    binary: str
    command: str
    lost_session_id: str
    detached_at_ms: int
