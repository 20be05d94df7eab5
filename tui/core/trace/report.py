"""`murmur-tui trace report`: many sessions summed up, as `mur trace report` prints them
(Murmur v0.11, spec §6.5; blocks, table and wording from `crates/murmur-cli/src/commands/trace.rs`).

One block per session, then mean / standard deviation (of the population) / min / max of turns,
duration, tokens, tool calls, tool success, shell calls and redundant calls, the exit statuses
with their share, and — when some session ran more than one task — the same table per task.
Which sessions: every `ses_*` folder of the workdir, the newest `--last N`, those minted in the
last `--since 30m|2h|1d` (a session id's first 48 bits are its mint time), or the addresses
given. A session that did not end (no `session_end`) or whose trace cannot be read is skipped,
and counted on stderr, as Murmur skips one.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from tui.core.errors import TraceNotFound, Where
from tui.core.text.printable import printable
from tui.core.text.secrets import redact
from tui.core.trace.analyse import TaskSummary
from tui.core.trace.compare import Metrics
from tui.core.trace.show import fmt_dur, fmt_exit_codes, fmt_thousands

LABEL_WIDTH = 22
VALUE_WIDTH = 14
_UNITS = {"m": 60_000, "h": 3_600_000, "d": 86_400_000}


def since_ms(text: str) -> int:
    """`30m`, `2h`, `1d` in milliseconds; TraceNotFound (E-TRC-002) in Murmur's words else."""
    number, unit = text[:-1], text[-1:]
    if unit not in _UNITS or not (number.isascii() and number.isdigit()):
        raise TraceNotFound(f"unrecognised --since format '{text[:40]}' — expected <N>m, <N>h, "
                            "or <N>d")
    return int(number) * _UNITS[unit]


def minted_ms(session_id: str) -> int | None:
    """A session id's mint time (the first 12 hex digits of its UUIDv7), None if it has none."""
    digits = session_id.removeprefix("ses_")[:12]
    try:
        return int(digits, 16) if len(digits) == 12 else None
    except ValueError:
        return None


def choose(sessions: list[tuple[str, Path]], workdir: Path, last: int | None,
           since: str | None, now_ms: int) -> list[Path]:
    """The traces of the workdir's sessions (oldest first) that `--last` / `--since` keep."""
    if not sessions:
        raise TraceNotFound(f"no sessions found in workdir at {workdir}", where=Where(workdir))
    if since is not None:
        cutoff = now_ms - since_ms(since)
        sessions = [(s, p) for s, p in sessions if (minted_ms(s) or -1) >= cutoff]
        if not sessions:
            raise TraceNotFound(f"no sessions matched --since {since} in workdir at {workdir}")
    if last is not None:
        sessions = sessions[-last:]
    return [path for _, path in sessions]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _stddev(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = _mean(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def _table_head() -> Iterator[str]:
    yield (f"{'Metric':<{LABEL_WIDTH}} {'Mean':<{VALUE_WIDTH}} {'StdDev':<{VALUE_WIDTH}} "
           f"{'Min':<{VALUE_WIDTH}} Max")
    yield " ".join("─" * width for width in (LABEL_WIDTH, *[VALUE_WIDTH] * 4))


def _stat(label: str, values: Sequence[float], form: Callable[[float], str]) -> str:
    cells = [form(_mean(values)), form(_stddev(values)), form(min(values)), form(max(values))]
    return f"{label:<{LABEL_WIDTH}} " + " ".join(f"{cell:<{VALUE_WIDTH}}" for cell in cells[:3]) \
        + f" {cells[3]}"


def _one(value: float) -> str:
    return f"{value:.1f}"


def _thousands(value: float) -> str:
    return fmt_thousands(int(value))


def _block(m: Metrics) -> Iterator[str]:
    turns = f"{m.turns} turn{'s' if m.turns != 1 else ''}"
    yield f"Session {short_session(m.session_id)}  {fmt_dur(m.duration_ms)}  {turns}"
    yield ""
    errors = f"  ({m.tool_ok} ok, {m.tool_error} error)" if m.tool_error else ""
    yield f"  {'Tool calls:':<14} {m.tool_calls}{errors}"
    if m.shell_calls:
        yield f"  {'Shell calls:':<14} {m.shell_calls}  exit codes: {fmt_exit_codes(m.shell_codes)}"
    if m.redundant:
        yield f"  Redundant calls: {m.redundant}"
    if m.tool_latency is not None:
        shell = f"  shell {fmt_dur(int(m.shell_latency))}" if m.shell_latency is not None else ""
        yield f"  {'Avg latency:':<14} tool {fmt_dur(int(m.tool_latency))}{shell}"
    yield ""


def short_session(session_id: str) -> str:
    """`ses_` and 8 characters, then `...` (Murmur's fmt_session_short)."""
    return f"{session_id[:12]}..." if len(session_id) > 12 else session_id


def render_report(workdir: Path, metrics: list[Metrics], tasks: list[TaskSummary]) -> str:
    """The report of `metrics` (one per session, in order); `tasks` are the tasks of the
    sessions that ran more than one."""
    out: list[str] = []
    for m in metrics:
        out.extend(_block(m))
    out += [f"Sessions: {len(metrics)}  ({workdir})", "", *_table_head()]
    columns: list[tuple[str, Sequence[float], Callable[[float], str]]] = [
        ("turns", [m.turns for m in metrics], _one),
        ("duration (ms)", [m.duration_ms for m in metrics], _thousands),
        ("input tokens", [m.input_tokens for m in metrics], _thousands),
        ("output tokens", [m.output_tokens for m in metrics], _thousands),
        ("tool calls", [m.tool_calls for m in metrics], _one),
        ("tool success (%)", [m.tool_success for m in metrics if m.tool_success is not None],
         _one),
        ("shell calls", [m.shell_calls for m in metrics], _one),
        ("redundant calls", [m.redundant for m in metrics], _one),
    ]
    out += [_stat(label, values, form) for label, values, form in columns if values]
    out += ["", "Exit status:"]
    counts = Counter(m.exit_status for m in metrics)
    out += [f"  {status:<24} {count}  ({100 * count / len(metrics):.1f}%)"
            for status, count in sorted(counts.items())]
    if tasks:
        out += ["", "── Per-task averages (multi-task sessions only) ──────────────",
                *_table_head()]
        ended = [t for t in tasks if t.duration_ms is not None]
        out += [_stat("task turns", [t.turns for t in tasks], _one),
                _stat("task input tokens", [t.input_tokens for t in tasks], _thousands),
                _stat("task output tokens", [t.output_tokens for t in tasks], _thousands)]
        if ended:
            out.append(_stat("task duration (ms)", [t.duration_ms or 0 for t in ended],
                             _thousands))
        out.append(f"Tasks: {len(tasks)}")
    return redact(printable("\n".join(out) + "\n"))
