"""A session served on its door, from start to end — the same for `launch --headless --serve`
and the screen's `launch --serve`:

    door = Door(capsule, board, *parse_bind(bind))   # its sink goes into the Session's sinks
    session = Session(..., sinks=[..., door.sink])
    serving = Serving.start(door, session)           # listens, writes the running record
    print(serving.readiness(as_json))
    if serving.waits and not serving.first_task(cancel): ...   # stopped before any task came
    session.run()
    serving.end()                                    # idempotent: the record goes, the door closes

A session with no task waits for its first one from the door (`first_task`); under
`lifecycle.task_acceptance: none` such a session cannot be served (LaunchError), and under
`single` the door refuses every task after the first.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Protocol

from tui.core import names
from tui.core.cancel import CancelToken
from tui.core.door import Door
from tui.core.errors import LaunchError
from tui.core.events.kinds import TaskOrigin, TaskVia
from tui.core.formation.membership import member_keys
from tui.core.formation.seat import Seat
from tui.core.running.records import RunningRecord, remove_record, write_record
from tui.core.running.tokens import OPERATOR


class ServedSession(Protocol):
    """What serving needs of the session (the commands build it)."""

    session_id: str
    home: Path
    capsule: Any
    paths: Any
    inbox: Any
    seat: Seat | None  # a formation's member: its record names the formation

    @property
    def waits_for_first(self) -> bool: ...

    def take_first(self, text: str, task_id: str | None = None, context_id: str | None = None,
                   via: TaskVia | None = None, origin: TaskOrigin = "user",
                   caller_member: str | None = None) -> None: ...

    def close_unstarted(self) -> None: ...


def declared_tokens(door: Door) -> dict[str, str]:
    """Each declared credential's token by name, as Murmur's record keeps them under
    `credentials` (never the operator's: that one is `door_token`)."""
    return {credential.name: credential.token for credential in door.tokens.credentials
            if credential.name != OPERATOR}


class Serving:
    def __init__(self, door: Door, session: ServedSession, waits: bool) -> None:
        self.door = door
        self.session = session
        self.waits = waits  # the session's first task comes from the door
        self.url = ""
        self.record: RunningRecord | None = None
        self._done = threading.Lock()
        self._ended = False

    @classmethod
    def start(cls, door: Door, session: ServedSession) -> Serving:
        """Check the session can be served, start the door, write the running record (0600 in
        a 0700 folder) with every key Murmur v0.11.0 requires, holding the operator token
        (`door_token`) and each declared credential's (`credentials`): the only place a token
        is written, as Murmur's is. Nothing is left listening when it raises (LaunchError)."""
        lifecycle = session.capsule.lifecycle
        waits = session.waits_for_first
        if waits and lifecycle.task_acceptance == "none":
            raise LaunchError("the session has no task and lifecycle.task_acceptance is none, "
                              "so the door cannot send it one (give --task, or write task.md)")
        if lifecycle.task_acceptance != "queue":
            session.inbox.close()  # the door's tasks are refused: the capsule takes one
        serving = cls(door, session, waits)
        door.attach(session, wait_for_first=waits)
        serving.url = door.start()
        serving.record = RunningRecord.for_this_process(
            session.session_id, serving.url, session.capsule.name, session.capsule.version,
            str(session.paths.accessible), door_token=door.tokens.operator or None,
            credentials=declared_tokens(door), records_dir=session.paths.session,
            kept={**member_keys(session.seat),
                  **names.record_keys(session.home, session.session_id)})
        write_record(session.home, serving.record)
        return serving

    def readiness(self, as_json: bool) -> str:
        """What says the door is up, as `mur run` says it (Murmur v0.11.0): with `as_json` one
        line `{name, pid, session_id, url, version, workdir}` (`url` is `host:port`, no
        scheme), plus `"auth": "bearer"` for a door that asks for a token; else the lines
        `murmur: url …`, `murmur: auth bearer (murmur-tui token <ses>)` and `session: …`.
        Never a token: `murmur-tui token` prints it."""
        record = self.record
        if record is None:
            raise LaunchError("the session is not served yet")
        bearer = record.door_token is not None
        session_id = record.session_id
        if as_json:
            line: dict[str, Any] = {
                "name": record.capsule_name, "pid": record.pid, "session_id": session_id,
                "url": record.url, "version": record.capsule_version,
                "workdir": str(record.workdir)}
            if bearer:
                line["auth"] = "bearer"
            return json.dumps(line, sort_keys=True)
        lines = [f"murmur: url {record.url}"]
        if bearer:
            lines.append(f"murmur: auth bearer (murmur-tui token {session_id})")
        return "\n".join([*lines, f"session: {session_id}"])

    def first_task(self, cancel: CancelToken) -> bool:
        """Wait for the session's first task from the door and hand it over (it runs under
        the door's id); False when the session was stopped first (it gave back what it held
        and will not run)."""
        task = self.door.first_task(cancel)
        if task is None:
            self.session.close_unstarted()
            return False
        self.session.take_first(task.text, task.task_id, task.context_id, via="door",
                                origin=task.origin, caller_member=task.caller_member)
        return True

    def end(self) -> None:
        """The running record goes and the door closes; once, from any thread."""
        with self._done:
            if self._ended:
                return
            self._ended = True
        remove_record(self.session.home, self.session.session_id)
        self.door.close()
