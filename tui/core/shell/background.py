"""Background work (docs/shell.md, docs/tools.md): a shell command still running after
`lifecycle.shell_grace_secs` is demoted, as Murmur does. The call returns a work handle
(`wrk_…`) at once; the command goes on in its process group, its whole output (redacted, as a
call's capture is) written to `logs/<work_id>.log` as it arrives. When it ends, under
`task_acceptance: queue` + `after_task: sleep` its result is queued as a task of origin
`completion` (`shell_completed`); otherwise, or when the session ends first, it is
`shell_abandoned` — still running work is killed then (a command never outlives the
supervisor). Stopping one from the screen kills it and records `shell_abandoned` with
`reason: stopped`.

Every demotion is also one line of `background.jsonl` in the session folder (written and
flushed before the call returns), and every end another: a session killed outright leaves
work with no end there, which a `--resume` reports as lost (`shell_lost`).
"""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui.core import events as ev
from tui.core.ids import mint

WorkState = Literal["running", "done", "abandoned", "lost"]
Emit = Callable[[ev.Event], object]
# (text, task_id, announce) -> True when the completion task was queued; `announce` (the
# shell_completed event) runs first, so its line comes before the task's task_start
Deliver = Callable[[str, str, Callable[[], None]], bool]


@dataclass
class Work:
    """One demoted command, as the Background pane lists it."""

    work_id: str
    binary: str
    command: str
    log_path: Path  # the absolute path of its log
    output_path: str  # as the trace says it: `logs/<work_id>.log`
    started: float  # time.monotonic() at spawn
    state: WorkState = "running"
    exit_code: int | None = None
    duration_ms: int | None = None
    output_bytes: int = 0
    reason: str | None = None  # why it was abandoned ("stopped": the person stopped it)
    running_ms_at_end: int | None = None  # how long it had run when the session gave up
    kill: Callable[[str], None] = field(default=lambda reason: None, repr=False)
    ended: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def running_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)


# every live session's background work by work id (ids are unique): the screen stops one here
_BY_WORK: weakref.WeakValueDictionary[str, Background] = weakref.WeakValueDictionary()


def stop(work_id: str) -> bool:
    """Stop the running work `work_id` of any session in this process (the Background pane's
    key); False when no running work has that id."""
    background = _BY_WORK.get(work_id)
    return background.stop(work_id) if background is not None else False


def completion_text(work: Work) -> str:
    """The task a finished command's result arrives as: its handle, exit code and log."""
    return (f"Background shell command {work.work_id} finished.\n$ {work.command}\n"
            f"Exit code: {work.exit_code}\nDuration: {work.duration_ms} ms\n"
            f"Full output: {work.output_path} ({work.output_bytes} bytes)")


class Background:
    """The session's demoted commands. `attach` gives it the session's event sink and, when
    the lifecycle can take a completion, where completions go."""

    def __init__(self, grace_seconds: float, record: Path | None = None) -> None:
        self.grace_seconds = max(float(grace_seconds), 0.0)
        self.record = record  # background.jsonl in the session folder
        self._emit: Emit | None = None
        self._deliver: Deliver | None = None
        self._lock = threading.Lock()
        self._work: dict[str, Work] = {}
        self._closed = False
        self._watchers: list[Callable[[Work], None]] = []

    # -- wiring -------------------------------------------------------------------------------
    def attach(self, emit: Emit, deliver: Deliver | None) -> None:
        self._emit = emit
        self._deliver = deliver

    @property
    def delivers(self) -> bool:
        """Whether a finished command's result arrives as a task (queue + sleep)."""
        return self._deliver is not None

    def watch(self, watcher: Callable[[Work], None]) -> None:
        """Hear of every change of state (the Background pane)."""
        self._watchers.append(watcher)

    def emit(self, event: ev.Event) -> None:
        if self._emit is not None:
            self._emit(event)

    # -- the pane's view ----------------------------------------------------------------------
    def items(self) -> tuple[Work, ...]:
        with self._lock:
            return tuple(self._work.values())

    def running(self) -> bool:
        """Whether any work still runs (a sleeping session waits for it)."""
        with self._lock:
            return any(work.state == "running" for work in self._work.values())

    # -- the work's life ----------------------------------------------------------------------
    def new_id(self) -> str:
        return mint("wrk")

    def detached(self, work: Work, task_id: str, turn: int, call_id: str | None) -> None:
        """Record the demotion (the trace line and `background.jsonl`), before the call
        returns its handle."""
        with self._lock:
            self._work[work.work_id] = work
        _BY_WORK[work.work_id] = self
        self._note({"event": "detached", "work_id": work.work_id, "binary": work.binary,
                    "command": work.command, "detached_at_ms": int(time.time() * 1000)})
        self.emit(ev.ShellDetached(
            task_id=task_id, turn=turn, call_id=call_id, work_id=work.work_id,
            binary=work.binary, command=work.command,
            grace_ms=int(self.grace_seconds * 1000), output_path=work.output_path))
        self._changed(work)

    def finished(self, work: Work, exit_code: int, duration_ms: int) -> None:
        """The command ended (its log is complete): deliver its result or keep it for the
        session's end."""
        work.exit_code, work.duration_ms = exit_code, duration_ms
        work.output_bytes = _size(work.log_path)
        task_id = mint("tsk")

        def announce() -> None:
            work.state = "done"
            self._note({"event": "completed", "work_id": work.work_id})
            self.emit(ev.ShellCompleted(
                work_id=work.work_id, binary=work.binary, command=work.command,
                exit_code=exit_code, duration_ms=duration_ms, output_path=work.output_path,
                output_bytes=work.output_bytes, status="ok" if exit_code == 0 else "error",
                completion_task_id=task_id))

        with self._lock:
            stopped = work.reason is not None
            deliver = None if (self._closed or stopped) else self._deliver
        if deliver is not None:
            deliver(completion_text(work), task_id, announce)
        if stopped:
            self._abandon(work, ended=True)
        work.ended.set()
        self._changed(work)

    def stop(self, work_id: str) -> bool:
        """Stop one running command (the person asked): killed, `shell_abandoned` with
        `reason: stopped`. False when it is not running."""
        with self._lock:
            work = self._work.get(work_id)
            if work is None or work.state != "running" or work.reason is not None:
                return False
            work.reason = "stopped"
        work.kill("stopped")
        return True

    def close(self) -> None:
        """The session ends: no result is delivered from now on; running work is killed;
        every command whose result no task carried is `shell_abandoned`."""
        wait = 5.0  # for a killed command's reader to see it end
        with self._lock:
            self._closed = True
            pending = [work for work in self._work.values() if work.state == "running"]
        for work in pending:
            if work.reason is not None:
                continue  # being stopped: its own line follows
            still = not work.ended.is_set() and work.exit_code is None
            if still:
                work.running_ms_at_end = work.running_ms
                work.kill("supervisor exit")
                work.ended.wait(wait)
            self._abandon(work, ended=not still)

    def _abandon(self, work: Work, ended: bool) -> None:
        running_ms = work.running_ms_at_end
        if running_ms is None:
            running_ms = work.duration_ms if ended and work.duration_ms is not None \
                else work.running_ms
        work.state = "abandoned"
        self._note({"event": "abandoned", "work_id": work.work_id})
        self.emit(ev.ShellAbandoned(
            work_id=work.work_id, binary=work.binary, command=work.command,
            running_ms=running_ms, exit_code=work.exit_code if ended else None,
            output_path=work.output_path if ended else None,
            output_bytes=work.output_bytes if ended else None, reason=work.reason))
        self._changed(work)

    def _changed(self, work: Work) -> None:
        for watcher in list(self._watchers):
            watcher(work)

    def _note(self, line: dict[str, Any]) -> None:
        if self.record is None:
            return
        try:
            with open(self.record, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
                handle.flush()
        except OSError:
            pass  # the trace keeps the demotion; only a later resume's report is lost


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# -- work a session killed outright left behind (`--resume`: shell_lost) ------------------------
def session_folder(workdir: Path, session_id: str) -> Path:
    """Where a past session kept its trace: `<workdir>/.murmur/<id>` for a given workdir,
    else the workdir itself."""
    nested = workdir / ".murmur" / session_id
    return nested if nested.is_dir() else workdir


def unaccounted(folder: Path) -> list[dict[str, Any]]:
    """The demotions in `folder`'s `background.jsonl` that no end (completed, abandoned or an
    earlier report of its loss) follows — the session died with them running."""
    try:
        text = (folder / "background.jsonl").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    detached: dict[str, dict[str, Any]] = {}
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue  # a line cut by the kill: nothing to report for it
        if not isinstance(line, dict) or not isinstance(line.get("work_id"), str):
            continue
        if line.get("event") == "detached":
            detached[line["work_id"]] = line
        else:
            detached.pop(line["work_id"], None)
    return list(detached.values())


def report_lost(folder: Path, session_id: str, reconciled_by: str, task_id: str
                ) -> list[dict[str, Any]]:
    """Append Murmur's `shell_lost` line for each unaccounted demotion to the trace of the
    session that started it (`session_id`, in `folder`), and note it reported so a second
    resume does not report it again. Returns the lost work."""
    lost = unaccounted(folder)
    if not lost:
        return []
    parent = _session_node(folder / "trace.jsonl")
    lines = []
    for work in lost:
        line: dict[str, Any] = {"event_type": "shell_lost", "event_id": mint("evt")}
        if parent is not None:
            line["parent_id"] = parent
        line.update({
            "session_id": session_id, "timestamp": int(time.time() * 1000),
            "work_id": work["work_id"], "binary": work.get("binary", ""),
            "command": work.get("command", ""), "detached_at_ms": work.get("detached_at_ms", 0),
            "reconciled_by_session": reconciled_by, "reconciled_task_id": task_id})
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    try:
        with open(folder / "trace.jsonl", "a", encoding="utf-8") as handle:
            handle.writelines(lines)
    except OSError:
        pass  # the report task still names them
    notes = Background(0, folder / "background.jsonl")
    for work in lost:
        notes._note({"event": "lost", "work_id": work["work_id"],
                     "reconciled_by_session": reconciled_by})
    return lost


def lost_text(lost: list[dict[str, Any]], session_id: str) -> str:
    """The `detached_lost` task: every lost work id in one message."""
    rows = "\n".join(f"- {work['work_id']}: $ {work.get('command', '')}" for work in lost)
    return (f"Session {session_id} ended without reporting {len(lost)} background shell "
            f"command{'s' if len(lost) != 1 else ''}; no exit code or output of "
            f"{'them' if len(lost) != 1 else 'it'} survives:\n{rows}")


def _session_node(trace: Path) -> str | None:
    try:
        with open(trace, encoding="utf-8") as handle:
            first = json.loads(handle.readline())
    except (OSError, ValueError):
        return None
    node = first.get("event_id") if isinstance(first, dict) else None
    return node if isinstance(node, str) and first.get("event_type") == "session_start" \
        else None
