"""A session's live delegations, as `murmur-tui stop` and `cancel` list them (spec murmur-newest
§9.1: `running: dlg_…  delegation  <capsule@ver>`; docs/formations.md, "Delegation").

They are found where any process can find them: the running records whose `spawned_by` names
the session and whose process still holds its pid. A record does not carry the delegation's id;
the child's trace does, on its first line (`session_start.delegation_id`), which is all that is
read of it. No Textual, no Rich.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui.core.errors import MurmurTuiError
from tui.core.fs.safe_read import read_bounded
from tui.core.running.liveness import process_state
from tui.core.running.record_keys import safe_session_id
from tui.core.running.records import RunningRecord, read_records
from tui.core.text.strict_json import loads_line

MAX_HEAD = 1024 * 1024  # of a child's trace, at most this much is read for its first line
TRACE_FILE = "trace.jsonl"


@dataclass(frozen=True)
class LiveChild:
    """One delegated child of a session, as its running record and trace say."""

    session_id: str
    delegation_id: str | None  # None: its trace could not tell
    capsule: str
    version: str

    def line(self, running: bool) -> str:
        word = "running:" if running else "ended:  "
        return (f"{word} {self.delegation_id or self.session_id}  delegation  "
                f"{self.capsule}@{self.version}")


def live_children(home: Path, session_id: str) -> list[LiveChild]:
    """The children of `session_id` whose process still runs, oldest first. A folder of
    records that cannot be listed is no children (the command says what it can)."""
    try:
        found = read_records(home)
    except MurmurTuiError:
        return []
    children = [entry.record for entry in found if entry.record is not None
                and entry.record.kept.get("spawned_by") == session_id
                and _running(entry.record)]
    return [LiveChild(record.session_id, _delegation_id(record), record.capsule_name,
                      record.capsule_version) for record in reversed(children)]


def _running(record: RunningRecord) -> bool:
    """Its process holds its pid (or cannot be told apart from one that does)."""
    state = process_state(record)
    return state is None or state.state != "gone"


def _delegation_id(record: RunningRecord) -> str | None:
    try:
        head = read_bounded(record.trace_dir / TRACE_FILE, MAX_HEAD).data
        first = loads_line(head.partition(b"\n")[0])
    except (MurmurTuiError, OSError):
        return None
    ident = first.get("delegation_id") if isinstance(first, dict) else None
    if isinstance(ident, str) and ident.startswith("dlg_") and safe_session_id(ident):
        return ident
    return None


def delegation_lines(before: list[LiveChild], home: Path, session_id: str,
                     said: frozenset[str] = frozenset()) -> list[str]:
    """What `stop` / `cancel` print of a session's delegations: each child live before the
    command acted (`before`), `running:` when it still runs, `ended:` when it has ended since,
    and any child started meanwhile that runs; `said`: delegation ids the door's residue
    already listed."""
    now = {child.session_id: child for child in live_children(home, session_id)}
    known = {child.session_id for child in before}
    shown = [(child, child.session_id in now) for child in before] + [
        (child, True) for child in now.values() if child.session_id not in known]
    return [child.line(running) for child, running in shown
            if child.delegation_id is None or child.delegation_id not in said]
