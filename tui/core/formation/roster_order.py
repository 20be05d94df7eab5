"""A running formation's members in roster order, for the fleet's tree: the launcher's
`$MURMUR_HOME/formations/<frm>/formation.json` (spec murmur-newest §7.3: `{project_dir,
launcher_pid, launcher_start}`, 0600) names the project folder, whose `roster.yaml` lists the
members. Either missing, unreadable or not a roster: the order is not known (None) — the fleet
then orders the members it has by when they started.

No Textual, no Rich.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tui.core.errors import MurmurTuiError
from tui.core.formation.roster import RosterRefusal, read_roster, roster_path
from tui.core.ids import FORMATION_ID
from tui.core.running.records import read_private

MAX_FORMATION_JSON = 64 * 1024
RETRY_SECONDS = 5.0  # a formation whose roster was not found is looked for again this late


def roster_order(home: Path, formation_id: str) -> tuple[str, ...] | None:
    """The member names of `formation_id`'s roster, in its order; None when not found."""
    if FORMATION_ID.fullmatch(formation_id) is None:
        return None
    data, _ = read_private(home / "formations" / formation_id / "formation.json",
                           MAX_FORMATION_JSON)
    if data is None:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    project = value.get("project_dir") if isinstance(value, dict) else None
    if not isinstance(project, str) or not project or "\x00" in project:
        return None
    try:
        roster = read_roster(roster_path(Path(project)))
    except (OSError, MurmurTuiError):
        return None
    if isinstance(roster, RosterRefusal):
        return None
    return tuple(member.name for member in roster.members)


class RosterOrders:
    """`roster_order`, read once per formation (a formation not found yet is looked for again
    after RETRY_SECONDS: its launcher may not have written it when its members are seen)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._known: dict[str, tuple[str, ...]] = {}
        self._missed: dict[str, float] = {}

    def __call__(self, formation_id: str) -> tuple[str, ...] | None:
        known = self._known.get(formation_id)
        if known is not None:
            return known
        now = time.monotonic()
        missed = self._missed.get(formation_id)
        if missed is not None and now - missed < RETRY_SECONDS:
            return None
        found = roster_order(self.home, formation_id)
        if found is None:
            self._missed[formation_id] = now
            return None
        self._known[formation_id] = found
        return found
