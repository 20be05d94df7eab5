"""Where a member's callee can be watched: its session's door, found as `attach` finds a
session's — its running record (verified by all three layers, its operator token presented
only at the address checked to be the session's own socket).

The record is the one the running records name as that member of the formation
(`formation_id` and `formation_member`, Murmur 0.11.0 on), else the one serving at the URL the
launcher gave this member for that callee (its seat), else the one of a session under the
member's formation directory (`$MURMUR_HOME/formations/<frm>/<member>/.murmur/<ses>/`). With
no record the seat's URL alone is used (a public door). No door: CalleeUnknown saying why."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui.core.errors import CalleeUnknown
from tui.core.formation.seat import Seat
from tui.core.running.records import RunningRecord, bare_address, read_records

SESSION_DIR = "ses_"


@dataclass(frozen=True)
class CalleeDoor:
    member: str
    session_id: str  # "" when only the seat's URL is known
    url: str
    record: RunningRecord | None = None
    token: str | None = None  # the callee's operator token, for its checked address only


def find_callee(home: Path, member: str, formation_id: str | None,
                seat: Seat | None = None, timeout: float = 3.0) -> CalleeDoor:
    """The callee `member`'s door (CalleeUnknown when there is none to watch)."""
    seat_url = seat.url(member, 0) if seat is not None else None
    record = _record(home, member, formation_id, seat_url)
    if record is None:
        if seat_url:
            return CalleeDoor(member, "", seat_url.rstrip("/"))
        where = f"formation {formation_id}" if formation_id else "this session's formation"
        raise CalleeUnknown(f"{member} has no door that can be found: no running record "
                            f"names it as a member of {where}")
    if record.url is None:
        raise CalleeUnknown(f"{member} ({record.session_id}) serves no door")
    from tui.core.running.probe import door_url, verify
    from tui.core.running.tokens import OPERATOR, read_token

    token = read_token(home, record, OPERATOR)
    verdict = verify(record, timeout, token=token)
    if verdict.state != "live":
        raise CalleeUnknown(f"{member} ({record.session_id}) is {verdict.state}: "
                            f"{verdict.reason}")
    return CalleeDoor(member, record.session_id, door_url(record, verdict), record,
                      token if verdict.address else None)


def _record(home: Path, member: str, formation_id: str | None,
            seat_url: str | None) -> RunningRecord | None:
    records = [found.record for found in read_records(home) if found.record is not None]
    if formation_id:
        named = [record for record in records if record.formation_id == formation_id
                 and record.kept.get("formation_member") == member]
        if named:
            return named[0]  # newest first
    if seat_url:
        address = bare_address(seat_url)
        at_url = [record for record in records if record.url == address]
        if at_url:
            return at_url[0]
    if formation_id:
        folder = home / "formations" / formation_id / member / ".murmur"
        try:
            sessions = {path.name for path in folder.iterdir()
                        if path.name.startswith(SESSION_DIR)}
        except OSError:
            sessions = set()
        under = [record for record in records if record.session_id in sessions]
        if under:
            return under[0]
    return None
