"""Retention of formation directories (spec murmur-newest §7.3): when a roster is launched,
before its formation starts, `$MURMUR_HOME/formations/<frm>/` directories are removed as the
entry member's `trace.retain` says (docs/formations.md, "Retention"):

- `max_sessions: N` keeps the N newest formations, the one being launched counted: the
  N - 1 newest already there stay. Newest is by the formation id's mint time (the UUIDv7 in
  `frm_…`), which nothing that touches the files changes.
- `max_age: 30d` removes a formation that ended longer ago than that; its end is the newest
  modification time of anything in its directory (members write their traces until they end).

Only a formation is ever removed: an entry named `frm_` + 32 hex digits that is a directory of
this user's (a link is never followed), holding a `formation.json` (0600, not a link) that is a
JSON object naming its launcher (`launcher_pid`, `launcher_start`). Without it the directory is
never removed. A formation whose launcher still runs (its pid held by a process that started
when `formation.json` says, as the running records' liveness check reads it), or one of whose
members still has a live running record, is kept whatever its age or rank.

Each removal is one line, `[murmur-tui] retention: removed formation <frm> (<reason>)`; a
directory that could not be removed says so and the launch goes on. No Textual, no Rich.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui.core.errors import MurmurTuiError
from tui.core.ids import FORMATION_ID, mint_time_ms
from tui.core.manifest.model import TraceRetain
from tui.core.running.liveness import pid_is_alive, process_start_token, process_state
from tui.core.running.records import read_private, read_records

PREFIX = "[murmur-tui] retention:"
MAX_FORMATION_JSON = 64 * 1024


@dataclass(frozen=True)
class FormationDir:
    """A formation directory retention may remove."""

    formation_id: str
    path: Path
    launcher_pid: int
    launcher_start: str | None

    @property
    def minted_ms(self) -> int:
        return mint_time_ms(self.formation_id)


def apply(home: Path, retain: TraceRetain | None, say: Callable[[str], None],
          now: float | None = None) -> list[str]:
    """Remove the formation directories under `home` that `retain` no longer keeps, saying a
    line for each; the ids removed, newest first."""
    if retain is None or (retain.max_sessions is None and retain.max_age_seconds is None):
        return []
    found = sorted(formations(home / "formations"),
                   key=lambda item: (item.minted_ms, item.formation_id), reverse=True)
    if not found:
        return []
    try:
        members_alive = _formations_with_live_members(home)
    except MurmurTuiError as exc:
        say(f"{PREFIX} skipped: {exc.text} (a formation whose members may still run is "
            "never removed)")
        return []
    when = time.time() if now is None else now
    removed: list[str] = []
    for rank, item in enumerate(found):
        reason = _reason(item, rank, retain, when)
        if reason is None or _alive(item) or item.formation_id in members_alive:
            continue
        problem = _remove(item.path)
        if problem is None:
            removed.append(item.formation_id)
            say(f"{PREFIX} removed formation {item.formation_id} ({reason})")
        else:
            say(f"{PREFIX} could not remove formation {item.formation_id}: {problem}")
    return removed


def formations(folder: Path) -> list[FormationDir]:
    """The formation directories in `folder` (anything else there is left out)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found: list[FormationDir] = []
    for entry in entries:
        if FORMATION_ID.fullmatch(entry.name) is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        item = _read_launcher(entry.name, Path(entry.path))
        if item is not None:
            found.append(item)
    return found


def _read_launcher(formation_id: str, path: Path) -> FormationDir | None:
    data, _ = read_private(path / "formation.json", MAX_FORMATION_JSON)
    if data is None:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    pid = value.get("launcher_pid")
    start = value.get("launcher_start")
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return None
    if start is not None and not isinstance(start, str):
        return None
    return FormationDir(formation_id, path, pid, start)


def _alive(item: FormationDir) -> bool:
    """The launcher still runs: its pid is held, by a process that started when the file says
    (a start time that cannot be read, or was not recorded, is no evidence of an end)."""
    if not pid_is_alive(item.launcher_pid):
        return False
    token = process_start_token(item.launcher_pid)
    return item.launcher_start is None or token is None or token == item.launcher_start


def _formations_with_live_members(home: Path) -> set[str]:
    """The formation ids of running records whose process is not known to have ended."""
    alive: set[str] = set()
    for found in read_records(home):
        record = found.record
        if record is None or record.formation_id is None:
            continue
        verdict = process_state(record)
        if verdict is None or verdict.state != "gone":
            alive.add(record.formation_id)
    return alive


def _reason(item: FormationDir, rank: int, retain: TraceRetain, now: float) -> str | None:
    """Why `item` (the `rank`-th newest, 0 first) goes, or None when it stays."""
    if retain.max_age_seconds is not None:
        age = now - ended_at(item.path)
        if age > retain.max_age_seconds:
            return f"older than max_age {duration(retain.max_age_seconds)}"
    if retain.max_sessions is not None and rank >= retain.max_sessions - 1:
        return f"beyond max_sessions {retain.max_sessions}"
    return None


def ended_at(path: Path) -> float:
    """The newest modification time of the directory or anything in it (links not followed)."""
    try:
        newest = os.lstat(path).st_mtime
    except OSError:
        return time.time()  # vanished or unreadable: as if written now (kept by max_age)
    waiting = [path]
    while waiting:
        try:
            entries = list(os.scandir(waiting.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            newest = max(newest, info.st_mtime)
            if stat.S_ISDIR(info.st_mode):
                waiting.append(Path(entry.path))
    return newest


def duration(seconds: int) -> str:
    """`30d`, `12h`, `90m`, `45s`: the largest unit that divides it."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _remove(path: Path) -> str | None:
    """Remove the directory (a link put at its name since is not followed); the problem."""
    problems: list[str] = []

    def failed(_function: object, where: str, exc_info: tuple[object, BaseException, object]
               ) -> None:
        error = exc_info[1]
        text = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        problems.append(f"{where}: {text}")

    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return "a link is now at its name (not followed)"
    except OSError as exc:
        return exc.strerror or str(exc)
    shutil.rmtree(path, onerror=failed)
    return problems[0] if problems else None
