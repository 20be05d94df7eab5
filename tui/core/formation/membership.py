"""What a session's running record says of the formation it belongs to and of the session that
delegated it (spec murmur-newest §4.1, §7.6, §9.1): the keys Murmur v0.11.0 writes, in its
order, each only when it applies —

- `formation_id`, `formation_member`, `formation_entry` — a member's seat (`LaunchOptions.seat`,
  from the formation channel);
- `formation_lifeline: true` — the member holds the formation's lifeline
  (`MURMUR_FORMATION_LIFELINE` names an open descriptor); left out when false, as Murmur does;
- `formation_launcher: {pid, process_start}` — the launcher, which started the member holding
  its lifeline: this process's parent, with its start time (left out when it cannot be read);
- `spawned_by` — a delegated child: the `session_id` of `MURMUR_SPAWNER`, the compact JSON the
  delegating session's runtime hands its child (`{url, session_id, context_id, trust,
  delegation_id}`); anything else there is not a spawner and writes nothing.

`tui/core/running/record_keys.py` reads these keys back (KEPT_KEYS). No Textual, no Rich.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from tui.core.formation.seat import Seat
from tui.core.running.liveness import process_start_token
from tui.core.running.record_keys import safe_session_id

LIFELINE_ENV = "MURMUR_FORMATION_LIFELINE"
SPAWNER_ENV = "MURMUR_SPAWNER"
MAX_SPAWNER_BYTES = 8 * 1024


def member_keys(seat: Seat | None, environ: Mapping[str, str] | None = None,
                parent: int | None = None) -> dict[str, Any]:
    """The record's formation keys and `spawned_by` for a session with `seat` (None: not a
    member) in a process whose environment is `environ` and whose parent is `parent` (this
    process's, unless given)."""
    env = os.environ if environ is None else environ
    keys: dict[str, Any] = {}
    if seat is not None:
        keys.update(formation_id=seat.formation_id, formation_member=seat.member,
                    formation_entry=seat.entry)
        if holds_lifeline(env):
            keys["formation_lifeline"] = True
            launcher = os.getppid() if parent is None else parent
            start = process_start_token(launcher) if launcher > 1 else None
            if start is not None:
                keys["formation_launcher"] = {"pid": launcher, "process_start": start}
    spawner = spawned_by(env)
    if spawner is not None:
        keys["spawned_by"] = spawner
    return keys


def holds_lifeline(environ: Mapping[str, str]) -> bool:
    """Whether `MURMUR_FORMATION_LIFELINE` names a descriptor this process holds open."""
    value = environ.get(LIFELINE_ENV, "")
    if not value.isascii() or not value.isdigit() or len(value) > 9:
        return False
    try:
        os.fstat(int(value))
    except OSError:
        return False
    return True


def spawned_by(environ: Mapping[str, str]) -> str | None:
    """The delegating session's id from `MURMUR_SPAWNER`, or None when it is absent or is not
    a spawner's JSON object naming a session."""
    value = environ.get(SPAWNER_ENV)
    if not value or len(value) > MAX_SPAWNER_BYTES:
        return None
    try:
        data = json.loads(value)
    except ValueError:
        return None
    session = data.get("session_id") if isinstance(data, dict) else None
    return session if isinstance(session, str) and safe_session_id(session) else None
