"""Which running record a session address names, as Murmur's live commands (`mur token`,
`watch`, `cancel`, `stop`, `control`) resolve one (Murmur v0.11.0 `docs/…/cli.md`, "Session
addresses"): the full id, a suffix of at least four characters (case-insensitive, matching
exactly one), or `@N` — the Nth newest of the records given. A path names a trace, never a
running session, and is refused. No address is `@1`.

`find_session` matches against the records it is given; `running_records` gives those that
pass layers 1 and 2 (the pid is alive and started when the record says: liveness.py), the ones
Murmur counts and resolves against — a session that stopped is not found (E-RUN-022).

No Textual, no Rich, no httpx.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tui.core.errors import RunningSessionError
from tui.core.running.liveness import process_state
from tui.core.running.records import RunningRecord, read_records
from tui.core.text.printable import printable

MIN_SUFFIX = 4


def running_records(home: Path) -> list[RunningRecord]:
    """Every record under `$MURMUR_HOME/running` whose process holds its pid and started when
    it says, newest session first. Files that are not records are passed over."""
    found = [item.record for item in read_records(home) if item.record is not None]
    return [record for record in found if process_state(record) is None]


def find_session(records: Sequence[RunningRecord], address: str | None,
                 where: Path | None = None) -> RunningRecord:
    """The one record `address` names among `records` (newest first); RunningSessionError
    (E-RUN-022) saying why none is, or which several are."""
    wanted = (address or "@1").strip()
    place = f" under {where}" if where is not None else ""
    if not records:
        raise _refused(f"no capsule is running{place}")
    if wanted.startswith("@"):
        number = wanted[1:]
        if not (number.isascii() and number.isdigit() and int(number) >= 1):
            raise _refused(f"{_shown(wanted)} is not a session address: @ takes a "
                           "number from 1 (@1 is the newest)")
        if int(number) > len(records):
            raise _refused(f"{wanted} names no session: {len(records)} "
                           f"running{place}")
        return records[int(number) - 1]
    if "/" in wanted or wanted.endswith(".jsonl"):
        raise _refused(f"{_shown(wanted)} is a path; a running session is named by "
                       "its id, a suffix of it, or @N")
    exact = [record for record in records if record.session_id == wanted]
    if exact:
        return exact[0]
    if len(wanted) < MIN_SUFFIX:
        raise _refused(f"{_shown(wanted)} is too short to name a session: give at "
                       f"least {MIN_SUFFIX} characters of its id, or @N")
    lowered = wanted.lower()
    matches = [record for record in records if record.session_id.lower().endswith(lowered)]
    if not matches:
        raise _refused(f"no running session {_shown(wanted)}{place} "
                       "(`murmur-tui ps` lists them)")
    if len(matches) > 1:
        raise _refused(f"{_shown(wanted)} names {len(matches)} sessions: "
                       f"{', '.join(r.session_id for r in matches[:5])}; "
                       "give more of it")
    return matches[0]


def _refused(text: str) -> RunningSessionError:
    """Murmur's code for an address that names no running session, shown with the text."""
    return RunningSessionError(text, code="E-RUN-022")


def _shown(text: str) -> str:
    shown = printable(text[:80], keep_newlines=False)
    return repr(shown) if len(text) <= 80 else repr(shown + "…")
