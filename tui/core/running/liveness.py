"""Layers 1 and 2 of a running record's check, local and cheap: the pid is alive (a zombie is
not), and the process holding it started when the record says (`/proc/<pid>/stat` field 22: a
reused pid fails here) — as Murmur checks them (`crates/capsule-runtime/src/running.rs`). Layer
3, the door, is tui/core/running/probe.py's; `Verdict` is what the three say together.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from tui.core.a2a.card import Generation

Liveness = Literal["live", "unreachable", "gone"]


class ProcessClaim(Protocol):
    """What layers 1 and 2 read of a record."""

    @property
    def pid(self) -> int: ...

    @property
    def process_start(self) -> str: ...


@dataclass(frozen=True)
class Verdict:
    """What the three layers say: `live`, `unreachable` (the process is the record's, its door
    did not answer for the session: the record is kept) or `gone` (no process, a zombie, or a
    pid now held by a process that started at another time: stale). `reason` says why when not
    live; `door` is the door's generation (tui/core/a2a/card.py) when its card was read;
    `card` is the card that named the session. `address` is set when the door was found to be
    the record's process's own socket (`host:port`, an IP literal): the one place its token
    may be sent."""

    state: Liveness
    reason: str | None = None
    door: Generation | None = None
    card: dict[str, Any] | None = field(default=None, repr=False)
    address: str | None = None


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the executable's name (field 3 onward): the name
    is in parentheses and may itself hold spaces and parentheses, so split after the last ')'."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    close = text.rfind(")")
    return text[close + 1:].split() if close >= 0 else None


def process_start_token(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (clock ticks since boot), as Murmur reads it on Linux."""
    fields = _stat_fields(pid) if pid > 0 else None
    return fields[22 - 3] if fields is not None and len(fields) > 22 - 3 else None


def pid_is_alive(pid: int) -> bool:
    """Layer 1: a process holds the pid (EPERM counts: held by a process we may not signal),
    and it is not a zombie (exited, not yet waited on)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat_fields(pid)
    return not (fields and fields[0] == "Z")


def process_state(record: ProcessClaim) -> Verdict | None:
    """Layers 1 and 2, local and cheap: None when the record's process holds its pid, else the
    verdict (gone, or unreachable when the start time cannot be read — no evidence of an end)."""
    if not pid_is_alive(record.pid):
        return Verdict("gone", f"no process holds pid {record.pid}")
    token = process_start_token(record.pid)
    if token is None:
        return Verdict("unreachable", f"pid {record.pid}'s start time could not be read")
    if token != record.process_start:
        return Verdict("gone", f"pid {record.pid} is held by a process that started at "
                               "another time")
    return None


def has_controlling_terminal() -> bool:
    """Whether this process has a controlling terminal (`/dev/tty` opens), which decides
    `outlives_launcher` as Murmur decides it: a session tied to a terminal dies with it."""
    try:
        with open("/dev/tty", "rb"):
            return True
    except OSError:
        return False
