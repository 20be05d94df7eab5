"""One task (spec §5.1, §5.4): the context reloaded from the record when threaded, the task's
first lines, attempts — turns, or a script capsule's run — with on-task-end's reopens between
them, and the task's end."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui.core import ids
from tui.core.chat import user_message
from tui.core.errors import GuestFailure, StopOnCancel, StopOnInputTimeout, TraceWriteError
from tui.core.events import vocabulary as ev
from tui.core.events.kinds import TaskOrigin, TaskSource, TaskVia
from tui.core.frozen import Frozen
from tui.core.fs.task_file import TASK_FILE, write_task
from tui.core.fs.workdir import SessionPaths
from tui.core.loop import compaction, rebuild
from tui.core.loop.context import Context
from tui.core.loop.dispatch import Dispatcher
from tui.core.loop.ending import Ending
from tui.core.loop.hook_points import HookPoints
from tui.core.loop.inbox import TaskCancel
from tui.core.loop.journal import OpenTurn
from tui.core.loop.report import Report
from tui.core.loop.state import Canceled, Failed, Finished, Reopen, TaskOutcome, TaskState
from tui.core.loop.turn import Turns
from tui.core.manifest.model import Capsule, Compaction
from tui.core.record.reader import RecordReader
from tui.core.record.window import RecordWindow
from tui.core.record.writer import RecordWriter

if TYPE_CHECKING:
    from tui.core.wasm.calls import HostServices
    from tui.core.wasm.script import ScriptCapsule


@dataclass(frozen=True, repr=False, eq=False)
class TaskDeps(Frozen):
    """What a task runs with: built once per session, the same for every task but for the
    context, which a stateless lifecycle makes fresh for each (`fresh`)."""

    capsule: Capsule
    context_id: str  # the session's
    context: Context
    report: Report
    hooks: HookPoints
    dispatch: Dispatcher
    ending: Ending
    cancel: TaskCancel  # the running task's (the session's cancel sets it too)
    paths: SessionPaths
    reader: RecordReader
    record_path: Path | None
    record: RecordWriter | None
    turns: Turns | None  # None: a script capsule runs instead
    script: ScriptCapsule | None
    host: HostServices  # what a script capsule's run reaches (tool-registry, artifacts)

    def fresh(self) -> TaskDeps:
        """The same, with an empty context (`conversation: stateless`: each task alone)."""
        context = self.context.fresh()
        turns = dataclasses.replace(self.turns, context=context) \
            if self.turns is not None else None
        return dataclasses.replace(self, context=context, turns=turns)


# The ids a session's first task runs under when its sender named them (a door's task id and
# context), how it came, who sent it (`peer`: a task from another capsule) and the formation
# member whose call-member sent it.
FirstIds = tuple[str | None, str | None, TaskVia | None, TaskOrigin, str | None]
NO_FIRST_IDS: FirstIds = (None, None, None, "user", None)


@dataclass(frozen=True, repr=False, eq=False)
class TaskInput(Frozen):
    """What a task was asked, and how it came."""

    text: str
    source: TaskSource = "task_md"  # trace task_start `source`
    origin: TaskOrigin = "user"
    task_id: str | None = None  # the id the task runs under (a door's), else one is minted
    context_id: str | None = None  # the context its sender named (TaskStarted, the trace)
    task_file_written: bool = False  # task.md holds the text already
    first: bool = True  # the session's first task (a threaded one reloads the record)
    resume: str | None = None  # `--resume` mode (full | compact): the record always reloads
    rebuild: OpenTurn | None = None  # the turn the resumed session died in (rebuild.py)
    via: TaskVia | None = None  # typed on the supervisor's prompt: at once, or queued
    caller_member: str | None = None  # the formation member whose call-member sent it


def run(deps: TaskDeps, asked: TaskInput) -> TaskOutcome:
    task = TaskState(asked.task_id or ids.task_id(), time.monotonic())
    deps.cancel.begin(task.task_id)
    try:
        return _run(deps, asked, task)
    finally:
        deps.cancel.end()


def _run(deps: TaskDeps, asked: TaskInput, task: TaskState) -> TaskOutcome:
    deps.ending.task_started(task)
    context, report, hooks = deps.context, deps.report, deps.hooks
    threaded = deps.capsule.lifecycle.conversation == "threaded"
    if asked.first and (threaded or asked.resume) and deps.record_path is not None:
        writer = deps.record
        context.load(RecordWindow(deps.record_path, deps.reader,
                                  lambda text: report.warn_and_log("W-RECORD", text),
                                  writer.mark_recorded if writer is not None else None))
        if asked.resume == "compact" and context.ids:
            _compact_on_resume(deps, task.task_id)
    text = asked.text
    context_id = asked.context_id or deps.context_id
    shown = text or (_asked_last(context) if asked.rebuild is not None else "")
    report.emit(ev.TaskStarted(task_id=task.task_id, context_id=context_id, text=shown,
                               source=asked.source, origin=asked.origin,
                               message_parts_bytes=len(text.encode()), via=asked.via,
                               caller_member=asked.caller_member))
    report.position.task_id = task.task_id
    report.position.phase = "turn"
    deps.dispatch.script_task = task
    early: TaskOutcome | None = None
    turn = asked.rebuild
    if turn is not None and deps.turns is not None and rebuild.needed(turn, context):
        early = _guarded(deps, lambda: _rebuilt(deps, task, turn))
    if deps.script is None and early is None and (text or turn is None):
        context.append(user_message(text))  # no text: the task goes on from the rebuilt turn
    if hooks.bound("on-task-start"):
        prior = context.count(len(context.ids) - 1) if len(context.ids) > 1 else 0
        window = deps.capsule.context.max_tokens or 0
        hooks.task_start(task.task_id, context_id, len(text.encode()),
                         int(window * deps.capsule.context.seed_budget), window, prior,
                         asked.source)
    while True:
        outcome, early = early if early is not None else _attempt(deps, asked, task), None
        if outcome.cause is not None:
            report.emit(ev.TaskFailed(task_id=task.task_id, cause=outcome.cause,
                                      reason=outcome.result.removeprefix("error: "),
                                      turn=outcome.turn))
        if isinstance(outcome, Canceled):
            waiting = deps.turns.waiting if deps.turns is not None else None
            stopped = waiting.canceled(task.task_id) if waiting is not None else ()
            report.emit(ev.TaskCanceled(task_id=task.task_id, turn=report.position.turn,
                                        phase=report.position.phase, delegation_ids=stopped))
            if waiting is not None:
                waiting.settled(stopped)  # their `delegation` lines come before `task_end`
        reopen = hooks.task_end(task.task_id, outcome.exit_status)
        if reopen is not None and isinstance(outcome, Canceled):
            # the person stopped the task: a hook may see it end, not start it again
            report.log(f"{reopen.hook} asked to reopen task {task.task_id}; it was canceled, "
                       "so it stays ended")
            break
        if reopen is None or deps.script is not None:
            break
        refused = _reopen(deps, task, reopen)
        if refused is not None:
            outcome = refused
            break
    report.position.task_id = None
    if deps.turns is not None and deps.turns.waiting is not None:
        deps.turns.waiting.ended(task.task_id)  # its call-member calls still out: abandoned
    deps.ending.task(task, outcome)
    deps.ending.task_done(task)
    return outcome


def _asked_last(context: Context) -> str:
    """The text of the context's last user message: what a task that goes on after a restart
    was asked."""
    for message in reversed(context.messages):
        if message.get("role") == "user":
            content = message.get("content")
            return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict)
                             and b.get("type") == "text") if isinstance(content, list) else ""
    return ""


def _compact_on_resume(deps: TaskDeps, task_id: str) -> None:
    """`--resume-mode compact`: the reloaded conversation goes through the capsule's
    on-compaction hook before the task; its replacement becomes the context (a hook that
    declines or fails leaves the whole conversation, and says so)."""
    context = deps.context
    tokens = context.count()
    window = deps.capsule.context.max_tokens
    ratio = tokens / window if window else 1.0
    inference = deps.turns.inference if deps.turns is not None else None
    settings = inference.compaction if inference is not None else Compaction()
    model = inference.model if inference is not None else ""
    decision = compaction.decide(deps.hooks, context.messages, settings, model, tokens, ratio)
    if decision.kind != "committed":
        deps.report.warn_and_log("W-RESUME", f"--resume-mode compact: the conversation was "
                                  f"kept whole ({decision.reason})")
        return
    context.replace(decision.messages)
    deps.report.emit(ev.Compacted(task_id=task_id, turn=0, tokens_before=tokens,
                                   tokens_after=context.count()))


def _attempt(deps: TaskDeps, asked: TaskInput, task: TaskState) -> TaskOutcome:
    """One attempt at the task (a reopen makes another); never raises but for the trace."""
    outcome = _guarded(deps, lambda: deps.turns.run(task) if deps.turns is not None
                       else _run_script(deps, asked))
    assert outcome is not None
    return outcome


def _rebuilt(deps: TaskDeps, task: TaskState, turn: OpenTurn) -> None:
    assert deps.turns is not None
    rebuild.rebuild(turn, task, deps.context, deps.dispatch, deps.report)


def _guarded(deps: TaskDeps, step: Callable[[], TaskOutcome | None]) -> TaskOutcome | None:
    """`step`'s outcome, or the task's end when it stopped (canceled, a question timed out, a
    bug); raises only what ends the trace."""
    try:
        return step()
    except StopOnCancel:
        return Canceled()
    except StopOnInputTimeout as timed_out:
        return Failed(f"error: input-timeout: {timed_out}", "input_timeout", timed_out.turn)
    except TraceWriteError:
        raise
    except Exception as exc:  # a bug here must still leave complete files behind
        import traceback  # a failing task only

        deps.report.log("internal error:\n" + traceback.format_exc())
        return Failed(f"error: internal error: {exc!r}", "runtime_error")


def _reopen(deps: TaskDeps, task: TaskState, reopen: Reopen) -> Failed | None:
    """A hook sent the task back (on-task-end `reopen-task`): go on with the reason as a new
    user message, within lifecycle.max_task_reopens and the task's max_turns."""
    budget = deps.capsule.lifecycle.max_task_reopens
    max_turns = deps.turns.inference.max_turns if deps.turns is not None else 0
    remaining = max_turns - task.usage.turns
    if task.reopens >= budget or remaining <= 0:
        why = (f"lifecycle.max_task_reopens ({budget}) is used up" if task.reopens >= budget
               else f"no turns are left of inference.max_turns ({max_turns})")
        return Failed(f"error: a hook asked to reopen the task but {why}",
                      "reopen_budget_exhausted", exit_status="reopen_budget_exhausted")
    task.reopens += 1
    deps.report.emit(ev.TaskReopened(task_id=task.task_id, hook_name=reopen.hook,
                                      reason=reopen.reason, reopen_number=task.reopens,
                                      turns_remaining=remaining))
    deps.context.append(user_message(reopen.reason))
    return None


def _run_script(deps: TaskDeps, asked: TaskInput) -> TaskOutcome:
    """A script capsule's `run` (its own loop, calling tools through the host)."""
    script = deps.script
    assert script is not None
    accessible = deps.paths.accessible
    if not asked.task_file_written and not os.path.lexists(accessible / TASK_FILE):
        write_task(accessible, asked.text)
    try:
        script.run(deps.host, deps.cancel)
    except GuestFailure as failure:
        if deps.cancel.is_set():
            raise StopOnCancel() from None
        return Failed(f"error: {failure.reason}", "runtime_error")
    except StopOnInputTimeout as exc:
        if exc.turn is not None:  # a tool's question, its turn already known
            raise
        raise StopOnInputTimeout(str(exc), 0) from None
    try:
        text = (accessible / "out" / "result.txt").read_text(encoding="utf-8")
    except OSError:
        text = ""
    return Finished(text)
