"""What a session reports of its tool calls: started, composing, denied, finished, restored
after a restart, their live output, and shell commands — run, detached to the background,
completed, abandoned or lost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tui.core.events.event import Event, JsonObject

if TYPE_CHECKING:
    from tui.core.events.kinds import CallStatus, GateEvent, OutputStream, ToolKind


# -- tools ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToolCallStarted(Event):
    task_id: str
    turn: int
    call_id: str | None
    tool_name: str
    kind: ToolKind
    input: JsonObject
    input_known: bool = True  # False: an attached session's door did not send the input


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToolCallFinished(Event):
    task_id: str
    turn: int
    call_id: str | None
    tool_name: str
    kind: ToolKind
    status: CallStatus
    duration_ms: int
    input: JsonObject
    input_bytes: int
    output: str
    output_bytes: int
    state_effect: str | None = None
    resource_id: str | None = None
    attachments: tuple[JsonObject, ...] = ()
    truncated: bool = False  # the output was cut (the tool's own flag, or a result cap)
    input_known: bool = True  # False: an attached session's door did not send the input


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToolCallRestored(Event):
    """A call of a rebuilt turn that had finished before the restart: its journaled result
    is used and it is not run again (no trace line: it ran in `from_session`)."""

    task_id: str
    turn: int
    call_id: str
    tool_name: str
    status: CallStatus
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
    kind: ToolKind  # shell or wasm: the calls an approval gates
    event: GateEvent
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
    stream: OutputStream
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
    status: CallStatus
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
