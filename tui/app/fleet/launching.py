"""The sessions the fleet screen starts — `n` (a capsule) and `r` (a session whose process
died) — as child processes `murmur-tui launch --headless --serve`: what is kept of each, which
dead session `r` may resume and why not, and the last line of a failed launch's log.

No Textual here: the app (tui/app/fleet/app.py) starts the processes and says what happened.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tui.app.fleet.model import FleetSession
from tui.core.text.printable import printable

if TYPE_CHECKING:
    from tui.core.session_index import Entry


@dataclass(frozen=True)
class AttachTarget:
    """What Enter opened on the fleet screen: the command line attaches to it — this
    machine's session by its running record, another host's (`host`) at `url` with the token
    its host gave."""

    session_id: str
    url: str
    host: str = ""
    token: str | None = field(default=None, repr=False)


@dataclass
class Launched:
    process: subprocess.Popen[bytes]
    capsule: str
    log: Path
    started: float
    resumes: str = ""  # the session that died, which this process resumes


def resumable(home: Path, session: FleetSession, sessions: Iterable[FleetSession],
              launched: Iterable[Launched]) -> Entry | str:
    """The index entry of the dead session `session` shows, or why it is not one."""
    from tui.core.errors import LaunchError
    from tui.core.running.liveness import process_state
    from tui.core.running.records import read_records
    from tui.core.session_index import find, index_path

    sid = session.session_id
    if session.host:  # its workdir, trace and journal are on that machine, not here
        return f"{sid} ran on {printable(session.host)}: resume it there " \
               f"(murmur-tui launch CAPSULE --resume {sid} --serve …)."
    follower = next((s for s in sessions if s.resumes == sid), None) or \
        next((item for item in launched if item.resumes == sid), None)
    if follower is not None:
        which = follower.session_id if isinstance(follower, FleetSession) \
            else f"pid {follower.process.pid}"
        return f"{sid} is already resumed here ({which}): nothing more is resumed."
    if session.connection != "gone":
        if session.exit_status is not None:
            return f"{sid} ended {session.exit_status}: it did not die, so nothing is " \
                   "resumed (`murmur-tui launch CAPSULE --resume` continues its " \
                   "conversation in a new session)."
        return f"{sid} is running: only a session whose process died is resumed."
    record = next((found.record for found in read_records(home)
                   if found.record is not None and found.record.session_id == sid), None)
    if record is not None and process_state(record) is None:
        return f"{sid} cannot be reached, but its process (pid {record.pid}) still " \
               "runs: only a session whose process died is resumed."
    try:
        entry = find(home, sid)
    except LaunchError:
        return f"{sid} is not in {index_path(home)}: only a murmur-tui session " \
               "can be resumed here (a mur session is Murmur's to resume)."
    if entry.ended_ms is not None:
        return f"{sid} ended {entry.exit_status or ''}".rstrip() + \
            ": it wrote its end, so it did not die and nothing is resumed " \
            "(`murmur-tui launch CAPSULE --resume` continues its conversation)."
    return entry


def tail(log: Path) -> str:
    """The last line of a launch's log, printable: why a launch failed."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return printable(lines[-1]) if lines else "(no output)"
