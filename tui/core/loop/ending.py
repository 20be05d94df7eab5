"""The last lines of a task and of the session — `task_end` with the result file, then
`session_end` — written once, by one thread, even when a second Ctrl-C finishes the session
from another thread while its own thread still runs."""

from __future__ import annotations

import contextlib
import threading
import time

from tui.core.errors import TraceWriteError
from tui.core.events import vocabulary as ev
from tui.core.events.kinds import ExitStatus
from tui.core.fs.workdir import SessionPaths, write_result
from tui.core.loop.report import Report
from tui.core.loop.state import TaskOutcome, TaskState, Usage


class Ending:
    def __init__(self, report: Report, paths: SessionPaths, threaded: bool,
                 script_writes_result: bool) -> None:
        self._report = report
        self._paths = paths
        self._threaded = threaded
        self._script_writes_result = script_writes_result
        self.lock = threading.RLock()  # taken before the stream's lock, by every thread
        self.live: TaskState | None = None  # the task that has not ended yet
        self.totals = Usage()
        self.tasks: list[str] = []
        self._task_ended = False
        self.session_ended = False
        # what ended the session from outside, when it was not its own doing (a formation's
        # end: `formation_ended`); `session_end` says it in place of the outcome's status
        self.ended_by: ExitStatus | None = None

    def task_started(self, task: TaskState) -> None:
        self.live, self._task_ended = task, False
        self.tasks.append(task.task_id)

    def task(self, task: TaskState, outcome: TaskOutcome) -> bool:
        """The TaskEnded event (trace `task_end`) and the task's result file, once; False when
        the session was already finished from another thread."""
        with self.lock:
            if self._task_ended or self.session_ended:
                return False
            self._task_ended = True
            # a script capsule writes its own result; murmur-tui writes it for a failure, or
            # copies it where the session's result belongs when --workdir separates the two
            paths = self._paths
            if not self._script_writes_result or outcome.exit_status != "ok" or \
                    paths.result != paths.accessible / "out" / "result.txt":
                write_result(paths, outcome.result, task.task_id if self._threaded else None)
            usage = task.usage
            self._report.emit(ev.TaskEnded(
                task_id=task.task_id, exit_status=outcome.exit_status, result=outcome.result,
                duration_ms=int((time.monotonic() - task.started) * 1000), turns=usage.turns,
                input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                tool_calls=usage.tool_calls, shell_calls=usage.shell_calls,
                reopen_count=task.reopens))
            return True

    def task_done(self, task: TaskState) -> None:
        """The task's spending joins the session's totals."""
        self.live = None
        self.totals = self.totals + task.usage

    def session(self, exit_status: ExitStatus, duration_ms: int) -> None:
        """The SessionEnded event (trace `session_end`), once."""
        with self.lock:
            if self.session_ended:
                return
            self.session_ended = True
            totals = self.totals
            self._report.emit(ev.SessionEnded(
                exit_status=self.ended_by or exit_status, duration_ms=duration_ms,
                total_turns=totals.turns,
                total_input_tokens=totals.input_tokens,
                total_output_tokens=totals.output_tokens, total_tool_calls=totals.tool_calls,
                total_shell_calls=totals.shell_calls))

    def now(self, outcome: TaskOutcome, duration_ms: int) -> None:
        """A second Ctrl-C: the running task ends with `outcome` and the session ends, nothing
        of the session thread's between them (locks in the session thread's order); then the
        stream delivers nothing more. A failed write stops nothing here."""
        stream = self._report.stream
        with self.lock, stream.exclusive():
            task = self.live
            if task is not None:
                with contextlib.suppress(TraceWriteError, OSError):
                    self.task(task, outcome)
            with contextlib.suppress(TraceWriteError, OSError):
                self.session("canceled", duration_ms)
            stream.close()
