"""The agent loop (spec §5.1–5.2, §5.4): one session, one task, turns until the model is done.

`Session` builds the loop's pieces, each with what it needs, in the order each needs the one
before: construction checks the input (LaunchError) and builds the driver, host, tools, hooks
and dispatcher; `run()` is plain synchronous code — the TUI runs it in a thread worker,
headless mode on a worker thread — that writes the workdir, the trace (the stream's primary
sink), the conversation record and `out/result.txt` for every outcome, and stops between
turns when `cancel` is set. `finish_now()` ends the files from any thread.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tui.core import ids, session_index
from tui.core.artifacts.resolve import pin_first_run
from tui.core.asking.request import InputResponder
from tui.core.cancel import CancelToken
from tui.core.chat import compact_json
from tui.core.errors import (
    ComponentLoadError,
    ContextInUse,
    IncompatibleComponent,
    LaunchError,
    TraceWriteError,
)
from tui.core.events.stream import EventSink, EventStream
from tui.core.fs import paths
from tui.core.fs.private_files import private_home
from tui.core.fs.task_file import write_task
from tui.core.fs.workdir import session_paths, write_manifest_copy, write_result
from tui.core.inference.driver import Driver
from tui.core.loop import lifecycle, resume, setup, task
from tui.core.loop.context import Context, sha
from tui.core.loop.dispatch import Dispatcher
from tui.core.loop.ending import Ending
from tui.core.loop.hook_points import HookPoints, hooks_of
from tui.core.loop.host import Host
from tui.core.loop.inbox import TaskCancel
from tui.core.loop.journal import JOURNAL, Journal, JournaledQuestions
from tui.core.loop.journal_seal import Seal
from tui.core.loop.launch import LaunchOptions, NoResponder, SessionResult
from tui.core.loop.report import Report
from tui.core.loop.runtime import runtime_tools
from tui.core.loop.state import Canceled, Failed, Finished, TaskOutcome
from tui.core.loop.turn import Turns
from tui.core.manifest.model import Capsule, Inference
from tui.core.record.attachments import AttachmentStore
from tui.core.record.context_lock import ContextLock, lock_path
from tui.core.record.reader import RecordReader
from tui.core.record.writer import RecordWriter, record_path
from tui.core.text.segments import check_segment
from tui.core.trace.writer import TraceWriter

if TYPE_CHECKING:  # loaded only by the sessions that use them
    from tui.core.events.kinds import TaskOrigin, TaskVia
    from tui.core.tools.approvals import Approvals
    from tui.core.wasm.calls import HostServices
    from tui.core.wasm.runtime import WasmRuntime
    from tui.core.wasm.script import ScriptCapsule


class Session:
    """One launch of a capsule. Construction checks the input (LaunchError); `run()` runs."""

    def __init__(
        self,
        capsule: Capsule,
        options: LaunchOptions | None = None,
        sinks: Sequence[EventSink] = (),
        responder: InputResponder | None = None,
        cancel: CancelToken | None = None,
        driver: Driver | None = None,
        approver: Approvals | None = None,
    ) -> None:
        options = options or LaunchOptions()
        script = setup.script_component(capsule)
        if capsule.inference is None and script is None:
            raise LaunchError(f"{capsule.manifest_path}: the capsule declares no inference: "
                              "block and has no capsule.wasm, so there is nothing to run (add "
                              "inference.model and inference.driver.artifact)")
        self.capsule = capsule
        self.inference: Inference = capsule.inference or Inference(model="", driver_artifact="")
        self.home = (options.home or paths.murmur_home()).resolve()
        self.resume, self.seat, self.spawner = options.resume, options.seat, options.spawner
        if self.resume is not None:
            self.context_id = setup.resumable(capsule, self.resume)
        else:
            self.context_id = check_segment(options.context_id, "--context") \
                if options.context_id is not None else ids.context_id()
        # one context for every task (else the door mints one per task, as Murmur)
        self.context_fixed = self.resume is not None or options.context_id is not None
        self.session_id = ids.session_id()
        self.paths = session_paths(capsule.root, capsule.name, self.session_id,
                                   options.workdir, self.home)
        given = setup.read_task(options.task, options.task_file, self.paths.accessible,
                                capsule.root)
        self.task_text = given or ""
        # `lifecycle.task_acceptance: none` with no task at all: the session starts and ends
        self.no_task = given is None and capsule.lifecycle.task_acceptance == "none"
        self.inbox = lifecycle.inbox_for(capsule.lifecycle, options.more_tasks)
        self._write_task_file = options.task is not None or options.task_file is not None
        self.cancel = cancel or CancelToken()  # the session's: setting it ends everything
        self.task_cancel = TaskCancel(self.cancel)  # the running task's: CancelTask sets it
        self._first_ids: task.FirstIds = task.NO_FIRST_IDS  # set by take_first
        self.record_path = (record_path(self.home, capsule.record_store, self.context_id)
                            if capsule.context.record else None)
        self.report = Report(EventStream(self.session_id, sinks), self.paths.bootstrap_log)
        self.reader = RecordReader(on_skipped=self.report.log)
        self.attachments = AttachmentStore(
            (self.record_path.parent if self.record_path else self.paths.session)
            / "attachments")
        self._record: RecordWriter | None = None
        self._trace: TraceWriter | None = None
        self._session_started = False
        self._home_warning = private_home(self.home)  # the input was good: files may start
        inherited = resume.journaled(self.resume, self.home, self.reader, self.record_path)
        self._found, self._resume_notes = inherited.found, inherited.notes  # W-RESUME at start
        journal = Journal(self.paths.session / JOURNAL, Seal(self.home, self.session_id),
                          lambda text: self.report.warn_and_log("W-JOURNAL", text))
        self.questions = JournaledQuestions(journal, self.context_id, self.session_id,
                                            self._found.carried())
        self.runtime: WasmRuntime | None = setup.wasm_runtime(  # only to host a component
            capsule, paths.compiled_cache(self.home), self.report.progress, options.seat)
        self._build(script, driver, responder or NoResponder(), approver, options)
        if self._found.turn is not None and not self.task_text.strip():
            self.no_task = False  # the first task goes on with the turn that session died in
        if self.resume is not None and self.resume.mode == "compact" and \
                not self.hooks.bound("on-compaction"):
            self.close_runtime()
            raise LaunchError("--resume-mode compact hands the conversation to the capsule's "
                              "on-compaction hook, and this capsule binds none (use --resume-mode"
                              " full)")
        self.ending = Ending(self.report, self.paths,
                             capsule.lifecycle.conversation == "threaded", self.script is not None)
        self._started = time.monotonic()
        self._started_ms = session_index.now_ms()
        self._context_lock: ContextLock | None = None
        if self.record_path is not None:
            lock = ContextLock(lock_path(self.home, capsule.record_store, self.context_id))
            try:
                lock.acquire(self.session_id, self.context_id)
            except ContextInUse:
                self.close_runtime()
                raise
            self._context_lock = lock

    def _build(self, script: Path | None, driver: Driver | None, responder: InputResponder,
               approver: Approvals | None, options: LaunchOptions) -> None:
        """Script, driver, host, tools, hooks, dispatcher, each after what it needs; a component
        that cannot load refuses the launch (LaunchError), leaving nothing running."""
        capsule, report = self.capsule, self.report
        component_env = setup.identity_env(capsule, self.session_id, self.context_id)
        self.script: ScriptCapsule | None = None
        try:
            if script is not None:
                from tui.core.wasm.script import ScriptCapsule

                assert self.runtime is not None
                self.script = ScriptCapsule(self.runtime, script, capsule, self.paths.accessible,
                                            self.paths.logs, component_env)
            if driver is not None and hasattr(driver, "on_retry"):
                driver.on_retry = report.retrying  # a driver built elsewhere: told here
            self.driver: Driver = driver or (
                setup.build_driver(capsule, self.runtime, self.paths, self.home, component_env,
                                   report.warn, report.retrying)
                if capsule.inference is not None else setup.NoDriver())
            self.host = Host(report, responder, self.task_cancel,
                             capsule.lifecycle.input_timeout_secs, self.inference.model,
                             self.reader, self.record_path, driver=self.driver,
                             questions=self.questions)
            tool_stream = report.current_turn_stream()
            self.tools = setup.build_tools(capsule, self.paths, self.home, self.runtime,
                                           self.host, self.attachments, component_env,
                                           tool_stream)
            self.waiting = runtime_tools(self.tools, capsule, self.paths, self.home, report,
                                         component_env, options.seat)
            self.hooks = HookPoints(hooks_of(capsule, self.home, self.paths, component_env),
                                    self.runtime, self.host, self.paths, report)
        except (ComponentLoadError, IncompatibleComponent) as exc:
            self.close_runtime()
            raise LaunchError(str(exc)) from None
        except BaseException:
            self.close_runtime()
            raise
        self.dispatch = Dispatcher(self.tools, report, self.hooks, self.task_cancel,
                                   tool_stream, approver, self.questions)
        self._script_host: HostServices = self.host
        if self.script is not None:
            from tui.core.wasm.artifact_store import SessionArtifacts, wasm_tool_factory

            self._script_host = self.host.for_script(
                self.dispatch.invoke_from_script, SessionArtifacts(
                    capsule, self.home, self.session_id, self.paths.tools, self.tools,
                    wasm_tool_factory(self.runtime, capsule, self.paths.accessible,
                                      self.paths.logs, self.host, self.attachments,
                                      component_env, tool_stream), report.log))

    def submit(self, text: str, task_id: str | None = None, context_id: str | None = None,
               via: TaskVia | None = None, origin: TaskOrigin = "user",
               caller_member: str | None = None) -> str | None:
        """Send the session a task (run after the running one); why it was refused, or None."""
        return lifecycle.send(self.capsule.lifecycle, self.inbox, text, task_id, context_id,
                              via, origin, caller_member)

    @property
    def waits_for_first(self) -> bool:
        """No task was given and the capsule takes one: it needs `take_first` before `run`."""
        return not self.task_text.strip() and not self.no_task and self._found.turn is None

    def take_first(self, text: str, task_id: str | None = None, context_id: str | None = None,
                   via: TaskVia | None = None, origin: TaskOrigin = "user",
                   caller_member: str | None = None) -> None:
        """The first task, sent after the build (before `run`): written to `task.md` as a task
        given at launch is, run under `task_id` when named (`caller_member`: a member sent it)."""
        self.task_text = text
        self._write_task_file = True
        self._first_ids = (task_id, context_id, via, origin, caller_member)

    def close_unstarted(self) -> None:
        """Give back what a session that never runs holds (components, context lock)."""
        self.close_runtime()
        self._release_context()

    def cancel_task(self, task_id: str) -> str:
        """Cancel one task and no other: `queued` (it waited and is taken out: it never runs),
        `running` (it ends canceled; the session goes on as its lifecycle says) or `ahead` (it
        has not begun: it ends canceled as it begins). The session's own cancel ends them all."""
        if self.inbox.remove(task_id) is not None:
            return "queued"
        return "running" if self.task_cancel.cancel_task(task_id) else "ahead"

    def close_runtime(self) -> None:
        if self.runtime is not None:
            self.runtime.close()
            gc.collect()  # no Store may outlive the session (wasm-hosting §7, gotcha 5)

    # -- the session ------------------------------------------------------------------------
    def run(self) -> SessionResult:
        started = self._started = time.monotonic()
        try:
            self.paths.create()
            self._trace = TraceWriter(self.paths.trace, self.capsule.trace.capture)
        except (OSError, TraceWriteError) as exc:
            self.close_runtime()
            self._release_context()
            raise LaunchError(f"cannot create the session workdir: {exc}") from None
        self.report.stream.set_primary(self._trace)
        if self.record_path is not None:
            self._record = RecordWriter(self.home, self.record_path, lambda text:
                                        self.report.warn_and_log("W-RECORD", text))
        outcome: TaskOutcome = Failed("error: the session did not start", "runtime_error")
        last = outcome
        try:
            pin_first_run(self.capsule, self.home)
            setup.write_tool_manifests(self.tools, self.paths)
            self.hooks.stage(self.capsule.capabilities.shell_allow)
            deps = self._start()
            if self.no_task:
                outcome = last = Finished("")
            else:
                outcome, last = lifecycle.run_all(deps, self._first_task(), self.inbox)
        except TraceWriteError as exc:
            outcome = last = self._trace_failed(exc)
        except Exception as exc:  # setup failed (the disk, or a bug): still finish the files
            import traceback  # a failing session only

            self.report.log("session setup failed:\n" + traceback.format_exc())
            outcome = last = Failed(f"error: session setup failed: {exc}", "runtime_error")
            write_result(self.paths, outcome.result)
        finally:
            self.tools.close()
            self.driver.close()
        self._end(outcome, started)
        self.close_runtime()
        return SessionResult(self.session_id, outcome.exit_status, last.result, self.paths,
                             self.record_path)

    def _start(self) -> task.TaskDeps:
        """The session's first lines (warnings, session_start) and what its tasks run with."""
        capsule, inference, report = self.capsule, self.inference, self.report
        setup.first_warnings(capsule, self._home_warning, report, self.tools)
        for note in self._resume_notes:
            report.warn_and_log("W-RESUME", note)
        if self._write_task_file:
            write_task(self.paths.accessible, self.task_text)
        manifest_copy = self.paths.accessible / "murmur.yaml"
        if not manifest_copy.exists():
            write_manifest_copy(capsule, manifest_copy)
        setup.write_murmur_md(capsule, self.session_id, self.tools.specs(),
                              self.hooks.bound("on-compaction"), self.paths.accessible,
                              report.warn_and_log)
        system = setup.system_block(capsule)
        tool_payload = [spec.payload() for spec in self.tools.specs()]
        report.log("tool inventory " + compact_json(tool_payload))
        head = setup.request_head(capsule, inference, system, tool_payload, self.context_id)
        context = Context(self.attachments, self._record, capsule.trace.capture == "content",
                          self.context_id, head)
        self._session_started = True
        report.emit(setup.session_started(
            capsule, inference, self.paths, self.context_id, self.record_path, tool_payload,
            self.resume.entry.session_id if self.resume else None, self.seat, self.spawner))
        self._index(ended=False)
        if self.resume is not None:  # background work that session died with: shell_lost
            lifecycle.report_lost(self.inbox, report, self.resume.entry, self.session_id)
        self.hooks.session_start(capsule.name, capsule.version, self.session_id, inference.model,
                                 ("shell",) if capsule.capabilities.shell_allow else ())
        turns = None if self.script is not None else Turns(
            self.driver, context, report, self.hooks, self.dispatch, self.task_cancel, inference,
            capsule.context.max_tokens, self.paths.out, head, tool_payload, sha(system),
            sha(compact_json(tool_payload)), self.waiting)
        return task.TaskDeps(
            capsule, self.context_id, context, report, self.hooks, self.dispatch, self.ending,
            self.task_cancel, self.paths, self.reader, self.record_path, self._record, turns,
            self.script, self._script_host)

    def _first_task(self) -> task.TaskInput:
        """What the first task was asked. With no task of its own, a resumed session's first
        task is the one its predecessor died in, under that task's id."""
        turn = self._found.turn
        continued = turn.task_id if turn is not None and not self.task_text.strip() else None
        task_id, context_id, via, origin, caller = self._first_ids
        return task.TaskInput(self.task_text, task_id=task_id or continued, via=via, origin=origin,
                              context_id=context_id, task_file_written=self._write_task_file,
                              resume=self.resume.mode if self.resume else None, rebuild=turn,
                              caller_member=caller)

    def _end(self, outcome: TaskOutcome, started: float) -> None:
        if not self._session_started:
            self.hooks.close()
            self._close_files()
            return
        duration_ms = int((time.monotonic() - started) * 1000)
        totals = self.ending.totals
        self.hooks.session_end(
            total_turns=totals.turns, total_input_tokens=totals.input_tokens,
            total_output_tokens=totals.output_tokens, total_tool_calls=totals.tool_calls,
            total_shell_calls=totals.shell_calls, duration_ms=duration_ms,
            exit_status=outcome.exit_status)
        self.hooks.close()
        try:
            self.ending.session(outcome.exit_status, duration_ms)
        except TraceWriteError as exc:
            self._trace_failed(exc)
        self._index(ended=True, exit_status=outcome.exit_status)
        self._close_files()

    def _index(self, ended: bool, exit_status: str | None = None) -> None:
        """The session's line in `$MURMUR_HOME/tui/sessions.jsonl` (at start and at end)."""
        capsule = self.capsule
        session_index.write(self.home, session_index.Entry(
            session_id=self.session_id, capsule_name=capsule.name,
            capsule_path=str(capsule.manifest_path),
            record=capsule.record_store if self.record_path is not None else None,
            context_id=self.context_id, workdir=str(self.paths.accessible),
            started_ms=self._started_ms, ended_ms=session_index.now_ms() if ended else None,
            exit_status=exit_status, tasks=len(self.ending.tasks),
            resumed_from=self.resume.entry.session_id if self.resume else None))

    def finish_now(self, reason: str = "canceled by the user") -> None:
        """End the session's files at once, from any thread (a second Ctrl-C): the running
        task ends `canceled`, the session ends, the record and trace take no more lines. What
        still runs on the session's own thread writes nothing after this."""
        self.cancel.set()
        self.ending.now(Canceled(f"error: {reason}"),
                        int((time.monotonic() - self._started) * 1000))
        if self._record is not None:
            self._record.close(seal=True)
        if self._trace is not None:
            self._trace.close()
        self._release_context()

    def _close_files(self) -> None:
        if self._record is not None:
            self._record.close()
        if self._trace is not None:
            self._trace.close()
        self._release_context()

    def _release_context(self) -> None:
        if self._context_lock is not None:
            self._context_lock.release()
            self._context_lock = None

    def _trace_failed(self, exc: TraceWriteError) -> Failed:
        """A failed trace write ends the session: the trace stops, the reason is kept."""
        if self._trace is not None:
            self._trace.close()
        reason = f"error: {exc} [{exc.code}]"
        self.report.log(reason)
        self.report.warn(exc.code, reason.removeprefix("error: "))
        write_result(self.paths, reason)
        return Failed(reason, "runtime_error")
