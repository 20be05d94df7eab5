"""`murmur-tui trace steps`: what the agent did, turn by turn, as `mur trace steps` prints it
(Murmur v0.11, spec §6.5; rows and their wording from `crates/murmur-cli/src/commands/trace.rs`).

A trace whose lines carry `event_id` is a tree: each line hangs under the line its `parent_id`
names (a turn-level line whose parent is not in the file hangs under its task's `task_start`),
one indent level per rendered ancestor, in file order within a parent; `session_start` itself is
not a row. A trace without `event_id` (Murmur v0.2.0) is one row per turn:
`  <turn> <decision> <tool> <duration>`. Turns are numbered from 1, as the screen and
headless number them (`show.shown_turn`; the file's `turn` counts from 0). `--verbose` adds
each tool call's first string input, cut at 60 characters.

Rows for the event types Murmur's source shows are in its words. Four the spec names without
their row (`task_failed`, `task_rejected`, `tool_input_refused`, `artifact_pulled`) are written
here in the same shape — the event type, then its fields — and are the place to change when
Murmur's wording is known.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tui.core.errors import TraceFormatError, Where
from tui.core.text.printable import printable
from tui.core.text.secrets import redact
from tui.core.trace.fields import TraceLine
from tui.core.trace.reader import TraceLines
from tui.core.trace.show import fmt_dur, fmt_thousands, shown_turn

KIND_WIDTH = 11  # the column a row's own detail starts in, after its event type
ID_WIDTH = 12
SUMMARY_LIMIT = 60  # characters of a tool call's first string input under --verbose
MAX_DEPTH = 64  # a tree deeper than this is not one Murmur writes: flattened there


def short(identifier: str, length: int = ID_WIDTH) -> str:
    """An id cut to `length` characters, with `…` when anything was cut (Murmur's fmt_id_short)."""
    return f"{identifier[:length]}…" if len(identifier) > length else identifier


def _kind(name: str) -> str:
    return f"{name} " if len(name) >= KIND_WIDTH else f"{name:<{KIND_WIDTH}}"


def _tick(status: str) -> str:
    return "✓" if status == "ok" else "✗"


def input_summary(value: Any) -> str:
    """The first string anywhere in a tool call's input, quoted, cut at 60 characters."""
    found = _first_string(value, 0)
    if found is None:
        return ""
    return f'"{found[:SUMMARY_LIMIT]}…"' if len(found) > SUMMARY_LIMIT else f'"{found}"'


def _first_string(value: Any, depth: int) -> str | None:
    if isinstance(value, str):
        return value
    if depth > MAX_DEPTH:
        return None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) \
        else ()
    for item in items:
        found = _first_string(item, depth + 1)
        if found is not None:
            return found
    return None


def _task(line: TraceLine, _verbose: bool) -> str:
    origin, trust = line.maybe_text("origin", "") or "", line.maybe_text("trust", "") or ""
    provenance = "/".join(part for part in (origin, trust) if part)
    lane = line.maybe_text("lane", "") or ""
    delegation = line.maybe_text("delegation_id", "") or ""
    notes = [part for part in (line.maybe_text("source", "") or "", provenance,
                               f"lane {lane}" if lane else "",
                               f"delegation {delegation}" if delegation else "") if part]
    context = line.maybe_text("context_id", "") or ""
    annotation = "  (" + ", ".join(notes) + ")" if notes else ""
    return f"task {short(line.text('task_id'))}{f'  {short(context)}' if context else ''}" \
        + annotation


def _inference(line: TraceLine, _verbose: bool) -> str:
    decision = line.text("decision")
    origin = line.maybe_text("origin")
    if origin is not None:  # a hook's completion hangs off the turn it ran inside
        return f"{_kind('inference')}{origin}  {decision}"
    capped = "  [truncated at inference.max_tokens]" \
        if line.maybe_text("stop_reason") == "max_tokens" else ""
    tool = line.maybe_text("tool_name")
    return f"turn {shown_turn(line.count('turn'))}  {decision}{f'  {tool}' if tool else ''}{capped}"


def _tool_call(line: TraceLine, verbose: bool) -> str:
    summary = input_summary(line.value.get("input")) if verbose else ""
    return (f"{_kind('tool_call')}{line.text('tool_name')}  {fmt_dur(line.count('duration_ms'))}"
            f"  {_tick(line.text('status'))}{f'  {summary}' if summary else ''}")


def _binary(line: TraceLine) -> str:
    return line.maybe_text("binary", "—") or "—"


def _shell(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('shell')}{_binary(line)}  exit {line.integer('exit_code')}  "
            f"{fmt_dur(line.count('duration_ms'))}")


def _shell_detached(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('shell_detached')}{_binary(line)}  {short(line.text('work_id'))}  "
            f"detached after {fmt_dur(line.count('grace_ms'))}")


def _shell_completed(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('shell_completed')}{_binary(line)}  {short(line.text('work_id'))}  "
            f"exit {line.integer('exit_code')} {_tick(line.text('status'))}  "
            f"{fmt_dur(line.count('duration_ms'))}  {line.maybe_text('output_path', '') or ''}")


def _shell_abandoned(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('shell_abandoned')}{_binary(line)}  {short(line.text('work_id'))}  "
            f"still running after {fmt_dur(line.count('running_ms'))}  result lost")


def _shell_lost(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('shell_lost')}{_binary(line)}  {short(line.text('work_id'))}  detached at "
            f"{line.count('detached_at_ms')}  no result, reported by "
            f"{short(line.maybe_text('reconciled_by_session', '—') or '—')}")


def _skill_call(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('skill_call')}{line.text('skill_name')}  "
            f"{fmt_dur(line.count('duration_ms'))}  {_tick(line.text('status'))}")


def _compaction(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('compaction')}{fmt_thousands(line.count('tokens_before'))} → "
            f"{fmt_thousands(line.count('tokens_after'))} tokens")


def _declined(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('compaction_declined')}{fmt_thousands(line.count('tokens'))} tokens  "
            f"{line.text('reason')}")


def _seed(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('context_seed')}{line.text('hook_name')}  {line.text('outcome')}  "
            f"{fmt_thousands(line.count('tokens'))} tokens")


def _reopened(line: TraceLine, _verbose: bool) -> str:
    context = line.maybe_text("attempt_context")
    return (f"{_kind('task_reopened')}{line.text('hook_name')}  reopen "
            f"{line.count('reopen_number')}{f' {context}' if context else ''}")


def _canceled(line: TraceLine, _verbose: bool) -> str:
    running, stopped = line.texts("detached_work_ids"), line.texts("delegation_ids")
    said = [f"{len(running)} still running: {', '.join(running)}"] if running else []
    if stopped:
        said.append(f"{len(stopped)} delegation(s) live at the cancel: {', '.join(stopped)}")
    return f"{_kind('task_canceled')}{line.text('phase')}  {'; '.join(said) or 'no residue'}"


def _denied(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('call_denied')}{line.text('event')}  {line.text('target')}  denied by "
            f"{line.text('hook_name')}")


def _spend(line: TraceLine, _verbose: bool) -> str:
    origin = line.maybe_text("origin")
    return (f"{_kind('spend_ceiling_reached')}{line.text('limit')}  used "
            f"{fmt_thousands(line.count('used'))} of {fmt_thousands(line.count('ceiling'))}  "
            f"needs {fmt_thousands(line.count('requested'))}{f'  {origin}' if origin else ''}")


def _protected(line: TraceLine, _verbose: bool) -> str:
    return (f"{_kind('protected_path_denied')}{line.text('call')}  {line.text('path')}  "
            f"rule {line.text('rule')}")


def _failed(line: TraceLine, _verbose: bool) -> str:
    turn = line.maybe_count("turn")
    reason = (line.maybe_text("reason", "") or "")[:80]
    at = f"  turn {shown_turn(turn)}" if turn is not None else ""
    return f"{_kind('task_failed')}{line.text('cause')}{at}{f'  {reason}' if reason else ''}"


def _rejected(line: TraceLine, _verbose: bool) -> str:
    return f"{_kind('task_rejected')}{line.text('cause')}"


def _input_refused(line: TraceLine, _verbose: bool) -> str:
    reason = (line.maybe_text("reason", "") or "")[:80]
    said = f"  {reason}" if reason else ""
    return f"{_kind('tool_input_refused')}{line.text('tool_name')}{said}"


def _pulled(line: TraceLine, _verbose: bool) -> str:
    return f"{_kind('artifact_pulled')}{line.text('name')}@{line.text('version')}"


def _plan(kind: str) -> Callable[[TraceLine, bool], str]:
    def row(line: TraceLine, _verbose: bool) -> str:
        if kind == "plan_start":
            steps = line.count("step_count")
            return f"{_kind(kind)}{line.text('plan_id')}  {steps} step{'s' if steps != 1 else ''}"
        if kind == "plan_step_start":
            after = "  after " + ", ".join(line.texts("depends_on")) \
                if line.texts("depends_on") else ""
            return f"{_kind(kind)}{line.text('step_id')}  {line.text('kind')}{after}"
        if kind == "plan_step":
            return (f"{_kind(kind)}{line.text('step_id')}  {line.text('kind')}  "
                    f"{line.text('status')}  {fmt_dur(line.count('duration_ms'))}")
        failed = line.maybe_text("failed_step")
        return f"{_kind(kind)}{line.text('outcome')}{f'  failed at {failed}' if failed else ''}"
    return row


ROWS: dict[str, Callable[[TraceLine, bool], str]] = {
    "task_start": _task, "inference": _inference, "tool_call": _tool_call, "shell": _shell,
    "shell_detached": _shell_detached, "shell_completed": _shell_completed,
    "shell_abandoned": _shell_abandoned, "shell_lost": _shell_lost, "skill_call": _skill_call,
    "compaction": _compaction, "compaction_declined": _declined, "context_seed": _seed,
    "task_reopened": _reopened, "task_canceled": _canceled, "call_denied": _denied,
    "spend_ceiling_reached": _spend, "protected_path_denied": _protected,
    "task_failed": _failed, "task_rejected": _rejected, "tool_input_refused": _input_refused,
    "artifact_pulled": _pulled,
    **{kind: _plan(kind) for kind in ("plan_start", "plan_step_start", "plan_step", "plan_end")},
}


def render_steps(path: Path, lines: TraceLines, verbose: bool = False) -> str:
    """The `steps` text of a trace already read; TraceFormatError (file, line, key) for a line
    whose rendered fields have the wrong type, or for a trace with no line at all."""
    if not lines.events:
        raise TraceFormatError("trace file is empty (incomplete or zero-event session)",
                               where=Where(path))
    records = [TraceLine(path, number, value)
               for number, value in zip(lines.numbers, lines.events, strict=True)]
    tree = any(isinstance(line.value.get("event_id"), str) for line in records)
    out = list(_tree(records, verbose) if tree else _flat(records, verbose))
    return redact(printable("\n".join(out) + "\n"))


def _session_id(records: list[TraceLine]) -> str:
    start = next((line for line in records if line.event_type == "session_start"), None)
    return start.text("session_id") if start is not None else "—"


def _turns(count: int) -> str:
    return f"{count} turn{'s' if count != 1 else ''}"


def _tree(records: list[TraceLine], verbose: bool) -> Iterator[str]:
    by_event: dict[str, int] = {}
    task_nodes: dict[str, int] = {}
    tasks = turns = 0
    for index, line in enumerate(records):
        event_id = line.value.get("event_id")
        if isinstance(event_id, str):
            by_event[event_id] = index
        if line.event_type == "task_start":
            tasks += 1
            task_nodes[line.text("task_id")] = index
        elif line.event_type == "inference" and line.value.get("origin") is None:
            turns += 1
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for index, line in enumerate(records):
        parent_id, task_id = line.value.get("parent_id"), line.value.get("task_id")
        parent = by_event.get(parent_id) if isinstance(parent_id, str) else None
        if parent is None and isinstance(task_id, str):
            parent = task_nodes.get(task_id)
        if parent is None or parent == index or parent > index:  # a parent is written first
            roots.append(index)
        else:
            children.setdefault(parent, []).append(index)
    task_note = "" if tasks == 0 else "1 task, " if tasks == 1 else f"{tasks} tasks, "
    yield f"Session {_session_id(records)}  ({task_note}{_turns(turns)})"
    for root in roots:
        yield from _walk(records, children, root, 0, verbose)
    yield ""


def _walk(records: list[TraceLine], children: dict[int, list[int]], index: int, depth: int,
          verbose: bool) -> Iterator[str]:
    """Depth first, iteratively: a hostile trace's deep chain of parents costs no recursion."""
    stack: list[tuple[int, int]] = [(index, depth)]
    while stack:
        at, level = stack.pop()
        line = records[at]
        row = ROWS.get(line.event_type or "")
        below = level
        if row is not None:
            if line.event_type == "task_start":
                yield ""
            yield f"{'  ' * min(level, MAX_DEPTH)}{row(line, verbose)}"
            below = level + 1
        stack.extend((child, below) for child in reversed(children.get(at, [])))


def _flat(records: list[TraceLine], verbose: bool) -> Iterator[str]:
    inferences: list[tuple[int, str, str]] = []
    durations: dict[int, int] = {}
    inputs: dict[int, str] = {}
    for line in records:
        if line.event_type == "inference":
            inferences.append((line.count("turn"), line.text("decision"),
                               line.maybe_text("tool_name", "—") or "—"))
        elif line.event_type in ("tool_call", "skill_call"):
            turn = line.count("turn", 0)
            durations.setdefault(turn, line.count("duration_ms"))
            summary = input_summary(line.value.get("input")) if verbose else ""
            if summary:
                inputs.setdefault(turn, summary)
    yield f"Session {_session_id(records)}  ({_turns(len(inferences))})"
    yield ""
    width = max([12] + [len(tool) for _, _, tool in inferences])
    for turn, decision, tool in inferences:
        duration = fmt_dur(durations[turn]) if turn in durations else "—"
        summary = inputs.get(turn, "")
        if summary:
            yield f"  {shown_turn(turn):<3}{decision:<13}{tool:<{width}}{duration:<5}   {summary}"
        else:
            yield f"  {shown_turn(turn):<3}{decision:<13}{tool:<{width}}{duration}"
    yield ""
