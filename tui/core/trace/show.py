"""`murmur-tui trace`: a trace as `mur trace show` prints it, in plain text, or as one JSON object.

The sections and their wording are Murmur's (`crates/murmur-cli/src/commands/trace.rs`):
Session, Hook failures, Turns, Tokens, Tool calls, Redundant calls, Skill calls, Shell calls,
Compaction — then Failed, Reopens and Tasks. Turns through Compaction are always printed (a
`count: 0` says there were none, as Murmur does); the others only when they have rows; Tasks
only for a session that ran more than one task. Murmur refuses a trace without `session_end`;
here it is shown with `status: not ended`, and a last line cut short (a killed session) is
named on one line before the sections.

Every line printed goes through the one redaction (`tui.core.text.secrets`). A turn is
numbered from 1, as the screen and headless number it (`shown_turn`); the JSON keeps the
file's own `turn`, which Murmur counts from 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tui.core.text.secrets import redact, redact_value
from tui.core.trace.details import TraceDetails

INPUT_INLINE_LIMIT = 120  # characters of a tool call's compact JSON input on its row
REASON_LIMIT = 80  # characters of a reopen's or failure's reason
TASK_ID_LIMIT = 12  # `tsk_` and 8 characters of the id
HEADER_WIDTH = 49  # Murmur's section rules, `── Name ───…`, 49 characters wide
_NARROWER = {"Tasks": 1}  # …except the Tasks rule, one shorter
FIRST_TURN = 1  # what a person reads for a trace line's `turn: 0` (Murmur counts from 0)


def shown_turn(turn: int) -> int:
    """A trace line's `turn` as every text a person reads numbers it: from 1, as the screen,
    headless and the door's `inference turn <n>` do. The one place `trace show`, `steps` and
    `diff` turn the file's number into the one printed; the file and `--json` keep Murmur's."""
    return turn + FIRST_TURN


def header(name: str) -> str:
    width = HEADER_WIDTH - _NARROWER.get(name, 0) - len(name) - 4
    return f"── {name} {'─' * max(3, width)}"


def fmt_thousands(number: int) -> str:
    return f"{number:,}"


def fmt_dur(ms: int) -> str:
    return f"{ms}ms" if ms < 1000 else f"{ms / 1000:.1f}s"


def fmt_avg(values: list[int], form: Callable[[int], str]) -> str:
    return form(int(sum(values) / len(values))) if values else "—"


def fmt_input_inline(value: Any) -> str:
    """Compact JSON of a tool call's input, cut at 120 characters with `…`; '' for none."""
    if value is None:
        return ""
    text = redact(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return f"  {text[:INPUT_INLINE_LIMIT]}…" if len(text) > INPUT_INLINE_LIMIT else f"  {text}"


def fmt_exit_codes(codes: list[int]) -> str:
    parts = [f"{codes.count(0)} ok"] if 0 in codes else []
    parts += [f"{codes.count(code)} failed (exit {code})" for code in sorted(set(codes) - {0})]
    return ", ".join(parts)


def _cut(text: str, limit: int) -> str:
    return text[:limit]


def _ok_rate(ok: int, total: int) -> str:
    return f"count:      {total}  ({ok} ok, {total - ok} error)  success {100 * ok / total:.1f}%"


def render(details: TraceDetails) -> str:
    """The whole text `murmur-tui trace` prints, every line redacted."""
    return "".join(redact(line) + "\n" for line in _lines(details))


def _lines(d: TraceDetails) -> Iterator[str]:
    s = d.summary
    inside = [number for number in s.cut_lines if number != s.cut_line]
    if inside:
        numbers = ", ".join(str(number) for number in inside)
        yield (f"trace line{'s' if len(inside) > 1 else ''} {numbers} cut short (a session was "
               f"stopped mid-line and a later one wrote on), skipped; {d.lines_read} lines read")
    if s.cut_line is not None:
        yield (f"trace ends in a cut line (the session was stopped); {d.lines_read} lines "
               "read")
    if s.cut_lines:
        yield ""
    yield header("Session")
    yield f"session:    {s.session_id}"
    yield f"capsule:    {s.capsule} v{d.session.capsule_version}"
    yield f"model:      {s.model}"
    yield f"status:     {s.exit_status if s.exit_status is not None else 'not ended'}"
    yield f"duration:   {fmt_dur(s.duration_ms)}"
    info = d.session
    if info.capabilities:
        yield f"capabilities: {', '.join(info.capabilities)}"
    if info.tools_declared:
        yield f"tools:      {', '.join(info.tools_declared)}"
    if info.containment_declared is not None and info.containment_achieved is not None:
        yield f"containment: {info.containment_declared} → {info.containment_achieved}"
    if info.workdir_exec is not None:
        yield f"workdir exec: {'yes' if info.workdir_exec else 'no'}"
    if info.system_prompt_source is not None:
        sha = info.system_prompt_sha256
        short = f"  {sha[:12]}…" if sha and len(sha) > 12 else (f"  {sha}" if sha else "")
        yield f"prompt:     {info.system_prompt_source}{short}"
    yield ""
    if d.hook_failures:
        yield header("Hook failures")
        yield from (f"✗ {f.hook_name}  {f.event}  {f.arm}" for f in d.hook_failures)
        yield ""
    totals = d.totals
    yield header("Turns")
    maximum = info.max_turns if info.max_turns is not None else "—"
    yield f"count:      {totals.turns}  (max: {maximum})"
    yield ""
    yield from _tokens(d)
    yield from _tool_calls(d)
    yield header("Redundant calls")
    yield f"count:      {len(d.redundant)}"
    for r in d.redundant:
        yield (f"  turn {shown_turn(r.turn)}  {r.tool_name}  {r.resource}  "
               f"(re-reads turn {shown_turn(r.prior_turn)})")
    yield ""
    yield from _skill_calls(d)
    yield header("Shell calls")
    if totals.shell_calls == 0 and not d.shell_calls:
        yield "count:      0"
    else:
        yield f"count:      {totals.shell_calls}"
        yield f"exit codes: {fmt_exit_codes([row.exit_code for row in d.shell_calls])}"
        yield f"latency:    avg {fmt_avg([row.duration_ms for row in d.shell_calls], fmt_dur)}"
    yield ""
    yield header("Compaction")
    c = d.compaction
    if c is None:
        yield "fired:      no"
    else:
        yield (f"fired:      yes  at turn {shown_turn(c.turn)}  "
               f"({fmt_thousands(c.tokens_before)} → {fmt_thousands(c.tokens_after)} tokens)")
    for declined in d.declined:
        yield (f"declined:   at turn {shown_turn(declined.turn)}  "
               f"({fmt_thousands(declined.tokens)} tokens)  {declined.reason}")
    yield from _failed_reopens_tasks(d)


def _tokens(d: TraceDetails) -> Iterator[str]:
    t = d.totals

    def per_turn(count: int) -> str:
        return f"{count / t.turns:.0f}" if t.turns else "—"

    yield header("Tokens")
    yield f"input:      {fmt_thousands(t.input_tokens)}  (avg {per_turn(t.input_tokens)}/turn)"
    yield f"output:     {fmt_thousands(t.output_tokens)}  (avg {per_turn(t.output_tokens)}/turn)"
    yield f"total:      {fmt_thousands(t.input_tokens + t.output_tokens)}"
    p = d.provider_tokens
    if p is not None:
        yield (f"provider:   in {fmt_thousands(p.input)}, out {fmt_thousands(p.output)}, "
               f"cached {fmt_thousands(p.cached)}, cache write {fmt_thousands(p.cache_write)}")
    yield ""


def _tool_calls(d: TraceDetails) -> Iterator[str]:
    yield header("Tool calls")
    calls = d.tool_calls
    total = d.totals.tool_calls
    if total == 0 and not calls:
        yield "count:      0"
    else:
        yield _ok_rate(sum(call.status == "ok" for call in calls), total or len(calls))
        yield f"latency:    avg {fmt_avg([call.duration_ms for call in calls], fmt_dur)}"
        by_turn: dict[int, list[str]] = {}
        for call in calls:
            mark = "✓" if call.status == "ok" else "✗"
            by_turn.setdefault(call.turn, []).append(
                f"{call.tool_name} {fmt_dur(call.duration_ms)} {mark}"
                f"{fmt_input_inline(call.input)}")
        for turn in sorted(set(by_turn) | set(d.decisions)):
            parts = by_turn.get(turn)
            said = '  '.join(parts) if parts else d.decisions[turn]
            yield f"  turn {shown_turn(turn)}  {said}"
    yield ""


def _skill_calls(d: TraceDetails) -> Iterator[str]:
    yield header("Skill calls")
    calls = d.skill_calls
    if not calls:
        yield "count:      0"
    else:
        yield _ok_rate(sum(call.status == "ok" for call in calls), len(calls))
        yield f"latency:    avg {fmt_avg([call.duration_ms for call in calls], fmt_dur)}"
        by_turn: dict[int, list[str]] = {}
        for call in calls:
            mark = "✓" if call.status == "ok" else "✗"
            by_turn.setdefault(call.turn, []).append(
                f"{call.skill_name} {fmt_dur(call.duration_ms)} {mark}")
        for turn in sorted(by_turn):
            yield f"  turn {shown_turn(turn)}  {'  '.join(by_turn[turn])}"
    yield ""


def _failed_reopens_tasks(d: TraceDetails) -> Iterator[str]:
    if d.failed:
        yield ""
        yield header("Failed")
        for f in d.failed:
            where = f"turn {shown_turn(f.turn)}" if f.turn is not None else "task"
            yield f"{where}  {f.cause}  “{_cut(f.reason, REASON_LIMIT)}”"
    if d.reopens:
        yield ""
        yield header("Reopens")
        for r in d.reopens:
            turns = ([] if r.turns_remaining is None else
                     [f"{r.turns_remaining} turn{'' if r.turns_remaining == 1 else 's'} left"])
            parts = ([r.attempt_context] if r.attempt_context else []) + turns
            next_attempt = f"{', '.join(parts)}  " if parts else ""
            yield (f"reopen {r.reopen_number}  by {r.hook_name}  {next_attempt}"
                   f"“{_cut(r.reason, REASON_LIMIT)}”")
    tasks = d.summary.tasks
    if len(tasks) > 1:
        yield header("Tasks")
        for number, task in enumerate(tasks, start=1):
            status = task.exit_status if task.exit_status is not None else "not ended"
            duration = fmt_dur(task.duration_ms) if task.duration_ms is not None else "—"
            reopens = f"  reopens: {task.reopens}" if task.reopens else ""
            yield (f"task {number}  {task.task_id[:TASK_ID_LIMIT]}  turns: {task.turns}  "
                   f"in: {fmt_thousands(task.input_tokens)}  "
                   f"out: {fmt_thousands(task.output_tokens)}  {status}  {duration}{reopens}")


def to_json(details: TraceDetails) -> dict[str, Any]:
    """One JSON object for scripts: the summary, the redundant calls and every section's rows
    (docs/trace.md lists the fields), redacted."""
    summary = asdict(details.summary)
    summary["path"] = str(details.summary.path)
    summary["finished"] = details.summary.finished
    value: dict[str, Any] = {
        "trace": str(details.summary.path),
        "cut_line": details.summary.cut_line,
        "cut_lines": details.summary.cut_lines,
        "lines_read": details.lines_read,
        "summary": summary,
        "redundant_calls": [asdict(row) for row in details.redundant],
        "sections": {
            "session": asdict(details.session),
            "totals": asdict(details.totals),
            "hook_failures": [asdict(row) for row in details.hook_failures],
            "turns": [{"turn": turn, "decision": decision}
                      for turn, decision in sorted(details.decisions.items())],
            "tool_calls": [asdict(row) for row in details.tool_calls],
            "skill_calls": [asdict(row) for row in details.skill_calls],
            "shell_calls": [asdict(row) for row in details.shell_calls],
            "compactions": [asdict(row) for row in details.compactions],
            "compactions_declined": [asdict(row) for row in details.declined],
            "failed": [asdict(row) for row in details.failed],
            "reopens": [asdict(row) for row in details.reopens],
            "provider_tokens": (asdict(details.provider_tokens)
                                if details.provider_tokens is not None else None),
        },
    }
    redacted = redact_value(value)
    assert isinstance(redacted, dict)
    return redacted


def remember_known_keys(home: Path) -> None:
    """Register the keys this user has (config.yaml's credentials, credential-shaped
    environment variables) with the one redaction, so a trace another host wrote that holds
    one of them prints `[redacted]` in its place."""
    import os

    from tui.core.errors import YamlError
    from tui.core.manifest.located_yaml import read_private
    from tui.core.text.secrets import credential_shaped, remember

    for name, value in os.environ.items():
        if credential_shaped(name):
            remember(value)
    try:
        data = read_private(home / "config.yaml") or {}
    except (OSError, YamlError):  # an unreadable config.yaml holds no key to hide here
        return
    found = data.get("credentials") if isinstance(data, dict) else None
    if isinstance(found, dict):
        for value in found.values():
            if isinstance(value, str):
                remember(value)
