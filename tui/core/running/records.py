"""Running records: `$MURMUR_HOME/running/<session_id>.json`, one per running session, as
Murmur writes and reads them (`crates/capsule-runtime/src/running.rs`; docs/fleet.md, "Finding
running sessions"): the keys of v0.2.0 through v0.11.0 (tui/core/running/record_keys.py).

A record is a hint, never a fact. Murmur's three layers stand between a record and the claim
that its session is live: the pid is alive (a zombie is not), the process holding it started
when the record says (a reused pid fails here) — tui/core/running/liveness.py — and the agent
card at the record's url names the same session (tui/core/running/probe.py, `verify`). The door
tokens beside a record are tui/core/running/tokens.py's. The folder is 0700, each record 0600.

A record is also read as hostile input: every file is opened without following a link and
without blocking (tui/core/fs/safe_read.py), a bounded amount is read, the JSON is parsed without
recursion (tui/core/text/strict_json.py), and a `url` that is not a plain `host:port`
(tui/core/running/address.py) makes the file "not a record", named, while the others are still
read.

No Textual, no Rich, no httpx.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tui.core.errors import (
    FileRefused,
    NotJson,
    RecordError,
    RunningDirError,
    Where,
)
from tui.core.fs.private_files import FILE_MODE, FOLDER_MODE, make_private_dirs
from tui.core.fs.safe_read import open_regular
from tui.core.running.liveness import has_controlling_terminal, process_start_token
from tui.core.running.record_keys import RECORDS_DIR, record_fields, safe_session_id
from tui.core.text.strict_json import loads_line

RUNNING_DIR = "running"
MAX_RECORD_BYTES = 64 * 1024  # a record is a few hundred bytes


@dataclass(frozen=True)
class RunningRecord:
    """Murmur's keys (tui/core/running/record_keys.py says which release each follows): the nine
    every release writes, `records_dir` (v0.7.0+; None in a record an older writer made), the
    tokens of a door that authenticates — the operator's (`door_token`) and each declared
    credential's (`credentials`, never the operator) — and the formation keys, `spawned_by` and
    `unconfined` as read (`kept`: written back, never acted on). `url` is None for a session
    with no door."""

    session_id: str
    url: str | None  # host:port the door is bound to; None: no door
    pid: int
    process_start: str  # opaque: field 22 of /proc/<pid>/stat, compared as a string
    capsule_name: str
    capsule_version: str
    workdir: Path
    outlives_launcher: bool
    started_at: str  # RFC 3339, UTC
    door_token: str | None = field(default=None, repr=False)
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False, hash=False)
    records_dir: Path | None = None
    kept: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def trace_dir(self) -> Path:
        """Where the session's `trace.jsonl` is: its records directory (v0.7.0+), else its
        workdir (every older release)."""
        return self.records_dir if self.records_dir is not None else self.workdir

    @property
    def formation_id(self) -> str | None:
        value = self.kept.get("formation_id")
        return value if isinstance(value, str) else None

    @classmethod
    def for_this_process(cls, session_id: str, url: str | None, capsule_name: str,
                         capsule_version: str, workdir: Path | str,
                         outlives_launcher: bool | None = None, door_token: str | None = None,
                         credentials: Mapping[str, str] | None = None,
                         records_dir: Path | str | None = None,
                         kept: Mapping[str, Any] | None = None) -> RunningRecord:
        """The record of a session this process runs: its pid, its start time, now.
        `outlives_launcher` is, unless given, whether this process has no controlling
        terminal (as Murmur decides it); `records_dir` is, unless given, `workdir`; `kept`:
        its formation keys and `spawned_by` (tui/core/formation/membership.py)."""
        start = process_start_token(os.getpid())
        if start is None:  # pragma: no cover - /proc is always there on Linux
            raise RecordError("this process's start time cannot be read from /proc")
        if outlives_launcher is None:
            outlives_launcher = not has_controlling_terminal()
        return cls(session_id=session_id, url=bare_address(url) if url is not None else None,
                   pid=os.getpid(), process_start=start, capsule_name=capsule_name,
                   capsule_version=capsule_version, workdir=Path(workdir),
                   outlives_launcher=outlives_launcher, started_at=rfc3339_now(),
                   door_token=door_token, credentials=dict(credentials or {}),
                   records_dir=Path(records_dir if records_dir is not None else workdir),
                   kept=dict(kept or {}))

    def to_json(self) -> dict[str, Any]:
        """The file's object, in Murmur's key order: the ten required keys (`records_dir` when
        known), then `door_token` only when there is one, `credentials` only when it holds
        one, and the kept keys as they were read."""
        value: dict[str, Any] = {
            "session_id": self.session_id, "url": self.url, "pid": self.pid,
            "process_start": self.process_start, "capsule_name": self.capsule_name,
            "capsule_version": self.capsule_version, "workdir": str(self.workdir),
        }
        if self.records_dir is not None:
            value[RECORDS_DIR] = str(self.records_dir)
        value.update(outlives_launcher=self.outlives_launcher, started_at=self.started_at)
        if self.door_token is not None:
            value["door_token"] = self.door_token
        if self.credentials:
            value["credentials"] = dict(self.credentials)
        value.update(self.kept)
        return value

    @classmethod
    def from_json(cls, value: object, where: Where | None = None) -> RunningRecord:
        """A record from a parsed file (a v0.2.0 one, or a later release's); RecordError
        naming the key when one is missing or of the wrong type."""
        return cls(**record_fields(value, where))


@dataclass(frozen=True)
class RecordFile:
    """One `.json` file under `running/`: its record, or why it is not one (`problem`, a
    sentence about `path`)."""

    path: Path
    record: RunningRecord | None = None
    problem: str | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}" if self.problem else str(self.path)


# -- paths and files ----------------------------------------------------------------------------
def running_dir(home: Path) -> Path:
    return home / RUNNING_DIR


def record_path(home: Path, session_id: str) -> Path:
    return running_dir(home) / f"{_checked_id(session_id)}.json"


def token_path(home: Path, session_id: str) -> Path:
    return running_dir(home) / f"{_checked_id(session_id)}.token"


def write_record(home: Path, record: RunningRecord) -> Path:
    """Write `record` atomically (staged beside it under a name not ending `.json`, then
    renamed), mode 0600 in a folder held at 0700 — both reapplied on every write."""
    import json

    path = record_path(home, record.session_id)
    write_private(path, json.dumps(record.to_json(), indent=2) + "\n")
    return path


def remove_record(home: Path, session_id: str) -> None:
    """Remove a session's record and its token file, if they are there."""
    for path in (record_path(home, session_id), token_path(home, session_id)):
        path.unlink(missing_ok=True)


def read_records(home: Path) -> list[RecordFile]:
    """Every `*.json` under `$MURMUR_HOME/running`, newest session first (ids are
    time-ordered). A file that is not a record — not JSON, a missing or mistyped key, too
    big, a symbolic link, not 0600, another user's — is a RecordFile with its `problem`, never an
    exception; nothing is removed. A missing folder is no records; a folder that cannot be
    listed raises RunningDirError."""
    folder = running_dir(home)
    try:
        names = sorted(os.listdir(folder), reverse=True)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise RunningDirError(f"cannot list the running records: {exc.strerror or exc}",
                              where=Where(folder)) from None
    found: list[RecordFile] = []
    for name in names:
        if name.endswith(".json") and not name.startswith("."):
            found.append(_read_one(folder / name))
    return found


def _read_one(path: Path) -> RecordFile:
    data, problem = read_private(path, MAX_RECORD_BYTES)
    if problem is not None or data is None:
        return RecordFile(path, problem=problem or "cannot be read")
    try:
        value = loads_line(data)
    except NotJson as exc:
        return RecordFile(path, problem=f"is not JSON ({exc})")
    try:
        record = RunningRecord.from_json(value)
    except RecordError as exc:
        return RecordFile(path, problem=exc.text)
    if path.name != f"{record.session_id}.json":
        return RecordFile(path, problem=f"names session {record.session_id}, not the one its "
                                        "file name says")
    return RecordFile(path, record=record)


def read_private(path: Path, limit: int) -> tuple[bytes | None, str | None]:
    """A regular file of this user's, mode 0600 or stricter, at most `limit` bytes, opened
    without following a link and without blocking (safe_read), every check made on what was
    opened: (its bytes, None), or (None, the problem)."""
    try:
        fd = open_regular(path)
    except FileRefused as exc:
        why = str(exc)
        if why == "it is a link":
            return None, "is a symbolic link; a running record is a regular file (not followed)"
        if why.startswith("it is "):
            return None, f"{why.replace('it is ', 'is ', 1)}, not a regular file (not read)"
        return None, f"cannot be read: {why}"
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid():
            return None, f"belongs to another user (uid {info.st_uid}); not read"
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            return None, (f"can be read or written by other users (mode {mode:04o}); running "
                          f"records are 0600: chmod 600 {path}")
        if info.st_size > limit:
            return None, f"is {info.st_size} bytes; a running record is at most {limit} bytes"
        data = bytearray()
        while len(data) <= limit:
            piece = os.read(fd, limit + 1 - len(data))
            if not piece:
                break
            data += piece
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    finally:
        os.close(fd)
    if len(data) > limit:
        return None, f"is more than {limit} bytes; a running record is at most that"
    return bytes(data), None


def write_private(path: Path, text: str) -> None:
    folder = path.parent
    make_private_dirs(folder)
    os.chmod(folder, FOLDER_MODE)
    staging = folder / f"{path.name}.writing-{os.getpid()}"
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # a staging file left by a crash keeps its old mode otherwise
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staging, path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


# -- small helpers -----------------------------------------------------------------------------
def rfc3339_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def started_seconds_ago(started_at: str, now: datetime | None = None) -> int | None:
    """Seconds since an RFC 3339 `started_at`; None when it does not parse or lies ahead."""
    try:
        started = datetime.fromisoformat(started_at)
    except ValueError:
        return None
    if started.tzinfo is None:
        return None
    seconds = int(((now or datetime.now(UTC)) - started).total_seconds())
    return seconds if seconds >= 0 else None


def bare_address(url: str) -> str:
    for scheme in ("http://", "https://"):
        if url.startswith(scheme):
            url = url[len(scheme):]
    return url.rstrip("/")


def _checked_id(session_id: str) -> str:
    if not safe_session_id(session_id):
        raise RecordError(f"{session_id!r} is not a session id (letters, digits, _ and -)")
    return session_id


def describe(found: Iterable[RecordFile]) -> list[str]:
    """One line per file that is not a record, for a person."""
    return [str(item) for item in found if item.problem]

