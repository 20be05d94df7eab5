"""`murmur-tui trace frm_…`: a formation summed up from its members' traces, as `mur trace show
<frm_…>` does (spec murmur-newest §6.5, §7.6).

The members are the sessions whose `session_start.formation_id` is the formation's, found in
`./workdir` and `./.murmur` (or `--workdir DIR` and `DIR/.murmur`) — where the entry member's
sessions are — and in `$MURMUR_HOME/formations/<frm>/<member>/.murmur`, where each peer's are.
One row a member, oldest first (the launcher starts the peers, then the entry):

    ses_…  coder  demo-team-worker@0.1.0  ok
    ses_…  lead   demo-team-lead@0.1.0    no session_end

then `calls:` and one row a `call-member` call, read from the caller's trace (`member_call_start
{call_id, member, task_id}`, `member_call {call_id, member, status, duration_ms}`, and the
`task_continued {member_calls}` that took its answer into the caller's task):

    mcl_…  lead → coder  completed  1.2s  delivered

A call with no `member_call` line yet is `running`; an answer no continuation took is `not
delivered`. A trace that cannot be read is left out (the command notes how many); an id that is
not `frm_` + 32 lowercase hex, or a formation none of whose members is found, is E-TRC-002.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.errors import FileRefused, MurmurTuiError, NotJson, TraceNotFound
from tui.core.fs.safe_read import open_regular
from tui.core.ids import FORMATION_ID
from tui.core.text.strict_json import loads_line
from tui.core.trace.reader import read_trace

TRACE_FILE = "trace.jsonl"
MAX_HEAD = 1024 * 1024  # the first line, `session_start`: a longer one is not a trace's
RUNNING = "running"  # a call started whose `member_call` line is not written yet
NO_END = "no session_end"


@dataclass(frozen=True)
class MemberSession:
    session_id: str
    member: str
    capsule: str  # name@version
    exit_status: str | None  # None: no session_end (it runs, or it was killed)
    started_ms: int
    trace: Path


@dataclass
class TracedCall:
    call_id: str
    caller: str
    callee: str
    started_ms: int
    status: str = RUNNING
    duration_ms: int | None = None
    delivered: bool = False


@dataclass
class FormationTrace:
    formation_id: str
    roots: list[Path]
    members: list[MemberSession] = field(default_factory=list)
    calls: list[TracedCall] = field(default_factory=list)
    unreadable: int = 0  # a trace of this formation that could not be read whole


def is_formation_address(text: str) -> bool:
    """Whether `trace`'s argument names a formation rather than a session or a path."""
    return text.startswith("frm_") and "/" not in text and not text.endswith(".jsonl")


def session_roots(formation_id: str, workdir: Path | None, cwd: Path, home: Path
                  ) -> list[Path]:
    """Where the formation's members' session folders may be, in the order they are said."""
    base = workdir if workdir is not None else cwd / "workdir"
    roots = [base, (workdir if workdir is not None else cwd) / ".murmur"]
    formation_dir = home / "formations" / formation_id
    try:
        members = sorted(p for p in formation_dir.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        members = []
    return roots + [member / ".murmur" for member in members]


def formation_trace(formation_id: str, workdir: Path | None, cwd: Path, home: Path
                    ) -> FormationTrace:
    """The formation's members and calls; TraceNotFound (E-TRC-002) for a bad id or none."""
    if not FORMATION_ID.fullmatch(formation_id):
        raise TraceNotFound(f"{formation_id!r} is not a formation id (frm_ and 32 lowercase "
                            "hex characters)", code="E-TRC-002")
    roots = session_roots(formation_id, workdir, cwd, home)
    found = FormationTrace(formation_id, roots)
    seen: set[Path] = set()
    for root in roots:
        for path in _traces(root):
            key = path.resolve()
            if key in seen:
                continue
            seen.add(key)
            head = _head(path)
            if head is None or head.get("formation_id") != formation_id:
                continue
            try:
                lines = list(read_trace(path))
            except (OSError, MurmurTuiError):
                found.unreadable += 1
                continue
            _take(found, path, head, lines)
    if not found.members:
        where = ", ".join(str(root) for root in [*roots[:2], home / "formations" / formation_id])
        raise TraceNotFound(f"no member of formation {formation_id} found (looked in {where})",
                            code="E-TRC-002")
    found.members.sort(key=lambda m: (m.started_ms, m.session_id))
    found.calls.sort(key=lambda c: (c.started_ms, c.call_id))
    return found


def _traces(root: Path) -> list[Path]:
    try:
        folders = sorted(p for p in root.iterdir() if p.name.startswith("ses_"))
    except OSError:
        return []
    return [folder / TRACE_FILE for folder in folders if (folder / TRACE_FILE).is_file()]


def _head(path: Path) -> dict[str, Any] | None:
    """The trace's first line when it is a `session_start` object, else None; only that line
    is read (a workdir may hold many large traces of other sessions)."""
    try:
        fd = open_regular(path)
    except FileRefused:
        return None
    try:
        data = os.pread(fd, MAX_HEAD, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    first, newline, _ = data.partition(b"\n")
    if not newline:
        return None
    try:
        line = loads_line(first)
    except NotJson:
        return None
    return line if isinstance(line, dict) and line.get("event_type") == "session_start" \
        else None


def _take(found: FormationTrace, path: Path, head: dict[str, Any],
          lines: list[dict[str, Any]]) -> None:
    """One member's session: its row, and the calls it made."""
    member = _text(head.get("formation_member")) or "-"
    name, version = _text(head.get("capsule_name")), _text(head.get("capsule_version"))
    capsule = f"{name or '?'}@{version or '?'}"
    ends = [line for line in lines if line.get("event_type") == "session_end"]
    exit_status = (_text(ends[-1].get("exit_status")) or "?") if ends else None
    session_id = _text(head.get("session_id")) or path.parent.name
    found.members.append(MemberSession(session_id, member, capsule, exit_status,
                                       _int(head.get("timestamp")) or 0, path))
    calls: dict[str, TracedCall] = {}
    delivered: set[str] = set()
    for line in lines:
        kind = line.get("event_type")
        call_id = _text(line.get("call_id"))
        if kind in ("member_call_start", "member_call") and call_id:
            call = calls.get(call_id)
            if call is None:
                call = calls[call_id] = TracedCall(call_id, member,
                                                   _text(line.get("member")) or "?",
                                                   _int(line.get("timestamp")) or 0)
            if kind == "member_call":
                call.status = _text(line.get("status")) or "?"
                call.duration_ms = _int(line.get("duration_ms"))
        elif kind == "task_continued" and isinstance(line.get("member_calls"), list):
            delivered.update(item for item in line["member_calls"] if isinstance(item, str))
    for call in calls.values():
        call.delivered = call.call_id in delivered
        found.calls.append(call)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def render(found: FormationTrace) -> str:
    """The formation's rows, as `mur trace show <frm_…>` prints them."""
    from tui.core.trace.show import fmt_dur

    rows = [[m.session_id, m.member, m.capsule, m.exit_status or NO_END]
            for m in found.members]
    calls = [[c.call_id, f"{c.caller} → {c.callee}", c.status,
              fmt_dur(c.duration_ms) if c.duration_ms is not None else "—",
              "delivered" if c.delivered else "not delivered"] for c in found.calls]
    out = [f"formation: {found.formation_id}", *_columns(rows),
           "calls:" if calls else "calls:  none", *_columns(calls)]
    return "\n".join(out) + "\n"


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)
                      ).rstrip() for row in rows]


def to_json(found: FormationTrace) -> dict[str, Any]:
    return {"formation_id": found.formation_id,
            "members": [{"session_id": m.session_id, "member": m.member, "capsule": m.capsule,
                         "exit_status": m.exit_status, "trace": str(m.trace)}
                        for m in found.members],
            "calls": [{"call_id": c.call_id, "from": c.caller, "to": c.callee,
                       "status": c.status, "duration_ms": c.duration_ms,
                       "delivered": c.delivered} for c in found.calls]}
