"""The running record Murmur writes for a session it serves: `$MURMUR_HOME/running/
<session_id>.json` (0600) with exactly Murmur's fields, and the operator token beside it in
`<session_id>.token` (0600, one line) when the door has tokens. Both are removed when the
session ends."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunningRecord:
    session_id: str
    url: str
    pid: int
    process_start: int  # /proc/<pid>/stat field 22: clock ticks since boot
    capsule_name: str
    capsule_version: str
    workdir: str
    outlives_launcher: bool
    started_at: str  # RFC 3339, UTC

    @classmethod
    def for_this_process(cls, session_id: str, url: str, capsule_name: str,
                         capsule_version: str, workdir: str) -> RunningRecord:
        return cls(session_id, url, os.getpid(), process_start(os.getpid()), capsule_name,
                   capsule_version, workdir, not _has_terminal(),
                   time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def process_start(pid: int) -> int:
    """Field 22 of /proc/<pid>/stat (0 where there is no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[19])


def _has_terminal() -> bool:
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return sys.stdin.isatty()
    os.close(fd)
    return True


def running_dir(home: Path) -> Path:
    return home / "running"


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temp, path)


def write_record(home: Path, record: RunningRecord) -> Path:
    path = running_dir(home) / f"{record.session_id}.json"
    _write_private(path, json.dumps(asdict(record), indent=2) + "\n")
    return path


def write_token(home: Path, session_id: str, token: str) -> Path:
    path = running_dir(home) / f"{session_id}.token"
    _write_private(path, token + "\n")
    return path


def remove_record(home: Path, session_id: str) -> None:
    for suffix in (".json", ".token"):
        with contextlib.suppress(OSError):
            (running_dir(home) / f"{session_id}{suffix}").unlink()
