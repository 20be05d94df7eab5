"""A delegated child's side of `delegate-task` (spec murmur-newest §9.1, §7.4): who started it,
the spawner lifeline it holds, and the `completion.json` it leaves.

- `MURMUR_SPAWNER` is compact JSON `{url, session_id, context_id, trust, delegation_id}`:
  the parent session (its door's URL when it serves one, else null), the parent's context, the
  trust of the task that delegated and the delegation's `dlg_…` id. A value that is not that
  refuses the launch (`E-RUN-020`, as Murmur's).
- `MURMUR_SPAWNER_LIFELINE` names an inherited descriptor: the read end of a pipe only the
  parent holds the write end of. End of file there means the parent ended (it closed the pipe,
  or its process died — SIGKILL included): the child reports `spawner_ended` and winds down as
  on a first SIGTERM. A murmur-tui parent that cancels the task that delegated writes
  `canceled` (CANCELED) before it closes the pipe, so the child can say why it ends; Murmur's
  parent writes nothing, and anything else written is ignored.
- At its session end the child writes `<session folder>/completion.json` (0600): `{delegation_id,
  capsule_name, capsule_version, session_id, status: ok|error|crashed|terminated, result_path,
  workdir, duration_ms, detail, reported_by, delivered, delivery_error}`. murmur-tui's parent
  reads this file (it has no roost to post to); a child that died before writing it is reported
  `crashed` by its parent, which writes the file in its stead (`reported_by: "parent"`).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core.errors import LaunchError, MurmurTuiError
from tui.core.events import vocabulary as ev
from tui.core.fs.private_files import write_private
from tui.core.fs.safe_read import read_bounded
from tui.core.text.strict_json import loads

SPAWNER_ENV = "MURMUR_SPAWNER"
LIFELINE_ENV = "MURMUR_SPAWNER_LIFELINE"
COMPLETION_FILE = "completion.json"
CANCELED = b"canceled\n"  # what a parent writes on the lifeline when the task was canceled
UNREADABLE = "E-RUN-020"
MAX_COMPLETION_BYTES = 64 * 1024
STATUSES = ("ok", "error", "crashed", "terminated")


@dataclass(frozen=True)
class Spawner:
    """The session that delegated to this one."""

    url: str | None
    session_id: str
    context_id: str
    trust: str
    delegation_id: str
    lifeline: int | None = None  # the inherited read end of the spawner lifeline

    def env_value(self) -> str:
        return json.dumps({"url": self.url, "session_id": self.session_id,
                           "context_id": self.context_id, "trust": self.trust,
                           "delegation_id": self.delegation_id}, separators=(",", ":"))


def spawner_from_env(environ: Mapping[str, str]) -> Spawner | None:
    """The spawner this process was started by; None when it was not delegated. LaunchError
    (`E-RUN-020`) when `MURMUR_SPAWNER` or its lifeline cannot be read."""
    raw = environ.get(SPAWNER_ENV)
    if raw is None:
        return None
    try:
        value = loads(raw.encode("utf-8", "surrogateescape"))
    except MurmurTuiError:
        value = None
    keys = ("session_id", "context_id", "trust", "delegation_id")
    fields = [value.get(key) for key in keys] if isinstance(value, dict) else []
    url = value.get("url") if isinstance(value, dict) else None
    text = [item for item in fields if isinstance(item, str) and item]
    if len(text) != len(keys) or not (url is None or isinstance(url, str)):
        raise LaunchError(f"{SPAWNER_ENV} is not the JSON a parent session sets ({{url, "
                          "session_id, context_id, trust, delegation_id}})", code=UNREADABLE)
    session_id, context_id, trust, delegation_id = text
    return Spawner(url, session_id, context_id, trust, delegation_id,
                   _lifeline(environ.get(LIFELINE_ENV)))


def _lifeline(raw: str | None) -> int | None:
    if raw is None:
        return None
    try:
        fd = int(raw)
        os.fstat(fd)
    except (ValueError, OSError):
        raise LaunchError(f"{LIFELINE_ENV}={raw!r} names no open descriptor",
                          code=UNREADABLE) from None
    return fd


class Lifeline:
    """Watches the spawner lifeline on a daemon thread: at end of file — the parent ended —
    `on_end` runs, once. `close` stops watching (the session ended first)."""

    def __init__(self, fd: int, on_end: Callable[[], None]) -> None:
        self._fd = fd
        self._on_end = on_end
        self.said = b""  # the first bytes the parent wrote (CANCELED, or nothing)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="spawner-lifeline",
                                        daemon=True)

    def start(self) -> Lifeline:
        self._thread.start()
        return self

    def _watch(self) -> None:
        try:
            while data := os.read(self._fd, 4096):
                if len(self.said) < len(CANCELED):
                    self.said += data[:len(CANCELED) - len(self.said)]
        except OSError:
            pass
        if not self._closed.is_set():
            self._on_end()

    def close(self) -> None:
        self._closed.set()


# -- completion.json -----------------------------------------------------------------------------
def completion(spawner: Spawner, capsule_name: str, capsule_version: str, session_id: str,
               status: str, workdir: Path, duration_ms: int, result_path: Path | None = None,
               detail: str | None = None, reported_by: str = "child") -> dict[str, Any]:
    return {"delegation_id": spawner.delegation_id, "capsule_name": capsule_name,
            "capsule_version": capsule_version, "session_id": session_id, "status": status,
            "result_path": str(result_path) if result_path is not None else None,
            "workdir": str(workdir), "duration_ms": duration_ms, "detail": detail,
            "reported_by": reported_by, "delivered": False,
            "delivery_error": "not posted: murmur-tui's parent reads completion.json"}


def write_completion(session_folder: Path, record: Mapping[str, Any]) -> Path:
    path = session_folder / COMPLETION_FILE
    write_private(path, json.dumps(dict(record), ensure_ascii=False, indent=2) + "\n")
    return path


def read_completion(session_folder: Path) -> dict[str, Any] | None:
    """The child's record, or None when there is none the parent can take (missing, not a
    regular file, not JSON, no known status)."""
    try:
        data = read_bounded(session_folder / COMPLETION_FILE, MAX_COMPLETION_BYTES).data
        value = loads(data)
    except (MurmurTuiError, OSError):
        return None
    if not isinstance(value, dict) or value.get("status") not in STATUSES:
        return None
    return value


class Child:
    """A delegated child's part around its session: the lifeline watched (its end reported as
    `spawner_ended`, then `wind_down`, as a first SIGTERM), and `completion.json` at the end."""

    def __init__(self, spawner: Spawner, emit: Callable[[ev.Event], object],
                 wind_down: Callable[[], None]) -> None:
        self.spawner = spawner
        self.spawner_ended = False
        self.canceled = False  # the parent canceled the task that delegated this session
        self._emit, self._wind_down = emit, wind_down
        self._started = time.monotonic()
        self._lifeline: Lifeline | None = None

    def watch(self) -> None:
        if self.spawner.lifeline is not None:
            self._lifeline = Lifeline(self.spawner.lifeline, self._parent_ended)
            self._lifeline.start()  # assigned first: its end may come at once

    def _parent_ended(self) -> None:
        self.spawner_ended = True
        self.canceled = self._lifeline is not None and self._lifeline.said == CANCELED
        self._emit(ev.SpawnerEnded(spawned_by=self.spawner.session_id,
                                   delegation_id=self.spawner.delegation_id,
                                   canceled=self.canceled))
        self._wind_down()

    def finish(self, capsule_name: str, capsule_version: str, session_id: str,
               exit_status: str | None, session_folder: Path, workdir: Path,
               result: str = "") -> Path | None:
        """Write `completion.json` (None when it cannot be written: the parent reports the
        child `crashed`). `exit_status` None: the session never ran."""
        if self._lifeline is not None:
            self._lifeline.close()
        if exit_status == "ok":
            status, detail = "ok", None
        elif self.spawner_ended or exit_status == "canceled":
            status = "terminated"
            detail = ("the task that delegated this one was canceled" if self.canceled else
                      "the parent session ended" if self.spawner_ended else "canceled")
        else:
            status = "error"
            said = result.strip().splitlines() or [f"the session ended {exit_status}"
                                                   if exit_status else "the session did not run"]
            detail = said[0][:2000]
        record = completion(self.spawner, capsule_name, capsule_version, session_id, status,
                            workdir, int((time.monotonic() - self._started) * 1000),
                            session_folder / "out" / "result.txt", detail)
        try:
            return write_completion(session_folder, record)
        except OSError:
            return None
