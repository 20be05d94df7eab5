"""`murmur-tui stop frm_…`: end every running member of a formation (spec §6.4, §7.4;
docs/formations.md "Formations in ps and stop").

Each member is stopped as `stop` stops one session — `session/stop` through its door, then
SIGTERM, then SIGKILL after `--timeout` — the entry member first, then the others newest first.
The entry goes first because its ending is what ends a formation in Murmur (the launcher closes
every lifeline when the entry's process ends, §7.4), and because once it has stopped nothing
sends the other members new `call-member` tasks while they are being stopped; stopping a peer
first would instead leave the entry's outstanding call `unreachable` and the entry working on.
Then, when a member's record names the formation's launcher (`formation_launcher`) and that
process is still the one the record describes (same pid, same start token), it gets SIGTERM,
as `mur stop frm_…` sends it. Exit 0 when every member ended; 1 (with the member's code on
stderr) when one could not be stopped, after the others were.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tui.commands.exits import EXIT_NOT_OK, EXIT_OK

if TYPE_CHECKING:
    from tui.core.running.records import RunningRecord


def stop_formation(home: Path, formation: str, timeout: float, *,
                   stop_lines: Callable[[Path, RunningRecord, float], list[str]],
                   say: Callable[[list[str]], None]) -> int:
    """`stop_lines` stops one member as `murmur-tui stop` does one session, `say` prints
    (both `tui.commands.control`'s, handed in: that module sends `frm_…` here)."""
    from tui.core.errors import MurmurTuiError
    from tui.core.running.liveness import process_state
    from tui.core.text.secrets import redact
    from tui.core.trace.address import formation_records

    members = formation_records(home, formation)
    say([f"formation: {formation}"])
    failed = False
    launchers: set[tuple[int, str]] = set()
    for record in members:
        launcher = record.kept.get("formation_launcher")
        if isinstance(launcher, dict):
            launchers.add((launcher["pid"], launcher["process_start"]))
        name = record.kept.get("formation_member")
        role = " (entry)" if record.kept.get("formation_entry") is True else ""
        head = [f"member:  {name if isinstance(name, str) else '-'}{role}"]
        state = process_state(record)
        if state is not None and state.state == "gone":
            say([*head, f"ended:   {record.session_id} — {state.reason}"])
            continue
        try:
            say([*head, *stop_lines(home, record, timeout)])
        except MurmurTuiError as exc:
            failed = True
            say(head)
            sys.stderr.write(f"murmur-tui: error: {redact(str(exc))}\n")
    for pid, start in sorted(launchers):
        if _signal_launcher(pid, start):
            say([f"launcher: pid {pid}  SIGTERM"])
    return EXIT_NOT_OK if failed else EXIT_OK


def _signal_launcher(pid: int, start: str) -> bool:
    """SIGTERM to the formation's launcher, only when `pid` is still the process that started
    at `start` (never a reused pid, never one whose start cannot be read)."""
    from tui.core.running.liveness import process_start_token

    if not start or process_start_token(pid) != start:
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return False
    return True
