"""Every session murmur-tui ran, in `$MURMUR_HOME/tui/sessions.jsonl` (0600): one line when a
session starts and one when it ends, so `--resume` and the browser find a session without
walking workdirs. A line that cannot be read is skipped (the file is append-only and may end in
a cut line after a crash); the last line of a session wins.

A session is named as Murmur names one: its full id, a suffix of at least four characters that
only one session ends with, or `@N` (the Nth newest, `@1` the newest)."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from tui.core.errors import FileRefused, LaunchError, NotJson
from tui.core.fs.private_files import append_private
from tui.core.fs.safe_read import read_bounded
from tui.core.text.secrets import redact
from tui.core.text.strict_json import loads_line

INDEX = Path("tui") / "sessions.jsonl"
MAX_INDEX_BYTES = 64 << 20  # a bigger index is read from its last 64 MiB


@dataclass(frozen=True)
class Entry:
    session_id: str
    capsule_name: str
    capsule_path: str
    record: str | None  # the record store, None: the session kept no record
    context_id: str
    workdir: str
    started_ms: int
    ended_ms: int | None = None
    exit_status: str | None = None
    tasks: int = 0
    resumed_from: str | None = None


ResumeMode = Literal["full", "compact"]


@dataclass(frozen=True)
class Resume:
    """`launch --resume`: the session whose conversation goes on, and how its context comes
    back — whole (`full`) or through the capsule's on-compaction hook (`compact`)."""

    entry: Entry
    mode: ResumeMode = "full"


def index_path(home: Path) -> Path:
    return home / INDEX


def write(home: Path, entry: Entry) -> None:
    """One line for `entry` (a failure to write it is not the session's failure)."""
    line = json.dumps(asdict(entry), ensure_ascii=False, separators=(",", ":"))
    with contextlib.suppress(OSError):
        append_private(index_path(home), redact(line) + "\n")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def entries(home: Path) -> list[Entry]:
    """Every session, newest first (by start)."""
    try:  # its last MAX_INDEX_BYTES; a link, FIFO or device there is no index
        data = read_bounded(index_path(home), MAX_INDEX_BYTES, tail=True).data
    except FileRefused:
        return []
    found: dict[str, Entry] = {}
    for raw in data.split(b"\n"):
        entry = _entry(raw)
        if entry is not None:
            found[entry.session_id] = entry
    return sorted(found.values(), key=lambda e: e.started_ms, reverse=True)


def _entry(raw: bytes) -> Entry | None:
    if not raw.strip():
        return None
    try:
        value = loads_line(raw)
    except NotJson:
        return None
    if not isinstance(value, dict):
        return None
    try:
        entry = Entry(**{k: v for k, v in value.items() if k in Entry.__dataclass_fields__})
    except TypeError:
        return None
    strings = (entry.session_id, entry.capsule_name, entry.capsule_path, entry.context_id,
               entry.workdir)
    if not all(isinstance(s, str) and s for s in strings) or \
            not isinstance(entry.started_ms, int):
        return None
    return entry


def find(home: Path, address: str) -> Entry:
    """The session `address` names (its id, a suffix of 4+ characters, `@N` newest first —
    resolved as every command resolves an address: `tui.core.trace.address`); LaunchError
    saying why when none (or several) does."""
    from tui.core.trace.address import parse, pick

    known = {entry.session_id: entry for entry in entries(home)}  # newest first

    def fail(why: str) -> LaunchError:
        return LaunchError(f"--resume: {why}")

    return known[pick(parse(address), list(known), str(index_path(home)), fail)]
