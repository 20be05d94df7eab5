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
work with no end there, which a `--resume` reports as lost (`shell_lost`). Each line passes the
one redaction (a key in a command is `[redacted]` there too); the file is 0600 in a 0700
folder, and is never written through a link nor into anything but a regular file.

The session's shell can write the session folder, so a resume trusts nothing at these names:
`background.jsonl` is read as `safe_read` reads (no link followed, never blocking, a regular
file, at most `MAX_RECORD_BYTES`), each line parsed as `strict_json` parses it, and a line
that is not a note is skipped with a warning naming file and line. A demotion whose log
cannot be kept (`logs/` is a link, say) is said to the model in the call's result and on the
screen (`W-SHELL-LOG`, naming the path and why).
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

from tui.core.errors import FileRefused, NotJson, TraceFormatError
from tui.core.events import vocabulary as ev
from tui.core.fs.private_files import append_private, open_append, write_all
from tui.core.fs.safe_read import read_bounded
from tui.core.ids import mint
from tui.core.text.secrets import redact
from tui.core.text.strict_json import loads_line
from tui.core.trace.reader import first_event

RECORD_FILE = "background.jsonl"
MAX_RECORD_BYTES = 16 * 1024 * 1024  # ~50,000 demotions; what is past it is not read
WorkState = Literal["running", "done", "abandoned", "lost"]
Emit = Callable[[ev.Event], object]
Warn = Callable[[str], None]
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
    log_problem: str | None = None  # why its output is not (or no longer) kept in its log
    log_warned: bool = False
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
    output = f"Full output: {work.output_path} ({work.output_bytes} bytes)"
    if work.log_problem is not None:
        output = (f"Full output: not kept ({work.log_problem}); {work.output_path} is "
                  f"incomplete or absent")
    return (f"Background shell command {work.work_id} finished.\n$ {work.command}\n"
            f"Exit code: {work.exit_code}\nDuration: {work.duration_ms} ms\n{output}")


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
        self._record_failed = False

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
        self._log_missing(work)
        self._changed(work)

    def finished(self, work: Work, exit_code: int, duration_ms: int) -> None:
        """The command ended (its log is complete): deliver its result or keep it for the
        session's end."""
        work.exit_code, work.duration_ms = exit_code, duration_ms
        work.output_bytes = _size(work.log_path)
        self._log_missing(work)
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

    def _log_missing(self, work: Work) -> None:
        """Say on the screen (once) that a command's output is not kept in its log."""
        if work.log_problem is None or work.log_warned:
            return
        work.log_warned = True
        self.emit(ev.Warning(code="W-SHELL-LOG", text=(
            f"background work {work.work_id}: its output is not kept in {work.log_path}: "
            f"{work.log_problem}")))

    def _note(self, line: dict[str, Any]) -> None:
        if self.record is None:
            return
        try:
            append_private(self.record, redact(json.dumps(line, ensure_ascii=False)) + "\n")
        except OSError as exc:  # the trace keeps the demotion; a later resume's report is lost
            if not self._record_failed:
                self._record_failed = True
                self.emit(ev.Warning(code="W-BACKGROUND", text=(
                    f"{self.record} cannot be written: {exc.strerror or exc}; a resume after a "
                    "crash cannot report this session's background work")))


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


def unaccounted(folder: Path, warn: Warn | None = None) -> list[dict[str, Any]]:
    """The demotions in `folder`'s `background.jsonl` that no end (completed, abandoned or an
    earlier report of its loss) follows — the session died with them running. What cannot be
    read is skipped; `warn` hears why, naming file and line."""
    path = folder / RECORD_FILE
    say = warn or (lambda text: None)
    try:
        read = read_bounded(path, MAX_RECORD_BYTES)
    except FileRefused as exc:
        if str(exc) != "no such file":
            say(f"{path}: not read: {exc}; background work it noted is not reported lost")
        return []
    if read.truncated:
        say(f"{path}: only its first {MAX_RECORD_BYTES // (1024 * 1024)} MiB were read "
            f"(it holds {read.size} bytes)")
    detached: dict[str, dict[str, Any]] = {}
    raws = read.data.split(b"\n")
    skipped: list[tuple[int, str]] = []
    for number, raw in enumerate(raws, start=1):
        if not raw.strip():
            continue
        try:
            line = loads_line(raw)
        except NotJson as exc:
            cut = number == len(raws) and not read.truncated
            skipped.append((number, "cut short (the session was killed while writing it)"
                            if cut else f"not JSON ({exc})"))
            continue
        if not isinstance(line, dict) or not isinstance(line.get("work_id"), str):
            skipped.append((number, "not a note of background work"))
            continue
        if line.get("event") == "detached":
            detached[line["work_id"]] = line
        else:
            detached.pop(line["work_id"], None)
    if skipped:
        number, why = skipped[0]
        more = f" ({len(skipped)} lines skipped in all)" if len(skipped) > 1 else ""
        say(f"{path}:{number}: {why}; skipped{more}")
    return list(detached.values())


def report_lost(folder: Path, session_id: str, reconciled_by: str, task_id: str,
                warn: Warn | None = None) -> list[dict[str, Any]]:
    """Append Murmur's `shell_lost` line for each unaccounted demotion to the trace of the
    session that started it (`session_id`, in `folder`), and note it reported so a second
    resume does not report it again. Returns the lost work; `warn` hears what could not be
    read or written."""
    say = warn or (lambda text: None)
    lost = unaccounted(folder, say)
    if not lost:
        return []
    trace = folder / "trace.jsonl"
    parent = _session_node(trace, say)
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
        lines.append(redact(json.dumps(line, ensure_ascii=False, separators=(",", ":"))) + "\n")
    try:  # after a cut last line, on a line of its own: the trace stays readable
        fd = open_append(trace)
        try:
            write_all(fd, "".join(lines).encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError as exc:
        say(f"{trace}: the shell_lost lines could not be written: {exc.strerror or exc}")
    notes = Background(0, folder / RECORD_FILE)
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


def _session_node(trace: Path, say: Warn) -> str | None:
    """The event id of the trace's `session_start` line (its first), if it is one."""
    try:
        first = first_event(trace)
    except TraceFormatError as exc:
        say(f"{exc}; the shell_lost lines have no parent")
        return None
    node = first.get("event_id")
    return node if isinstance(node, str) and first.get("event_type") == "session_start" \
        else None
