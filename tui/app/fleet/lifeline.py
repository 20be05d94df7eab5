"""Whether each of the fleet's sessions is still there (no Textual here): the watcher's word on
its door (`linked`), the stall rule applied on every drain from what each link last heard
(`listen`), what is told of a stall or a death once (`alarms`), and the line under the list
that says why (`detail`; the row's status cell is tree_rows.py's). The rule itself is the
model's (`FleetSession.hear`, `FleetSession.lost`); docs/fleet.md, "Stalls and deaths".
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

from tui.app.fleet.model import STALL_BEATS, FleetSession
from tui.core.text.printable import printable

if TYPE_CHECKING:
    from tui.app.fleet.links import Link, LinkState

Alarm = Literal["stalled", "gone"]


def linked(session: FleetSession, state: LinkState, link: Link | None, now: float) -> None:
    """The watcher's word on its door. A stream that dropped has the session's process
    checked at once (pid and start time, local and cheap): a process that is gone makes the
    row *gone* now, for good, and its watcher stops retrying."""
    from tui.core.running.liveness import process_state

    dead = None
    if state.state == "reconnecting" and link is not None and link.record is not None:
        verdict = process_state(link.record)
        dead = verdict.reason if verdict is not None and verdict.state == "gone" else None
    if dead is not None and link is not None:
        session.connect("gone", dead, dead=True, now=now)
        threading.Thread(target=link.close, name="close link", daemon=True).start()
    else:
        session.connect(state.state, state.why, now=now)


def listen(sessions: Mapping[str, FleetSession], links: Mapping[str, Link], now: float,
           heartbeat: float) -> bool:
    """Each linked session's last word from its door, the stall rule applied at `now`; True
    when a row changed group. Only a row in a task (or stalled) is looked at: cheap on every
    drain."""
    changed = False
    for session_id, link in links.items():
        session = sessions.get(session_id)
        if session is not None and (session.in_task or session.stalled):
            changed |= session.hear(link.heard, now, heartbeat)
    return changed


def alarms(sessions: Iterable[FleetSession]) -> list[tuple[FleetSession, Alarm]]:
    """The rows to tell of, each once: a stall (once per silence: heard again and silent
    again is a new one) and a death this screen saw happen (a record found stale when it
    opens is shown under Needs you, not told)."""
    out: list[tuple[FleetSession, Alarm]] = []
    for session in sessions:
        if session.group != "needs":
            continue
        if session.lost and not session.told_gone:
            session.told_gone = True
            if session.seen_running:
                out.append((session, "gone"))
        elif session.stalled and not session.dead and session.told_stall != session.heard:
            session.told_stall = session.heard
            out.append((session, "stalled"))
    return out


def silence(session: FleetSession, now: float) -> str:
    """`no frame or heartbeat for 47 s (the door's heartbeat is every 15 s)`."""
    quiet = max(0, int(now - session.heard)) if session.heard is not None else 0
    return f"no frame or heartbeat for {quiet} s (the door's heartbeat is every " \
           f"{session.heartbeat:g} s)"


def why(session: FleetSession, alarm: Alarm, now: float) -> str:
    """What a notification says of the alarm: the silence, or the process's end."""
    if alarm == "stalled":
        return silence(session, now)
    return printable(session.why_gone) or "its process is gone"


def detail(session: FleetSession, now: float) -> str:
    """The line under the list that says why, and what puts it aside ("" for any other
    row)."""
    if session.lost:
        how = "" if session.aside_gone else " · d puts it aside, r resumes a murmur-tui session"
        return f"gone: {printable(session.why_gone) or 'its process is gone'}{how}"
    if session.stalled:
        aside = session.aside_stall == session.heard
        how = " (put aside: a new silence is told again)" if aside else \
            f" · stalled after {STALL_BEATS} heartbeats; d puts it aside"
        extra = f"; the stream: {printable(session.why_gone)}" \
            if session.connection == "gone" and session.why_gone else ""
        return f"stalled? {silence(session, now)}{extra}{how}"
    return ""
