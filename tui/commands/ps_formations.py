"""Formations in `murmur-tui ps`, as `mur ps` shows them (spec §6.3, §7.3, §7.6): the rows of a
formation's members grouped together (groups ordered by their newest member, rows newest first
within a group), and one summary line per formation after a blank line:

    formation <id>: <L> listed (<n> running, <n> unreachable)[, <P> pruned now]
        [; not listed: <n> ended, <n> with no record | ; no other member found in <k> session
        root(s)][; <U> session root(s) could not be read]

The "not listed" part comes from the formation's session roots: the parent of every listed or
pruned member's session folder, and `$MURMUR_HOME/formations/<frm>/<member>/.murmur/` for every
member folder there (§7.3). A `ses_*` folder in a root whose trace's first line is a
`session_start` naming this formation (or any `ses_*` folder under the formation's own
directory), and whose session is neither listed nor pruned now, is a member not listed: `ended`
when its trace records `session_end`, else `with no record`. Files are read as ps reads every
session file (tui/core/fs/safe_read.py: no FIFO, link or device is opened).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from tui.core.errors import FileRefused
from tui.core.fs.safe_read import read_bounded
from tui.core.trace.glance import MAX_TRACE_HEAD, trace_facts

if TYPE_CHECKING:
    from tui.core.running.liveness import Verdict
    from tui.core.running.records import RunningRecord


class Listed(Protocol):
    """A row of `ps` (tui.commands.ps.SessionRow), as the formation lines read it."""

    @property
    def record(self) -> RunningRecord: ...
    @property
    def verdict(self) -> Verdict: ...


Row = TypeVar("Row", bound=Listed)

FORMATION_WIDTH = 36


def formation_of(row: Listed) -> str | None:
    return row.record.formation_id


def grouped(rows: Sequence[Row]) -> list[Row]:
    """Rows newest first, a formation's members together where its newest member stands."""
    ordered = sorted(rows, key=lambda row: row.record.session_id, reverse=True)
    groups: dict[str, list[Row]] = {}
    for row in ordered:
        key = formation_of(row) or f"\x00{row.record.session_id}"  # a plain session: alone
        groups.setdefault(key, []).append(row)
    return [row for group in groups.values() for row in group]  # dicts keep first-seen order


@dataclass
class Summary:
    formation: str
    listed: list[Listed] = field(default_factory=list)
    pruned: list[Listed] = field(default_factory=list)
    ended: int = 0
    no_record: int = 0
    roots_read: int = 0
    roots_unread: int = 0

    def line(self) -> str:
        running = sum(1 for row in self.listed if row.verdict.state == "live")
        unreachable = sum(1 for row in self.listed if row.verdict.state == "unreachable")
        text = (f"formation {self.formation}: {len(self.listed)} listed ({running} running, "
                f"{unreachable} unreachable)")
        if self.pruned:
            text += f", {len(self.pruned)} pruned now"
        if self.ended or self.no_record:
            text += f"; not listed: {self.ended} ended, {self.no_record} with no record"
        else:
            text += f"; no other member found in {self.roots_read} session root(s)"
        if self.roots_unread:
            text += f"; {self.roots_unread} session root(s) could not be read"
        return text


def summaries(home: Path, listed: Iterable[Listed], pruned: Iterable[Listed]
              ) -> list[Summary]:
    """One summary per formation a listed or pruned record names, in the order their groups
    are listed (a formation with only pruned members after them)."""
    found: dict[str, Summary] = {}
    pruned = list(pruned)
    gone = {id(row) for row in pruned}
    for row in [*grouped(list(listed)), *grouped(pruned)]:
        frm = formation_of(row)
        if frm is None:
            continue
        summary = found.setdefault(frm, Summary(frm))
        (summary.pruned if id(row) in gone else summary.listed).append(row)
    for summary in found.values():
        _not_listed(home, summary)
    return list(found.values())


def _not_listed(home: Path, summary: Summary) -> None:
    known = {row.record.session_id for row in [*summary.listed, *summary.pruned]}
    roots: dict[Path, bool] = {}  # root -> every session folder in it is a member
    for row in [*summary.listed, *summary.pruned]:
        roots.setdefault(row.record.workdir.parent, False)
    own = home / "formations" / summary.formation
    try:
        members = sorted(entry for entry in own.iterdir() if entry.is_dir())
    except FileNotFoundError:
        members = []
    except OSError:
        summary.roots_unread += 1
        members = []
    for member in members:
        roots[member / ".murmur"] = True
    for root, all_members in roots.items():
        try:
            entries = [entry for entry in root.iterdir()
                       if entry.name.startswith("ses_") and entry.is_dir()]
        except FileNotFoundError:
            continue
        except OSError:
            summary.roots_unread += 1
            continue
        summary.roots_read += 1
        for entry in entries:
            if entry.name in known:
                continue
            trace = entry / "trace.jsonl"
            if not all_members and _formation_in(trace) != summary.formation:
                continue
            known.add(entry.name)
            facts = trace_facts(trace)
            if facts is not None and facts.ended:
                summary.ended += 1
            else:
                summary.no_record += 1


def _formation_in(trace: Path) -> str | None:
    """The formation id the trace's first line (`session_start`) names, if any."""
    try:
        head = read_bounded(trace, MAX_TRACE_HEAD).data
    except FileRefused:
        return None
    try:
        first = json.loads(head.split(b"\n", 1)[0])
    except ValueError:
        return None
    if not isinstance(first, dict) or first.get("event_type") != "session_start":
        return None
    value = first.get("formation_id")
    return value if isinstance(value, str) else None
