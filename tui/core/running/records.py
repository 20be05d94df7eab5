"""Running records: `$MURMUR_HOME/running/<session_id>.json`, one per session serving a door,
as Murmur writes and reads them (`crates/capsule-runtime/src/running.rs`; docs/fleet.md,
"Finding running sessions").

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
from tui.core.running.address import door_host_port, shown_url
from tui.core.running.liveness import process_start_token
from tui.core.text.strict_json import loads_line

RUNNING_DIR = "running"
MAX_RECORD_BYTES = 64 * 1024  # a record is a few hundred bytes
MAX_CREDENTIALS = 64
_SAFE_ID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")



@dataclass(frozen=True)
class RunningRecord:
    """Murmur's nine fields, plus the tokens of a door that authenticates: the operator's
    (`door_token`) and each declared credential's (`credentials`, never the operator)."""

    session_id: str
    url: str  # host:port the door is bound to
    pid: int
    process_start: str  # opaque: field 22 of /proc/<pid>/stat, compared as a string
    capsule_name: str
    capsule_version: str
    workdir: Path
    outlives_launcher: bool
    started_at: str  # RFC 3339, UTC
    door_token: str | None = field(default=None, repr=False)
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False, hash=False)

    @classmethod
    def for_this_process(cls, session_id: str, url: str, capsule_name: str,
                         capsule_version: str, workdir: Path | str,
                         outlives_launcher: bool = False, door_token: str | None = None,
                         credentials: Mapping[str, str] | None = None) -> RunningRecord:
        """The record of a session this process serves: its pid, its start time, now."""
        start = process_start_token(os.getpid())
        if start is None:  # pragma: no cover - /proc is always there on Linux
            raise RecordError("this process's start time cannot be read from /proc")
        return cls(session_id=session_id, url=bare_address(url), pid=os.getpid(),
                   process_start=start, capsule_name=capsule_name,
                   capsule_version=capsule_version, workdir=Path(workdir),
                   outlives_launcher=outlives_launcher, started_at=rfc3339_now(),
                   door_token=door_token, credentials=dict(credentials or {}))

    def to_json(self) -> dict[str, Any]:
        """The file's object, in Murmur's key order; `door_token` only when there is one,
        `credentials` only when it holds one."""
        value: dict[str, Any] = {
            "session_id": self.session_id, "url": self.url, "pid": self.pid,
            "process_start": self.process_start, "capsule_name": self.capsule_name,
            "capsule_version": self.capsule_version, "workdir": str(self.workdir),
            "outlives_launcher": self.outlives_launcher, "started_at": self.started_at,
        }
        if self.door_token is not None:
            value["door_token"] = self.door_token
        if self.credentials:
            value["credentials"] = dict(self.credentials)
        return value

    @classmethod
    def from_json(cls, value: object, where: Where | None = None) -> RunningRecord:
        """A record from a parsed file; RecordError naming the key when one is missing or of
        the wrong type. Keys Murmur adds later (`formation_id`, …) are ignored, as serde does."""
        if not isinstance(value, dict):
            raise RecordError(f"is {_kind(value)}, not a JSON object", where=where)
        text: dict[str, str] = {}
        for key in ("session_id", "url", "process_start", "capsule_name", "capsule_version",
                    "workdir", "started_at"):
            text[key] = _typed(value, key, str, "a string", where)
        pid = _typed(value, "pid", int, "a whole number", where)
        if isinstance(pid, bool) or not 0 < pid < 2 ** 32:
            raise RecordError(f"`pid` is {pid!r}, not a process id", where=_at(where, "pid"))
        outlives = _typed(value, "outlives_launcher", bool, "true or false", where)
        token = value.get("door_token")
        if token is not None and not isinstance(token, str):
            raise RecordError(f"`door_token` is {_kind(token)}, expected a string",
                              where=_at(where, "door_token"))
        if not safe_session_id(text["session_id"]):
            raise RecordError("`session_id` is not a session id (letters, digits, _ and -)",
                              where=_at(where, "session_id"))
        try:
            door_host_port(text["url"])
        except ValueError as exc:
            raise RecordError(f"`url` {shown_url(text['url'])} is not a door address: {exc}",
                              where=_at(where, "url")) from None
        return cls(session_id=text["session_id"], url=text["url"], pid=pid,
                   process_start=text["process_start"], capsule_name=text["capsule_name"],
                   capsule_version=text["capsule_version"], workdir=Path(text["workdir"]),
                   outlives_launcher=outlives, started_at=text["started_at"],
                   door_token=token, credentials=_credentials(value.get("credentials"), where))


def _credentials(value: object, where: Where | None) -> dict[str, str]:
    """A record's `credentials`: an object of credential name to token (absent: none)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(f"`credentials` is {_kind(value)}, expected an object of credential "
                          "names to tokens", where=_at(where, "credentials"))
    if len(value) > MAX_CREDENTIALS:
        raise RecordError(f"`credentials` names {len(value)} credentials; a record holds at "
                          f"most {MAX_CREDENTIALS}", where=_at(where, "credentials"))
    for name, token in value.items():
        if not isinstance(token, str):
            raise RecordError(f"`credentials` maps a name to {_kind(token)}, expected a "
                              "token (a string)", where=_at(where, "credentials"))
        if not name.isprintable():
            raise RecordError("`credentials` holds a name with a control character",
                              where=_at(where, "credentials"))
    return dict(value)


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


def safe_session_id(session_id: str) -> bool:
    return 0 < len(session_id) <= 128 and set(session_id) <= _SAFE_ID


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


def _typed(value: dict[str, Any], key: str, kind: type, named: str, where: Where | None
           ) -> Any:
    if key not in value:
        raise RecordError(f"has no `{key}`", where=_at(where, key))
    item = value[key]
    if not isinstance(item, kind) or (kind is int and isinstance(item, bool)):
        raise RecordError(f"`{key}` is {_kind(item)}, expected {named}", where=_at(where, key))
    return item


def _at(where: Where | None, key: str) -> Where | None:
    return Where(where.file, where.line, key) if where is not None else None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


def describe(found: Iterable[RecordFile]) -> list[str]:
    """One line per file that is not a record, for a person."""
    return [str(item) for item in found if item.problem]

