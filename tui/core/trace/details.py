"""What `murmur-tui trace` shows of one trace, section by section, read in one pass.

`load(path)` reads the file once (`reader.read_trace`), sums it up (`analyse`) and keeps what
each section of `mur trace show` lists: the session's own line, the turns' decisions, every tool,
skill and shell call, hook failures, compactions (and the declined ones), failed attempts,
reopens, and the provider's own token counts. Every field it reads is checked
(`fields.TraceLine`): a wrong type is a `TraceFormatError` naming file, line and key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.trace.analyse import TraceSummary, summarise_lines
from tui.core.trace.fields import TraceLine
from tui.core.trace.reader import read_trace
from tui.core.trace.redundant import Call, RedundantCall, redundant_calls


@dataclass(frozen=True)
class SessionInfo:
    capsule_version: str = ""
    max_turns: int | None = None
    capabilities: list[str] = field(default_factory=list)
    tools_declared: list[str] = field(default_factory=list)
    containment_declared: str | None = None
    containment_achieved: str | None = None
    workdir_exec: bool | None = None
    system_prompt_source: str | None = None
    system_prompt_sha256: str | None = None


@dataclass(frozen=True)
class SessionTotals:
    """The session's totals: `session_end`'s when it has one, else summed from the lines."""

    turns: int
    input_tokens: int
    output_tokens: int
    tool_calls: int
    shell_calls: int


@dataclass(frozen=True)
class ToolCallRow:
    turn: int
    tool_name: str
    duration_ms: int
    status: str
    input: Any


@dataclass(frozen=True)
class SkillCallRow:
    turn: int
    skill_name: str
    duration_ms: int
    status: str


@dataclass(frozen=True)
class ShellRow:
    turn: int | None
    exit_code: int
    duration_ms: int


@dataclass(frozen=True)
class HookFailure:
    hook_name: str
    event: str
    arm: str


@dataclass(frozen=True)
class CompactionRow:
    turn: int
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class DeclinedRow:
    turn: int
    tokens: int
    reason: str


@dataclass(frozen=True)
class FailedRow:
    task_id: str
    turn: int | None
    cause: str
    reason: str


@dataclass(frozen=True)
class ReopenRow:
    task_id: str
    reopen_number: int
    hook_name: str
    reason: str
    attempt_context: str | None
    turns_remaining: int | None


@dataclass
class ProviderTokens:
    input: int = 0
    output: int = 0
    cached: int = 0
    cache_write: int = 0


@dataclass
class TraceDetails:
    summary: TraceSummary
    lines_read: int
    session: SessionInfo
    totals: SessionTotals
    decisions: dict[int, str]  # turn → the decision of its last inference line
    tool_calls: list[ToolCallRow]
    redundant: list[RedundantCall]
    skill_calls: list[SkillCallRow]
    shell_calls: list[ShellRow]
    hook_failures: list[HookFailure]
    compaction: CompactionRow | None  # the last one, as Murmur shows it
    compactions: list[CompactionRow]
    declined: list[DeclinedRow]
    failed: list[FailedRow]
    reopens: list[ReopenRow]
    provider_tokens: ProviderTokens | None


_PROVIDER_KEYS = (("input_tokens_actual", "input"), ("output_tokens_actual", "output"),
                  ("cached_tokens", "cached"), ("cache_write_tokens", "cache_write"))


class _Collecting:
    def __init__(self) -> None:
        self.session = SessionInfo()
        self.end: TraceLine | None = None
        self.started = False
        self.decisions: dict[int, str] = {}
        self.calls: list[Call] = []
        self.tool_calls: list[ToolCallRow] = []
        self.skill_calls: list[SkillCallRow] = []
        self.shell_calls: list[ShellRow] = []
        self.hook_failures: list[HookFailure] = []
        self.compactions: list[CompactionRow] = []
        self.declined: list[DeclinedRow] = []
        self.failed: list[FailedRow] = []
        self.reopens: list[ReopenRow] = []
        self.provider: ProviderTokens | None = None

    def add(self, line: TraceLine) -> None:
        handler = _HANDLERS.get(line.event_type or "")
        if handler is not None:
            handler(self, line)

    def session_start(self, line: TraceLine) -> None:
        if self.started:  # an older trace may frame each attempt: the first one counts
            return
        self.started = True
        exec_ = line.value.get("workdir_exec")
        if exec_ is not None and not isinstance(exec_, bool):
            raise line.fail("workdir_exec", "expected a boolean")
        self.session = SessionInfo(
            capsule_version=line.maybe_text("capsule_version", "") or "",
            max_turns=line.maybe_count("max_turns"),
            capabilities=line.texts("capabilities"),
            tools_declared=line.texts("tools_declared"),
            containment_declared=line.maybe_text("containment_declared"),
            containment_achieved=line.maybe_text("containment_achieved"),
            workdir_exec=exec_,
            system_prompt_source=line.maybe_text("system_prompt_source"),
            system_prompt_sha256=line.maybe_text("system_prompt_sha256"),
        )

    def inference(self, line: TraceLine) -> None:
        self.decisions[line.count("turn")] = line.text("decision")
        reported = [(name, line.count(key)) for key, name in _PROVIDER_KEYS
                    if line.value.get(key) is not None]
        if reported:
            provider = self.provider = self.provider or ProviderTokens()
            for name, value in reported:
                setattr(provider, name, getattr(provider, name) + value)

    def tool_call(self, line: TraceLine) -> None:
        turn = line.count("turn", 0)
        name = line.text("tool_name")
        tool_input = line.value.get("input")
        self.calls.append(Call(turn, name, tool_input, line.maybe_text("state_effect"),
                               line.maybe_text("resource_id")))
        self.tool_calls.append(ToolCallRow(turn, name, line.count("duration_ms"),
                                           line.text("status"), tool_input))

    def skill_call(self, line: TraceLine) -> None:
        self.skill_calls.append(SkillCallRow(line.count("turn", 0), line.text("skill_name"),
                                             line.count("duration_ms"), line.text("status")))

    def shell(self, line: TraceLine) -> None:
        self.shell_calls.append(ShellRow(line.maybe_count("turn"), line.integer("exit_code"),
                                         line.count("duration_ms")))

    def hook_dispatch_error(self, line: TraceLine) -> None:
        self.hook_failures.append(HookFailure(line.text("hook_name"), line.text("event"),
                                              line.text("arm")))

    def compaction(self, line: TraceLine) -> None:
        self.compactions.append(CompactionRow(line.count("turn"), line.count("tokens_before"),
                                              line.count("tokens_after")))

    def compaction_declined(self, line: TraceLine) -> None:
        self.declined.append(DeclinedRow(line.count("turn"), line.count("tokens"),
                                         line.text("reason")))

    def task_failed(self, line: TraceLine) -> None:
        self.failed.append(FailedRow(line.text("task_id"), line.maybe_count("turn"),
                                     line.text("cause"), line.maybe_text("reason", "") or ""))

    def task_reopened(self, line: TraceLine) -> None:
        self.reopens.append(ReopenRow(
            line.text("task_id"), line.count("reopen_number"), line.text("hook_name"),
            line.maybe_text("reason", "") or "", line.maybe_text("attempt_context"),
            line.maybe_count("turns_remaining")))

    def session_end(self, line: TraceLine) -> None:
        for key in ("total_turns", "total_input_tokens", "total_output_tokens",
                    "total_tool_calls", "total_shell_calls"):
            line.count(key)
        self.end = line

    def totals(self, summary: TraceSummary) -> SessionTotals:
        end = self.end
        if end is not None:
            return SessionTotals(end.count("total_turns"), end.count("total_input_tokens"),
                                 end.count("total_output_tokens"), end.count("total_tool_calls"),
                                 end.count("total_shell_calls"))
        tasks = summary.tasks
        return SessionTotals(sum(task.turns for task in tasks),
                             sum(task.input_tokens for task in tasks),
                             sum(task.output_tokens for task in tasks), len(self.tool_calls),
                             len(self.shell_calls))


_HANDLERS = {
    "session_start": _Collecting.session_start,
    "inference": _Collecting.inference,
    "tool_call": _Collecting.tool_call,
    "skill_call": _Collecting.skill_call,
    "shell": _Collecting.shell,
    "hook_dispatch_error": _Collecting.hook_dispatch_error,
    "compaction": _Collecting.compaction,
    "compaction_declined": _Collecting.compaction_declined,
    "task_failed": _Collecting.task_failed,
    "task_reopened": _Collecting.task_reopened,
    "session_end": _Collecting.session_end,
}


def load(path: Path) -> TraceDetails:
    """Everything `murmur-tui trace` shows of the trace at `path`. Raises TraceFormatError
    (file, line, key) for a line it cannot read and OSError when the file cannot be opened."""
    lines = read_trace(path)
    summary = summarise_lines(path, lines)
    collecting = _Collecting()
    for number, value in zip(lines.numbers, lines.events, strict=True):
        collecting.add(TraceLine(path, number, value))
    return TraceDetails(
        summary=summary, lines_read=len(lines), session=collecting.session,
        totals=collecting.totals(summary), decisions=collecting.decisions,
        tool_calls=collecting.tool_calls, redundant=redundant_calls(collecting.calls),
        skill_calls=collecting.skill_calls, shell_calls=collecting.shell_calls,
        hook_failures=collecting.hook_failures,
        compaction=collecting.compactions[-1] if collecting.compactions else None,
        compactions=collecting.compactions, declined=collecting.declined,
        failed=collecting.failed, reopens=collecting.reopens,
        provider_tokens=collecting.provider,
    )
