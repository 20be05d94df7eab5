"""One trace summed up: how the session ended and how long it ran, each task (its exit status,
turns, tokens, tool calls, failures and their causes) and each tool (calls, errors, time).

Built on `reader.read_trace`, so a line that is not a JSON object is a `TraceFormatError`
naming file and line. Beyond that, the lines this summary reads must hold what the writer puts
there: a field of the wrong type (a string where a count belongs, a number for a task id) is a
`TraceFormatError` naming file, line and key — never a wrong sum. What a summary does not read
is not checked: unknown event types are skipped, as Murmur's readers skip them.

A trace without `session_end` (the supervisor was killed) still sums up: its `exit_status` is
None and its duration runs from `session_start` to the last line; a task without `task_end`
likewise. A trace that has no `session_start` is not a session's trace and is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui.core.errors import TraceFormatError, Where
from tui.core.trace.fields import TraceLine, kind_of
from tui.core.trace.reader import TraceLines, read_trace


@dataclass(frozen=True)
class Failure:
    """One failed attempt of a task (a `task_failed` line)."""

    turn: int | None  # as the file has it, from 0 (`--json` carries it so); None: task-level
    cause: str
    reason: str


@dataclass
class TaskSummary:
    task_id: str
    exit_status: str | None = None  # None: the trace ends before the task's task_end
    duration_ms: int | None = None
    turns: int = 0  # the agent's own model calls (inference lines without an origin)
    hook_inferences: int = 0  # model calls a hook made (inference lines with an origin)
    input_tokens: int = 0  # of the agent's own turns
    output_tokens: int = 0
    tool_calls: int = 0
    shell_calls: int = 0
    reopens: int = 0
    failures: list[Failure] = field(default_factory=list)


@dataclass
class ToolSummary:
    name: str
    calls: int = 0
    errors: int = 0  # calls whose status is not `ok`
    total_ms: int = 0
    max_ms: int = 0


@dataclass
class TraceSummary:
    path: Path
    session_id: str
    capsule: str
    model: str
    exit_status: str | None  # None: no session_end (the session did not finish)
    duration_ms: int
    tasks: list[TaskSummary]  # in the order they started
    tools: list[ToolSummary]  # most calls first, then by name
    cut_line: int | None = None  # the last line, cut short by a writer that died, skipped
    cut_lines: list[int] = field(default_factory=list)  # every line cut short, skipped

    @property
    def finished(self) -> bool:
        return self.exit_status is not None


class _Summing:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.start: TraceLine | None = None
        self.end: TraceLine | None = None
        self.last_timestamp = 0
        self.tasks: dict[str, TaskSummary] = {}
        self.tools: dict[str, ToolSummary] = {}

    def task(self, line: TraceLine) -> TaskSummary:
        task_id = line.text("task_id")
        summary = self.tasks.get(task_id)
        if summary is None:
            summary = self.tasks[task_id] = TaskSummary(task_id)
        return summary

    def add(self, line: TraceLine) -> None:
        kind = line.value.get("event_type")
        if "timestamp" in line.value:
            self.last_timestamp = max(self.last_timestamp, line.count("timestamp"))
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, line)

    def session_start(self, line: TraceLine) -> None:
        if self.start is None:  # an older trace may frame each attempt: the first one counts
            line.text("session_id")
            line.count("timestamp")
            self.start = line

    def session_end(self, line: TraceLine) -> None:
        line.text("exit_status")
        line.count("duration_ms")
        self.end = line

    def task_start(self, line: TraceLine) -> None:
        self.task(line)

    def inference(self, line: TraceLine) -> None:
        task = self.task(line)
        if line.value.get("origin") is not None:
            task.hook_inferences += 1
            return
        task.turns += 1
        task.input_tokens += line.count("input_tokens", 0)
        task.output_tokens += line.count("output_tokens", 0)  # absent on an uncounted failure

    def tool_call(self, line: TraceLine) -> None:
        self.task(line).tool_calls += 1
        name = line.text("tool_name")
        tool = self.tools.get(name)
        if tool is None:
            tool = self.tools[name] = ToolSummary(name)
        duration = line.count("duration_ms")
        tool.calls += 1
        tool.errors += line.text("status") != "ok"
        tool.total_ms += duration
        tool.max_ms = max(tool.max_ms, duration)

    def shell(self, line: TraceLine) -> None:
        self.task(line).shell_calls += 1

    def task_failed(self, line: TraceLine) -> None:
        reason = line.value.get("reason", "")
        if not isinstance(reason, str):
            raise line.fail("reason", f"expected a string, found {kind_of(reason)}")
        failure = Failure(line.maybe_count("turn"), line.text("cause"), reason)
        self.task(line).failures.append(failure)

    def task_reopened(self, line: TraceLine) -> None:
        self.task(line).reopens += 1

    def task_end(self, line: TraceLine) -> None:
        task = self.task(line)
        task.exit_status = line.text("exit_status")
        task.duration_ms = line.count("duration_ms")

    def summary(self, cut_line: int | None, cut_lines: list[int] | None = None
                ) -> TraceSummary:
        start = self.start
        if start is None:
            where = Where(self.path, 1) if self.tasks or self.end else Where(self.path)
            raise TraceFormatError("no session_start: not a session's trace", where=where)
        if self.end is not None:
            exit_status: str | None = self.end.text("exit_status")
            duration = self.end.count("duration_ms")
        else:
            exit_status = None
            duration = max(0, self.last_timestamp - start.count("timestamp"))
        capsule, model = start.value.get("capsule_name"), start.value.get("model")
        tools = sorted(self.tools.values(), key=lambda tool: (-tool.calls, tool.name))
        return TraceSummary(
            path=self.path, session_id=start.text("session_id"),
            capsule=capsule if isinstance(capsule, str) else "",
            model=model if isinstance(model, str) else "",
            exit_status=exit_status, duration_ms=duration, tasks=list(self.tasks.values()),
            tools=tools, cut_line=cut_line, cut_lines=list(cut_lines or []),
        )


_HANDLERS = {
    "session_start": _Summing.session_start,
    "session_end": _Summing.session_end,
    "task_start": _Summing.task_start,
    "inference": _Summing.inference,
    "tool_call": _Summing.tool_call,
    "shell": _Summing.shell,
    "task_failed": _Summing.task_failed,
    "task_reopened": _Summing.task_reopened,
    "task_end": _Summing.task_end,
}


def summarise(path: Path) -> TraceSummary:
    """The summary of the trace at `path`. Raises TraceFormatError (file, line, key) for a
    line it cannot read and OSError when the file cannot be opened."""
    return summarise_lines(path, read_trace(path))


def summarise_lines(path: Path, lines: TraceLines) -> TraceSummary:
    """The summary of lines already read from the trace at `path`."""
    summing = _Summing(path)
    for number, value in zip(lines.numbers, lines.events, strict=True):
        summing.add(TraceLine(path, number, value))
    return summing.summary(lines.cut_line, lines.cut_lines)
