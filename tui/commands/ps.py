"""`murmur-tui ps`: every session under `$MURMUR_HOME/running/` — Murmur's and murmur-tui's —
verified as Murmur verifies it, with what it is doing (docs/fleet.md, "Finding running
sessions").

What a session is doing comes from its `trace.jsonl` (in its records directory, else its
workdir: RunningRecord.trace_dir) when that is on this machine (the open task: a `task_start`
with no `task_end` after it; the model from `session_start`), and from its door: `GetTask` on
that task says whether it waits for an answer. A door of the 0.3 or an older generation answers
`tasks/get` without an id with its active task, so its state is known without a trace. Anything
else is `unknown`.

Everything `ps` reads is hostile input: a record is judged alone (one that is not a record is
named on stderr, the others are listed), and the session's files are read through
tui/core/fs/safe_read.py — a FIFO, a link or a device where `trace.jsonl` or `task.md` should be is
named and passed over, never waited on — and only a bounded head and tail of the trace.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tui.commands.ps_formations import FORMATION_WIDTH, grouped, summaries
from tui.core import names
from tui.core.a2a.card import DOOR_WORDS, METHODS
from tui.core.a2a.task import TERMINAL, artifact_text, first_user_text, parts_text, task_state
from tui.core.a2a.task import unwrap as unwrap_task
from tui.core.errors import FileRefused
from tui.core.fs.safe_read import read_bounded
from tui.core.running import probe as door_probe
from tui.core.running import records, tokens
from tui.core.running.liveness import Verdict
from tui.core.text.printable import printable
from tui.core.text.secrets import redact
from tui.core.trace.glance import trace_facts

if TYPE_CHECKING:
    import httpx

STATUS_WORDS = {"live": "running", "unreachable": "unreachable", "gone": "gone"}
MAX_TASK_CHARS = 60  # the TASK column
MAX_TASK_MD = 4096


@dataclass
class SessionRow:
    record: records.RunningRecord
    verdict: Verdict
    state: str = "unknown"  # working / needs you / idle / unknown ("-" when gone)
    model: str | None = None
    task: str | None = None
    question: str | None = None
    name: str | None = None  # the session's name (tui/core/names.py)
    notes: list[str] = field(default_factory=list)  # files of the session not read, and why

    def to_json(self) -> dict[str, Any]:
        record = self.record
        return {
            "session_id": record.session_id,
            "name": self.name,
            "capsule": f"{record.capsule_name}@{record.capsule_version}",
            "capsule_name": record.capsule_name,
            "capsule_version": record.capsule_version,
            "status": STATUS_WORDS[self.verdict.state],
            "reason": _shown(self.verdict.reason),
            "door": DOOR_WORDS[self.verdict.door] if self.verdict.door else None,
            "state": self.state,
            "model": _shown(self.model),
            "task": _shown(self.task),
            "question": _shown(self.question),
            "detached": record.outlives_launcher,
            "started_at": record.started_at,
            "uptime_secs": records.started_seconds_ago(record.started_at),
            "url": record.url,
            "pid": record.pid,
            "workdir": str(record.workdir),
            "records_dir": str(record.records_dir) if record.records_dir else None,
            "formation_id": record.formation_id,
            "formation_member": record.kept.get("formation_member"),
            "formation_entry": record.kept.get("formation_entry"),
        }


@dataclass
class Listing:
    rows: list[SessionRow]
    problems: list[str]


def gather(home: Path, timeout: float = door_probe.PROBE_TIMEOUT,
           credential: str = tokens.OPERATOR) -> Listing:
    """Every record, verified (doors probed concurrently), with its state; the files that are
    not records as one sentence each. `credential` names the token presented to each door
    that authenticates (the operator's, or a declared one's from the record's `credentials`)."""
    found = records.read_records(home)
    held = [item.record for item in found if item.record is not None]
    shown = [tokens.read_token(home, record, credential) for record in held]
    verdicts = door_probe.verify_all(held, timeout, tokens=shown, credential=credential)
    known = names.read(home)
    rows = [SessionRow(record, verdict, name=names.name_of(home, record.session_id, record.kept,
                                                           known))
            for record, verdict in zip(held, verdicts, strict=True)]
    if rows:
        from concurrent.futures import ThreadPoolExecutor

        import httpx

        with httpx.Client(timeout=timeout, trust_env=False) as client, \
                ThreadPoolExecutor(max_workers=min(door_probe.MAX_PROBES, len(rows))) as pool:
            list(pool.map(lambda pair: _fill(pair[0], client, pair[1]),
                          zip(rows, shown, strict=True)))
    return Listing(rows, records.describe(found))


def _fill(row: SessionRow, client: httpx.Client, token: str | None) -> None:
    """The row's state, model and task, from its trace and, when it is live, its door."""
    trace_file = row.record.trace_dir / "trace.jsonl"
    facts = trace_facts(trace_file)
    if facts is not None and facts.problem is not None:
        row.notes.append(f"{trace_file}: {facts.problem}; not read")
        facts = None
    if facts is not None:
        row.model = facts.model
    if row.verdict.state == "gone":
        row.state = "-"
        return
    task: dict[str, Any] | None = None
    if facts is not None:
        if facts.task_id is None or facts.ended:
            row.state = "idle"
            return
        row.state = "working"
        if row.verdict.state == "live" and row.record.url is not None:
            method = METHODS["get"][row.verdict.door or "C"] or "GetTask"
            task = _task(door_probe.rpc_call(client, row.record, row.verdict, method,
                                             {"id": facts.task_id}, token))
        if facts.task_source == "task_md":
            row.task = _task_md(row)
    elif row.verdict.state == "live" and row.verdict.door in ("A", "B"):  # the active task
        task = _task(door_probe.rpc_call(client, row.record, row.verdict, "tasks/get", None,
                                         token))
        row.state = "working" if task is not None else "unknown"
    if task is None:
        return
    status = task.get("status")
    state = task_state(status.get("state")) if isinstance(status, dict) else ""
    if state == "input-required":
        row.state = "needs you"
        row.question = _question(task)
    elif state in TERMINAL:
        row.state = "idle"
    row.task = first_user_text(task) or row.task


def _task(result: Any) -> dict[str, Any] | None:
    task = unwrap_task(result)  # a SendMessage-shaped answer, or a bare task
    return task if isinstance(task, dict) and "status" in task else None


def _question(task: dict[str, Any]) -> str | None:
    """What a waiting task asks: its `prompt` artifact, else its status message."""
    prompt = artifact_text(task, "prompt")
    if prompt is not None:
        return prompt or None
    status = task.get("status")
    message = status.get("message") if isinstance(status, dict) else None
    if isinstance(message, str):
        return message
    return parts_text(message.get("parts")) if isinstance(message, dict) else None


def _task_md(row: SessionRow) -> str | None:
    path = row.record.workdir / "task.md"
    try:
        return read_bounded(path, MAX_TASK_MD).data.decode("utf-8", "replace")
    except FileRefused as exc:
        if str(exc) != "no such file":
            row.notes.append(f"{path}: {exc}; not read")
        return None


def _shown(text: str | None) -> str | None:
    return None if text is None else printable(redact(text), keep_newlines=True)


def first_line(text: str | None, limit: int = MAX_TASK_CHARS) -> str:
    if not text or not text.strip():
        return "-"
    line = printable(redact(text.strip().splitlines()[0]), keep_newlines=False)
    return line if len(line) <= limit else line[:limit - 1] + "…"


def uptime(started_at: str) -> str:
    """`HH:MM:SS`, with `Nd ` past a day, as `mur ps` prints it; `-` when unreadable."""
    seconds = records.started_seconds_ago(started_at)
    if seconds is None:
        return "-"
    days, rest = divmod(seconds, 86_400)
    clock = f"{rest // 3600:02}:{rest % 3600 // 60:02}:{rest % 60:02}"
    return f"{days}d {clock}" if days else clock


def table(rows: Sequence[SessionRow], formations: bool = False) -> list[str]:
    """`mur ps`'s columns in its order and widths (FORMATION when `formations`: a listed or
    pruned record names one; NAME after SESSION when a session has a name), then STATE, MODEL
    and TASK; a formation's rows grouped."""
    if not rows:
        return ["no running capsules"]
    rows = grouped(rows)
    wide = FORMATION_WIDTH
    model_width = max([5] + [len(first_line(row.model, 32)) for row in rows])
    url_width = max([3] + [len(row.record.url or "-") for row in rows])
    named = max([0] + [len(row.name) for row in rows if row.name])
    name_width = max(4, named)
    lines = [f"{'SESSION':<36}  {'NAME'.ljust(name_width) + '  ' if named else ''}"
             f"{'CAPSULE':<24}  {'STATUS':<12}  {'DETACHED':<8}  "
             f"{'UPTIME':<9}  {'FORMATION'.ljust(wide) + '  ' if formations else ''}"
             f"{'URL':<{url_width}}  {'STATE':<9}  {'MODEL':<{model_width}}  TASK"]
    for row in rows:
        record = row.record
        member = (record.formation_id or "-").ljust(wide) + "  " if formations else ""
        capsule = first_line(f"{record.capsule_name}@{record.capsule_version}", 64)
        task = first_line(row.question if row.state == "needs you" else row.task)
        if row.state == "needs you" and task != "-":
            task = first_line(f"? {task}")
        name = (row.name or "-").ljust(name_width) + "  " if named else ""
        lines.append(
            f"{record.session_id:<36}  {name}{capsule:<24}  {STATUS_WORDS[row.verdict.state]:<12}  "
            f"{'yes' if record.outlives_launcher else 'no':<8}  {uptime(record.started_at):<9}"
            f"  {member}{printable(record.url or '-', keep_newlines=False):<{url_width}}  "
            f"{row.state:<9}  "
            f"{first_line(row.model, 32):<{model_width}}  {task}".rstrip())
    return lines


def run(home: Path, *, as_json: bool = False, show_all: bool = False, prune: bool = False,
        timeout: float = door_probe.PROBE_TIMEOUT, out: TextIO | None = None,
        err: TextIO | None = None, credential: str = tokens.OPERATOR) -> int:
    """The command: the table (or one JSON array) on `out`; files that are not records, session
    files not read and pruned records on `err`. A record whose process is gone (layers 1 and
    2: no process holds its pid, or one that started at another time) is removed on every
    listing, as `mur ps` removes it, with a `pruned:` line — unless `show_all`, which lists it
    and keeps it (`prune` removes it then too). 0 when the records were read; RunningDirError
    when the folder cannot be listed."""
    out = out or sys.stdout
    err = err or sys.stderr
    listing = gather(home, timeout, credential)
    for problem in listing.problems:
        err.write(f"murmur-tui: not a running record: {printable(problem, False)}\n")
    for row in listing.rows:
        for note in row.notes:
            err.write(f"murmur-tui: {row.record.session_id}: {printable(note, False)}\n")
    gone = [row for row in listing.rows if row.verdict.state == "gone"]
    if prune or not show_all:
        for row in gone:
            records.remove_record(home, row.record.session_id)
            member = row.record.formation_id
            of = f" (formation {member})" if member else ""
            err.write(f"pruned: {row.record.session_id} — {row.verdict.reason}{of}\n")
    shown = [row for row in listing.rows if show_all or row.verdict.state != "gone"]
    pruned = gone if prune or not show_all else []
    if as_json:
        out.write(json.dumps([row.to_json() for row in grouped(shown)], ensure_ascii=False)
                  + "\n")
        return 0
    groups = summaries(home, shown, pruned)
    lines = table(shown, formations=bool(groups))
    if groups:
        lines += ["", *(group.line() for group in groups)]
    out.write("\n".join(lines) + "\n")
    return 0
