"""The agent loop (spec §5.1–5.2, §5.4): one session, one task, turns until the model is done.

`Session.run()` is plain synchronous code: the TUI runs it in a thread worker, headless mode on
the main thread. It reports through an `EventStream` (the trace writer first), asks the human
through an `InputResponder`, writes the conversation record as the context grows and
`out/result.txt` for every outcome, and stops between turns when `cancel` is set.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core import compaction, continuation, ids, paths, tokens
from tui.core import events as ev
from tui.core.asking import InputResponder, InputTimeout, NoAnswer
from tui.core.attachments import AttachmentStore
from tui.core.cancel import CancelToken
from tui.core.chat import (
    Message,
    assistant_message,
    chat_shape_problem,
    compact_json,
    for_payload,
    tool_message,
    user_message,
)
from tui.core.context_lock import ContextInUse, ContextLock, lock_path
from tui.core.errors import LaunchError
from tui.core.inference.driver import Driver, DriverError, InferenceCanceled
from tui.core.inference.response import MalformedResponse, ModelResponse, parse_response
from tui.core.inference.retry import RetryNotice
from tui.core.manifest.model import Capsule, Inference
from tui.core.private import append_private, private_home
from tui.core.record import RecordReader, RecordWriter, record_path
from tui.core.secrets import StreamRedactor, redact
from tui.core.segments import check_segment
from tui.core.session_hooks import SessionHooks
from tui.core.session_host import SessionHost
from tui.core.session_setup import (
    build_driver,
    build_tools,
    needs_wasm,
    read_task,
    script_component,
    system_block,
    write_tool_manifests,
)
from tui.core.tools import ToolCall, ToolOutcome, ToolTable, refusal
from tui.core.trace import TraceWriteError, TraceWriter
from tui.core.wasm.cache import ComponentLoadError
from tui.core.wasm.guest import GuestFailure
from tui.core.wasm.runtime import WasmRuntime
from tui.core.wasm.script import ScriptCapsule
from tui.core.wasm.values import record
from tui.core.wasm.versions import IncompatibleComponent
from tui.core.workdir import SessionPaths, session_paths, write_manifest_copy, write_result


@dataclass(frozen=True)
class LaunchOptions:
    task: str | None = None
    task_file: Path | None = None
    context_id: str | None = None
    workdir: Path | None = None
    home: Path | None = None


@dataclass(frozen=True)
class SessionResult:
    session_id: str
    exit_status: str
    result: str
    paths: SessionPaths
    record_path: Path | None

    @property
    def ok(self) -> bool:
        return self.exit_status == "ok"


class _NoResponder:
    def ask(self, request: Any) -> str:
        raise NoAnswer("this session has no way to ask the human")


@dataclass
class _Task:
    task_id: str
    started: float
    messages: list[Message]
    ids: list[str] = field(default_factory=list)  # parallel to messages
    payload: list[Message] = field(default_factory=list)  # messages as the driver sees them
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    shell_calls: int = 0
    reopens: int = 0


@dataclass(frozen=True)
class _Outcome:
    exit_status: str
    result: str
    cause: str | None = None  # set for a failed attempt (task_failed)
    turn: int | None = None


class _Canceled(Exception):
    pass


class _InputTimedOut(Exception):
    def __init__(self, text: str, turn: int) -> None:
        super().__init__(text)
        self.turn = turn


@dataclass
class _NoDriver:
    """A script capsule without an inference block: hooks asking for inference get an error."""

    name = "none"

    def complete(self, request: Any, stream: Any, cancel: Any) -> Any:
        raise DriverError("this capsule declares no inference: block (inference.driver."
                          "artifact), so run-inference has no driver")

    def close(self) -> None:
        return None


@dataclass
class _Totals:
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    shell_calls: int = 0
    tasks: list[str] = field(default_factory=list)


class Session:
    """One launch of a capsule. Construction checks the input (LaunchError); `run()` runs."""

    def __init__(
        self,
        capsule: Capsule,
        options: LaunchOptions | None = None,
        sinks: Sequence[ev.EventSink] = (),
        responder: InputResponder | None = None,
        cancel: CancelToken | None = None,
        driver: Driver | None = None,
    ) -> None:
        options = options or LaunchOptions()
        script = script_component(capsule)
        if capsule.inference is None and script is None:
            raise LaunchError(f"{capsule.manifest_path}: the capsule declares no inference: "
                              "block and has no capsule.wasm, so there is nothing to run (add "
                              "inference.model and inference.driver.artifact)")
        self.capsule = capsule
        self.inference: Inference = capsule.inference or Inference(model="", driver_artifact="")
        self.home = (options.home or paths.murmur_home()).resolve()
        try:
            self.context_id = check_segment(options.context_id, "--context") \
                if options.context_id is not None else ids.context_id()
        except ValueError as exc:
            raise LaunchError(str(exc)) from None
        self.session_id = ids.session_id()
        self.paths = session_paths(capsule.root, capsule.name, self.session_id,
                                   options.workdir, self.home)
        self.task_text = read_task(options.task, options.task_file, self.paths.accessible,
                                   capsule.root)
        self._write_task_file = options.task is not None or options.task_file is not None
        self.responder = responder or _NoResponder()
        self.cancel = cancel or CancelToken()
        self.record_path = (record_path(self.home, capsule.record_store, self.context_id)
                            if capsule.context.record else None)
        self.reader = RecordReader(on_skipped=self._log_bootstrap)
        self.attachments = AttachmentStore(
            (self.record_path.parent if self.record_path else self.paths.session)
            / "attachments")
        self._record: RecordWriter | None = None
        self._stream = ev.EventStream(self.session_id, sinks)
        self._trace: TraceWriter | None = None
        self._shas: dict[str, str] = {}
        self._session_started = False
        self.current_task: str | None = None  # while a task runs: its id (the record scope)
        self.current_turn = 0
        self.continuation: continuation.Held | None = None  # a stateful driver's state
        self._invocations = 0
        self.host = SessionHost(self)
        self._home_warning = private_home(self.home)  # the input was good: files may start
        self.runtime = WasmRuntime(paths.compiled_cache(self.home), self._progress) \
            if needs_wasm(capsule) else None
        component_env = {"MURMUR_SESSION_ID": self.session_id,
                         "MURMUR_CONTEXT_ID": self.context_id}
        self.script: ScriptCapsule | None = None
        try:
            if script is not None:
                assert self.runtime is not None
                self.script = ScriptCapsule(self.runtime, script, capsule,
                                            self.paths.accessible, self.paths.logs,
                                            component_env)
            self.driver: Driver = driver or (
                build_driver(capsule, self.runtime, self.paths, self.home, component_env,
                             self._warn)
                if capsule.inference is not None else _NoDriver())
            if hasattr(self.driver, "on_retry"):
                self.driver.on_retry = self._retrying
            self.tools = build_tools(capsule, self.paths, self.home, self.runtime, self.host,
                                     self.attachments, component_env, self.host.tool_stream)
            self.hooks = SessionHooks(self, component_env)
        except (ComponentLoadError, IncompatibleComponent) as exc:
            self.close_runtime()
            raise LaunchError(str(exc)) from None
        except BaseException:
            self.close_runtime()
            raise
        self._terminal = threading.RLock()  # the last lines are written once, by one thread
        self._live: _Task | None = None
        self._task_ended = False
        self._session_ended = False
        self._totals = _Totals()
        self._started = time.monotonic()
        self._context_lock: ContextLock | None = None
        if self.record_path is not None:
            lock = ContextLock(lock_path(self.home, capsule.record_store, self.context_id))
            try:
                lock.acquire(self.session_id, self.context_id)
            except ContextInUse:
                self.close_runtime()
                raise
            self._context_lock = lock

    def close_runtime(self) -> None:
        if self.runtime is not None:
            self.runtime.close()
            gc.collect()  # no Store may outlive the session (wasm-hosting §7, gotcha 5)

    def _warn(self, code: str, text: str) -> None:
        self._emit(ev.Warning, code=code, text=text)

    def _retrying(self, notice: RetryNotice) -> None:
        """A model call will be tried again (the built-in HTTP drivers)."""
        self._emit(ev.InferenceRetry, task_id=self.current_task, turn=self.current_turn,
                   attempt=notice.attempt, max_attempts=notice.max_attempts,
                   status=notice.status, reason=notice.reason,
                   delay_ms=int(notice.delay_s * 1000))

    def _progress(self, text: str) -> None:
        self._stream.emit(ev.Progress, text=text)

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
        self._stream.set_primary(self._trace)
        if self.record_path is not None:
            self._record = RecordWriter(self.home, self.record_path, self._warn_record)
        totals = self._totals
        outcome = _Outcome("failed", "error: the session did not start")
        tools = self.tools
        try:
            write_tool_manifests(tools, self.paths)
            self.hooks.stage()
            self._start(tools)
            outcome = self._run_task(tools, totals)
        except TraceWriteError as exc:
            outcome = self._trace_failed(exc)
        except Exception as exc:  # setup failed (the disk, or a bug): still finish the files
            self._log_bootstrap("session setup failed:\n" + traceback.format_exc())
            outcome = _Outcome("failed", f"error: session setup failed: {exc}", "runtime_error")
            write_result(self.paths, outcome.result)
        finally:
            tools.close()
            self.driver.close()
        self._end(outcome, totals, started)
        self.close_runtime()
        return SessionResult(self.session_id, outcome.exit_status, outcome.result, self.paths,
                             self.record_path)

    def _emit(self, cls: type[ev.E], **values: Any) -> ev.E:
        return self._stream.emit(cls, **values)

    def _start(self, tools: ToolTable) -> None:
        inference = self.inference
        for warning in self.capsule.warnings:
            self._emit(ev.Warning, code=warning.code or "W-MANIFEST", text=str(warning))
            self._log_bootstrap(f"warning: {warning}")
        if self._home_warning:
            self._warn("W-SEC-028", self._home_warning)
            self._log_bootstrap(f"warning: {self._home_warning} [W-SEC-028]")
        if self._write_task_file:
            (self.paths.accessible / "task.md").write_text(self.task_text, encoding="utf-8")
        manifest_copy = self.paths.accessible / "murmur.yaml"
        if not manifest_copy.exists():
            write_manifest_copy(self.capsule, manifest_copy)
        self.system = system_block(self.capsule)
        self.tool_payload = [spec.payload() for spec in tools.specs()]
        self._log_bootstrap("tool inventory " + compact_json(self.tool_payload))
        self.head = {
            "model": inference.model,
            "max_tokens": inference.max_tokens,
            "system": self.system,
            "tools": self.tool_payload,
            "params": dict(inference.params),
            "prompt_cache_key": f"{self.capsule.name}:{self.capsule.version}:"
                                f"{self.context_id}",
        }
        self.counter = tokens.PayloadCounter(self.head)
        self.system_sha = _sha(self.system)
        self.tools_sha = _sha(compact_json(self.tool_payload))
        kinds = ("shell",) if self.capsule.capabilities.shell_allow else ()
        self._session_started = True
        self._emit(
            ev.SessionStarted,
            capsule_name=self.capsule.name, capsule_version=self.capsule.version,
            model=inference.model, workdir=str(self.paths.accessible),
            trace_path=str(self.paths.trace), context_id=self.context_id,
            record_path=str(self.record_path) if self.record_path else None,
            max_turns=inference.max_turns, tools=tuple(s["name"] for s in self.tool_payload),
            max_session_tokens=inference.max_session_tokens,
            capabilities=kinds + (("network",) if self.capsule.capabilities.network_allow
                                  else ()),
            system_prompt_source="manifest" if inference.system_prompt else "none",
            system_prompt_sha256=_sha(inference.system_prompt) if inference.system_prompt
            else None,
            credential_source="none", context_max_tokens=self.capsule.context.max_tokens,
        )
        self.hooks.session_start(kinds)

    def _end(self, outcome: _Outcome, totals: _Totals, started: float) -> None:
        if not self._session_started:
            self.hooks.close()
            self._close_files()
            return
        duration_ms = int((time.monotonic() - started) * 1000)
        self.hooks.session_end(
            total_turns=totals.turns, total_input_tokens=totals.input_tokens,
            total_output_tokens=totals.output_tokens, total_tool_calls=totals.tool_calls,
            total_shell_calls=totals.shell_calls, duration_ms=duration_ms,
            exit_status=outcome.exit_status)
        self.hooks.close()
        try:
            self._session_end(outcome.exit_status, duration_ms)
        except TraceWriteError as exc:
            self._trace_failed(exc)
        self._close_files()

    def _session_end(self, exit_status: str, duration_ms: int) -> None:
        """The SessionEnded event (trace `session_end`), once."""
        with self._terminal:
            if self._session_ended:
                return
            self._session_ended = True
            totals = self._totals
            self._emit(
                ev.SessionEnded, exit_status=exit_status, duration_ms=duration_ms,
                total_turns=totals.turns, total_input_tokens=totals.input_tokens,
                total_output_tokens=totals.output_tokens, total_tool_calls=totals.tool_calls,
                total_shell_calls=totals.shell_calls,
            )

    def _task_end(self, task: _Task, outcome: _Outcome) -> bool:
        """The TaskEnded event (trace `task_end`) and the task's result file, once; False when
        the session was already finished from another thread."""
        with self._terminal:
            if self._task_ended or self._session_ended:
                return False
            self._task_ended = True
            threaded = self.capsule.lifecycle.conversation == "threaded"
            # a script capsule writes its own result; murmur-tui writes it for a failure, or
            # copies it where the session's result belongs when --workdir separates the two
            if self.script is None or outcome.exit_status != "ok" or \
                    self.paths.result != self.paths.accessible / "out" / "result.txt":
                write_result(self.paths, outcome.result, task.task_id if threaded else None)
            self._emit(
                ev.TaskEnded, task_id=task.task_id, exit_status=outcome.exit_status,
                result=outcome.result,
                duration_ms=int((time.monotonic() - task.started) * 1000), turns=task.turns,
                input_tokens=task.input_tokens, output_tokens=task.output_tokens,
                tool_calls=task.tool_calls, shell_calls=task.shell_calls,
                reopen_count=task.reopens,
            )
            return True

    def finish_now(self, reason: str = "canceled by the user") -> None:
        """End the session's files at once, from any thread (a second Ctrl-C): the running
        task ends `canceled`, the session ends, the record and trace take no more lines. What
        still runs on the session's own thread writes nothing after this."""
        self.cancel.set()
        # the last lines, nothing of the worker's between them (locks in the worker's order)
        with self._terminal, self._stream.exclusive():
            task = self._live
            if task is not None:
                with contextlib.suppress(TraceWriteError, OSError):
                    self._task_end(task, _Outcome("canceled", f"error: {reason}"))
            with contextlib.suppress(TraceWriteError, OSError):
                self._session_end("canceled", int((time.monotonic() - self._started) * 1000))
            self._stream.close()
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

    def _trace_failed(self, exc: TraceWriteError) -> _Outcome:
        """A failed trace write ends the session: the trace stops, the reason is kept."""
        if self._trace is not None:
            self._trace.close()
        reason = f"error: {exc} [E-RUN-007]"
        self._log_bootstrap(reason)
        self._emit(ev.Warning, code="E-RUN-007", text=reason.removeprefix("error: "))
        write_result(self.paths, reason)
        return _Outcome("failed", reason, "runtime_error")

    # -- the task ---------------------------------------------------------------------------
    def _run_task(self, tools: ToolTable, totals: _Totals) -> _Outcome:
        task = _Task(ids.task_id(), time.monotonic(), [])
        self._live, self._task_ended = task, False
        totals.tasks.append(task.task_id)
        threaded = self.capsule.lifecycle.conversation == "threaded"
        if threaded and self.record_path is not None:
            history = self._reloadable(self.reader.messages(self.record_path))
            if self._record is not None:
                self._record.mark_recorded([str(m["id"]) for m in history])
            for message in history:
                self._append(task, message, record=False)
        self._emit(ev.TaskStarted, task_id=task.task_id, context_id=self.context_id,
                   text=self.task_text, message_parts_bytes=len(self.task_text.encode()))
        self.current_task = task.task_id
        self._script_task = task
        if self.script is None:
            self._append(task, user_message(self.task_text))
        if self.hooks.bound("on-task-start"):
            prior = self.counter.count(task.payload[:-1], task.ids[:-1]) if len(task.ids) > 1 \
                else 0
            self.hooks.task_start(task.task_id, len(self.task_text.encode()), prior)
        while True:
            outcome = self._attempt(task, tools)
            if outcome.cause is not None:
                self._emit(ev.TaskFailed, task_id=task.task_id, cause=outcome.cause,
                           reason=outcome.result.removeprefix("error: "), turn=outcome.turn)
            commit = next(iter(self.hooks.task_end(task.task_id, outcome.exit_status)), None)
            if commit is None or self.script is not None:
                break
            reopened = self._reopen(task, commit[0].name, str(commit[1].payload))
            if reopened is not None:
                outcome = reopened
                break
        self.current_task = None
        self._task_end(task, outcome)
        self._live = None
        totals.turns += task.turns
        totals.input_tokens += task.input_tokens
        totals.output_tokens += task.output_tokens
        totals.tool_calls += task.tool_calls
        totals.shell_calls += task.shell_calls
        return outcome

    def _attempt(self, task: _Task, tools: ToolTable) -> _Outcome:
        """One attempt at the task (a reopen makes another); never raises but for the trace."""
        try:
            return self._turns(task, tools) if self.script is None else self._run_script()
        except _Canceled:
            return _Outcome("canceled", "error: canceled by the user")
        except _InputTimedOut as timed_out:
            return _Outcome("failed", f"error: input-timeout: {timed_out}", "input_timeout",
                            timed_out.turn)
        except TraceWriteError:
            raise
        except Exception as exc:  # a bug here must still leave complete files behind
            self._log_bootstrap("internal error:\n" + traceback.format_exc())
            return _Outcome("failed", f"error: internal error: {exc!r}", "runtime_error")

    def _reloadable(self, messages: list[Message]) -> list[Message]:
        """The record's messages a model can be sent again; any other is left out, and said so
        once (a record line that is a message in Murmur's sense but not a chat message)."""
        kept: list[Message] = []
        left_out: list[str] = []
        for number, message in enumerate(messages, start=1):
            problem = chat_shape_problem(message)
            if problem is None:
                kept.append(_role_first(message))
            else:
                left_out.append(f"message {number}: {problem}")
        if left_out:
            text = (f"{self.record_path}: {len(left_out)} of {len(messages)} messages are not "
                    f"chat messages and were left out of the context ({left_out[0]})")
            self._log_bootstrap(text)
            self._emit(ev.Warning, code="W-RECORD", text=text)
        return kept

    def _reopen(self, task: _Task, hook: str, reason: str) -> _Outcome | None:
        """A hook sent the task back (on-task-end `reopen-task`): go on with the reason as a new
        user message, within lifecycle.max_task_reopens and the task's max_turns."""
        budget = self.capsule.lifecycle.max_task_reopens
        remaining = self.inference.max_turns - task.turns
        if task.reopens >= budget or remaining <= 0:
            why = (f"lifecycle.max_task_reopens ({budget}) is used up" if task.reopens >= budget
                   else f"no turns are left of inference.max_turns ({self.inference.max_turns})")
            return _Outcome("reopen_budget_exhausted", f"error: a hook asked to reopen the task "
                            f"but {why}", "reopen_budget_exhausted")
        task.reopens += 1
        self._emit(ev.TaskReopened, task_id=task.task_id, hook_name=hook,
                   reason=reason, reopen_number=task.reopens, turns_remaining=remaining)
        self._append(task, user_message(reason))
        return None

    def _turns(self, task: _Task, tools: ToolTable) -> _Outcome:
        max_turns = self.inference.max_turns
        ceiling = self.inference.max_session_tokens
        for turn in range(task.turns, max_turns):
            if self.cancel.is_set():
                raise _Canceled()
            spent = task.input_tokens + task.output_tokens
            if ceiling is not None and spent >= ceiling:
                return _Outcome("spend_ceiling_reached", f"error: the session spent {spent} "
                                f"tokens; inference.max_session_tokens is {ceiling}")
            outcome = self._turn(task, tools, turn)
            if outcome is not None:
                return outcome
        return _Outcome("max_turns_reached", f"error: inference loop exceeded {max_turns} turns")

    def _turn(self, task: _Task, tools: ToolTable, turn: int) -> _Outcome | None:
        """One driver call and what follows; an outcome ends the task, None goes on."""
        message_ids = list(task.ids)
        payload_messages = list(task.payload)
        input_tokens = self.counter.count(payload_messages, message_ids)
        task.turns += 1
        task.input_tokens += input_tokens
        self.current_turn = turn
        self._emit(ev.TurnStarted, task_id=task.task_id, turn=turn,
                   max_turns=self.inference.max_turns, input_tokens=input_tokens)
        request = continuation.request(self.head, payload_messages, self.context_id,
                                       self.continuation)
        completed = _TurnReport(self, task, turn, input_tokens, message_ids)
        deltas = _DeltaSink(self, task.task_id, turn)
        try:
            reply = self.driver.complete(request, deltas, self.cancel)
        except InferenceCanceled:
            raise _Canceled() from None
        except DriverError as exc:
            completed.failed(str(exc))
            return _Outcome("failed", f"error: {exc}", exc.cause, turn)
        finally:
            deltas.flush()
        if self.cancel.is_set():
            raise _Canceled()
        if reply.status != "passed":
            text = _error_text(reply.error_text)
            completed.failed(text)
            self.continuation = None
            return _Outcome("failed", f"error: {text}", "driver_error", turn)
        self.continuation = continuation.after_reply(reply, self.context_id,
                                                     len(payload_messages))
        raw = reply.data or ""
        output_tokens = tokens.count(raw)
        task.output_tokens += output_tokens
        try:
            response = parse_response(raw)
        except MalformedResponse as exc:
            completed.failed(str(exc), output_tokens, code="malformed_response")
            return _Outcome("failed", f"error: {exc}", "malformed_response", turn)
        decision = completed.done(response, output_tokens, _sha(raw))
        if self.hooks.bound("on-inference"):
            calls = response.tool_calls
            self.hooks.inference(turn, input_tokens, output_tokens, decision,
                                 str(calls[0]["name"]) if calls else None, payload_messages,
                                 message_ids, response.content, self.tool_payload)
        if response.stop_reason != "error":
            failed = compaction.check(self, task, turn, input_tokens + output_tokens)
            if failed is not None:
                return failed
        return self._after_response(task, tools, turn, response)

    def _after_response(self, task: _Task, tools: ToolTable, turn: int,
                        response: ModelResponse) -> _Outcome | None:
        stop = response.stop_reason
        if stop == "error":
            text = response.error or "the driver reported an error"
            return _Outcome("failed", f"error: {text}", "driver_error", turn)
        if stop == "tool_call":
            calls = response.tool_calls
            if not calls:
                return _Outcome("failed", "error: stop_reason tool_call without a tool_call "
                                "block", "malformed_response", turn)
            results = [self._call_tool(task, tools, turn, block) for block in calls]
            self._append(task, assistant_message(response.content))
            for message in results:
                self._append(task, message)
            return None
        if stop in ("end_turn", "max_tokens"):
            self._append(task, assistant_message(response.content))
            if stop == "max_tokens":
                self._emit(ev.Warning, code="W-RUN-001", text=f"turn {turn + 1} stopped at "
                           f"inference.max_tokens ({self.inference.max_tokens}); the result "
                           "is a fragment")
            return _Outcome("ok", response.text)
        return _Outcome("failed", f"error: unsupported stop_reason '{stop}'",
                        "malformed_response", turn)

    # -- script capsules -------------------------------------------------------------------
    def _run_script(self) -> _Outcome:
        assert self.script is not None
        if self._write_task_file is False and not (self.paths.accessible / "task.md").exists():
            (self.paths.accessible / "task.md").write_text(self.task_text, encoding="utf-8")
        try:
            self.script.run(self.host, self.cancel)
        except GuestFailure as failure:
            if self.cancel.is_set():
                raise _Canceled() from None
            return _Outcome("failed", f"error: {failure.reason}", "runtime_error")
        except InputTimeout as exc:
            raise _InputTimedOut(str(exc), 0) from None
        written = self.paths.accessible / "out" / "result.txt"
        try:
            text = written.read_text(encoding="utf-8")
        except OSError:
            text = ""
        return _Outcome("ok", text)

    def invoke_from_script(self, name: str, data: str | None) -> Any:
        """`tool-registry.invoke` from a script capsule: a declared WebAssembly tool only."""
        if name not in self.tools.wasm:
            return f"tool '{name}' is not declared in manifest allowlist"
        task = self._script_task
        self._invocations += 1
        try:
            parsed = json.loads(data) if data else {}
        except ValueError:
            parsed = None
        call = ToolCall(f"inv_{self._invocations}", name,
                        parsed if isinstance(parsed, dict) else {"data": data}, 0,
                        task.task_id, raw=data)
        outcome, _ = self._dispatch(task, self.tools, call)
        return record(status=outcome.status if outcome.status in ("passed", "failed", "error")
                      else "error", summary=None, data=outcome.text, data_path=None,
                      truncated=outcome.truncated, metadata=list(outcome.metadata))

    # -- tools ------------------------------------------------------------------------------
    def _call_tool(self, task: _Task, tools: ToolTable, turn: int,
                   block: dict[str, Any]) -> Message:
        if self.cancel.is_set():
            raise _Canceled()
        raw_input = block.get("input")
        call = ToolCall(str(block["id"]), str(block["name"]),
                        raw_input if isinstance(raw_input, dict) else {}, turn, task.task_id)
        outcome, text = self._dispatch(task, tools, call)
        return tool_message(call.call_id, not outcome.ok, text,
                            f"tool:{call.name}" if outcome.fenced else None, outcome.images)

    def _dispatch(self, task: _Task, tools: ToolTable, call: ToolCall
                  ) -> tuple[ToolOutcome, str]:
        """Run one call in §5.3 order, with its events; returns the outcome and the text the
        model reads (fenced unless a skill or a refusal)."""
        handler = tools.resolve(call.name)
        kind = handler.spec.kind if handler else "unknown"
        turn = call.turn
        self._emit(ev.ToolCallStarted, task_id=task.task_id, turn=turn, call_id=call.call_id,
                   tool_name=call.name, kind=kind, input=call.input)
        if handler is None:
            outcome = refusal(f"error: tool '{call.name}' is not declared in manifest "
                              "allowlist", kind)
        else:
            try:
                outcome = handler.call(call, self.cancel)
            except InputTimeout as exc:
                raise _InputTimedOut(f"{call.name} asked and {exc}", turn) from None
            finally:
                self.host.tool_stream.flush()
        text = outcome.message_text(call.name)
        if kind != "skill":
            task.tool_calls += 1
        self._emit(
            ev.ToolCallFinished, task_id=task.task_id, turn=turn, call_id=call.call_id,
            tool_name=call.name, kind=kind, status="ok" if outcome.ok else "error",
            duration_ms=outcome.duration_ms, input=call.input,
            input_bytes=len(call.data.encode()), output=text,
            output_bytes=len(text.encode()), state_effect=outcome.meta("state_effect"),
            resource_id=outcome.meta("resource_id"), attachments=outcome.attachments,
            truncated=outcome.truncated or (outcome.shell is not None and outcome.shell.truncated),
        )
        if outcome.shell is not None:
            task.shell_calls += 1
            self._emit_shell(task, turn, call, outcome)
        self.hooks.tool_call(turn, call.name, len(call.data.encode()), len(text.encode()),
                             outcome.duration_ms, "ok" if outcome.ok else "error")
        if outcome.shell is not None:
            self.hooks.shell(turn, outcome.shell)
        return outcome, text

    def _emit_shell(self, task: _Task, turn: int, call: ToolCall, outcome: ToolOutcome) -> None:
        shell = outcome.shell
        assert shell is not None
        self._emit(
            ev.ShellExecuted, task_id=task.task_id, turn=turn, call_id=call.call_id,
            binary=shell.binary, command=shell.command, exit_code=shell.exit_code,
            stdout=shell.stdout, stderr=shell.stderr, stdout_bytes=shell.stdout_bytes,
            stderr_bytes=shell.stderr_bytes, duration_ms=shell.duration_ms,
            truncated=shell.truncated, full_output_path=shell.full_output_path,
        )

    # -- context and files ------------------------------------------------------------------
    def _append(self, task: _Task, message: Message, record: bool = True) -> None:
        """Add a message to the context (and, unless reloaded from it, to the record)."""
        task.messages.append(message)
        task.ids.append(str(message["id"]))
        payload = for_payload(message)
        if message.get("role") == "tool" and len(payload["content"]) > 1:
            payload["content"] = [self.attachments.payload_block(block)
                                  if block.get("type") == "image" else block
                                  for block in payload["content"]]
        task.payload.append(payload)
        if record and self._record is not None:
            self._record.append(message)

    def message_shas(self, task: _Task) -> tuple[str, ...]:
        """sha256 of each payload message (trace `message_shas`, written under capture
        content), computed once per message."""
        if self.capsule.trace.capture != "content":
            return ()
        shas = []
        for message_id, message in zip(task.ids, task.payload, strict=True):
            sha = self._shas.get(message_id)
            if sha is None:
                sha = self._shas[message_id] = _sha(compact_json(message))
            shas.append(sha)
        return tuple(shas)

    def _warn_record(self, text: str) -> None:
        self._log_bootstrap(text)
        self._emit(ev.Warning, code="W-RECORD", text=text)

    def _log_bootstrap(self, line: str) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        append_private(self.paths.bootstrap_log, redact(f"{stamp} {line}\n"))


class _DeltaSink:
    """A driver's stream, turned into TextDelta / ThinkingDelta events. A key split across two
    chunks is still redacted: the tail of a chunk that could begin one waits for the next
    chunk (or `flush`, when the call ends)."""

    def __init__(self, session: Session, task_id: str, turn: int) -> None:
        self._session = session
        self._task_id = task_id
        self._turn = turn
        self._text = StreamRedactor()
        self._thinking = StreamRedactor()

    def text(self, chunk: str) -> None:
        self._send(ev.TextDelta, self._text.feed(chunk))

    def thinking(self, chunk: str) -> None:
        self._send(ev.ThinkingDelta, self._thinking.feed(chunk))

    def flush(self) -> None:
        self._send(ev.ThinkingDelta, self._thinking.flush())
        self._send(ev.TextDelta, self._text.flush())

    def _send(self, kind: type[ev.TextDelta] | type[ev.ThinkingDelta], text: str) -> None:
        if text:
            self._session._emit(kind, task_id=self._task_id, turn=self._turn, text=text)


class _TurnReport:
    """Emits the TurnCompleted (trace `inference`) line for one driver call."""

    def __init__(self, session: Session, task: _Task, turn: int, input_tokens: int,
                 message_ids: list[str]) -> None:
        self._session = session
        self._task = task
        self._turn = turn
        self._input_tokens = input_tokens
        self._message_ids = message_ids

    def _emit(self, **values: Any) -> None:
        session = self._session
        session._emit(
            ev.TurnCompleted, task_id=self._task.task_id, turn=self._turn,
            input_tokens=self._input_tokens, model=session.inference.model,
            message_ids=tuple(self._message_ids), system_sha=session.system_sha,
            tools_sha=session.tools_sha,
            message_shas=session.message_shas(self._task), **values,
        )

    def failed(self, error: str, output_tokens: int | None = None,
               code: str = "driver_error") -> None:
        self._emit(output_tokens=output_tokens, decision="error", stop_reason="error",
                   tool_name=None, error=error, error_code=code)

    def done(self, response: ModelResponse, output_tokens: int, response_sha: str) -> str:
        calls = response.tool_calls
        decision = {"tool_call": "tool_call", "end_turn": "end_turn",
                    "max_tokens": "text"}.get(response.stop_reason, "error")
        self._emit(
            output_tokens=output_tokens, decision=decision, stop_reason=response.stop_reason,
            tool_name=str(calls[0]["name"]) if calls else None,
            content=tuple(response.content), usage=response.usage,
            error=response.error if response.stop_reason == "error" else None,
            response_sha=response_sha,
        )
        return decision


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _role_first(message: Message) -> Message:
    """A reloaded message with `role` first (payload pieces are counted from `role`)."""
    if next(iter(message)) == "role":
        if "id" not in message:
            message["id"] = ids.message_id()
        return message
    ordered: Message = {"role": message["role"]}
    ordered.update((k, v) for k, v in message.items() if k != "role")
    ordered.setdefault("id", ids.message_id())
    return ordered


def _error_text(data: str) -> str:
    """A failed driver call's text: the response's `error` when it is a response object."""
    try:
        response = parse_response(data)
    except MalformedResponse:
        return data
    return response.error or data
