"""This machine's sessions for the fleet: the running records under `$MURMUR_HOME/running/`
(every session serving a door here, Murmur's and murmur-tui's), verified as Murmur verifies
them, turned into rows and watched over their doors. The sessions of other machines are
tui/app/fleet/hosts.py's.

`read_records` runs on a worker thread (it probes doors); `take_records` on the app's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from tui.app.fleet.links import Link
from tui.app.fleet.model import FleetSession, no_door, records_gone
from tui.app.fleet.renaming import take_names
from tui.app.fleet.tree import record_membership
from tui.core.hosts.status import LOCAL
from tui.core.text.printable import printable

if TYPE_CHECKING:
    from tui.app.fleet.owner import FleetOwner
    from tui.core.running.liveness import Verdict
    from tui.core.running.records import RunningRecord

DISCOVER_TIMEOUT = 2.0  # a door that does not answer its card within it is unreachable
Checked = list[tuple["RunningRecord", "Verdict"]]


def read_records(app: FleetOwner, listed: Callable[[list[RunningRecord]], object] | None = None,
                 ) -> tuple[Checked, list[str]]:
    """Every record, checked: a session whose stream is live needs only its process checked
    (its door answers already); the others, all three layers. The files that are not records,
    one sentence each. Records the fleet does not show yet go to `listed` first, before any
    door is asked (their rows say connecting… while the doors are checked)."""
    from tui.core.running.liveness import Verdict, process_state
    from tui.core.running.probe import verify_all
    from tui.core.running.records import read_records as read_all
    from tui.core.running.tokens import read_token

    found = read_all(app.home)
    records = [item.record for item in found if item.record is not None]
    unknown = [record for record in records if record.session_id not in app.sessions]
    if listed is not None and unknown:
        listed(unknown)
    problems = [f"{item.path}: {item.problem}" for item in found if item.problem]
    live = {key for key, session in list(app.sessions.items())
            if session.connection == "live" and session.host == LOCAL}
    verdicts: dict[str, Verdict] = {}
    probe = []
    for record in records:
        if record.session_id in live:
            verdicts[record.session_id] = process_state(record) or Verdict("live")
        else:
            probe.append(record)
    tokens = [read_token(app.home, r, app.credential) for r in probe]
    for record, verdict in zip(probe, verify_all(probe, DISCOVER_TIMEOUT, tokens=tokens,
                                                 credential=app.credential), strict=True):
        verdicts[record.session_id] = verdict
    return [(record, verdicts[record.session_id]) for record in records], problems


def list_records(app: FleetOwner, records: list[RunningRecord]) -> None:
    """Records found and not checked yet: a row each, connecting…, until `take_records`."""
    from tui.core.running.probe import door_address

    for record in records:
        if record.session_id not in app.sessions:
            new_row(app, record, door_address(record.url))


def take_records(app: FleetOwner, found: Checked, problems: Sequence[str] = ()) -> None:
    """The checked records into rows: a new live one linked, a dead one gone (with why)."""
    from tui.core.running.probe import door_address, door_url
    from tui.core.running.tokens import read_token

    for problem in problems:  # each broken record file is said once, never followed
        if problem not in app.told_problems:
            app.told_problems.add(problem)
            app.notify(f"Not a running record: {printable(problem)}",
                       severity="warning", timeout=10)

    for record, verdict in found:
        known = app.sessions.get(record.session_id)
        if known is not None and known.host != LOCAL:
            continue  # shown under the host that found it first
        if verdict.state != "live":
            why = verdict.reason or verdict.state
            if known is None:  # a stale record shows as gone, with why (ps --prune)
                known = new_row(app, record, door_address(record.url))
            # a live stream outlives a slow card; a dead process does not (for good)
            if known.connection != "live" or verdict.state == "gone":
                known.connect("gone", why, dead=verdict.state == "gone")
                app.changed()
            continue
        if known is not None and record.session_id in app.links:
            continue
        known = known or new_row(app, record, door_address(record.url))
        if record.url is None:  # no door: listed, its process checked, nothing to link to
            if no_door(known):
                app.changed()
            continue
        # the token goes only to the address found to be the session's own socket (a
        # public door needs none)
        token = read_token(app.home, record, app.credential) if verdict.address else None
        link = Link(app.home, record.session_id, door_url(record, verdict), record,
                    app.arrived, token=token, text=False, heartbeat=app.heartbeat)
        app.links[record.session_id] = link
        link.start()
    local = local_sessions(app.sessions)
    if take_names(app.home, local, [record for record, _ in found], app.links) | \
            records_gone(local, {record.session_id for record, _ in found}):
        app.changed()


def local_sessions(sessions: Mapping[str, FleetSession]) -> dict[str, FleetSession]:
    return {key: session for key, session in sessions.items() if session.host == LOCAL}


def new_row(app: FleetOwner, record: RunningRecord, url: str) -> FleetSession:
    launched = next((item for item in app.launched if item.process.pid == record.pid), None)
    session = FleetSession(record.session_id, url,
                           origin="launched" if launched is not None else "found",
                           resumes=launched.resumes if launched is not None else "",
                           capsule=record.capsule_name, version=record.capsule_version,
                           **record_membership(record))
    app.sessions[record.session_id] = session
    app.changed()
    return session
