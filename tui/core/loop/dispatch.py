"""Tool calls (spec §5.3): one call in Murmur's order with its events and hook points, a model's
`tool_call` block turned into a tool message, and `tool-registry.invoke` from a script capsule.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any, Literal

from tui.core.cancel import CancelToken
from tui.core.chat import Message, ToolCallBlock, text_of, tool_message
from tui.core.errors import StopOnCancel, StopOnInputTimeout
from tui.core.events import vocabulary as ev
from tui.core.events.kinds import ToolKind
from tui.core.loop.hook_points import HookPoints
from tui.core.loop.journal import Interrupted, JournaledQuestions
from tui.core.loop.report import DeltaSink, Report
from tui.core.loop.state import TaskState
from tui.core.tools.contracts import FAILURE_KEY, MAX_PAYLOAD_BYTES, failure_kind, retry_decision
from tui.core.tools.table import ToolCall, ToolHandler, ToolOutcome, ToolTable, refusal
from tui.core.wasm.values import record

if TYPE_CHECKING:  # `launch --approve` only
    from tui.core.tools.approvals import Approvals


class Dispatcher:
    def __init__(self, tools: ToolTable, report: Report, hooks: HookPoints, cancel: CancelToken,
                 tool_stream: DeltaSink, approvals: Approvals | None = None,
                 questions: JournaledQuestions | None = None) -> None:
        self.tools = tools
        self.approvals = approvals  # `launch --approve`: the gate before a call runs
        self._report = report
        self._hooks = hooks
        self._cancel = cancel
        self._tool_stream = tool_stream
        self._invocations = 0
        self.script_task: TaskState | None = None  # the task a script capsule's invokes count in
        self.questions = questions  # the journal (docs/tools.md)

    def run_turn(self, task: TaskState, turn: int, message: Message,
                 calls: list[ToolCallBlock], done: dict[str, Message] | None = None,
                 restored_from: str = "") -> list[Message]:
        """A turn's calls in order, as the tool messages the model reads next. The turn is
        journaled before its first call runs and each result as its call finishes; a call in
        `done` (a rebuilt turn's finished ones, from session `restored_from`) is not run
        again: its result is journaled anew and reported restored. A turn that ends early
        (canceled, a question timed out) is journaled dropped."""
        questions = self.questions
        if questions is not None:
            questions.turn(task.task_id, turn, message)
        results = []
        try:
            for block in calls:
                earlier = (done or {}).get(block["id"])
                if earlier is not None:
                    self._restored(task, turn, block, earlier, restored_from)
                result = earlier if earlier is not None else self.call_block(task, turn, block)
                if questions is not None:
                    questions.finished(block["id"], block["name"], result)
                results.append(result)
        except BaseException as exc:
            if questions is not None and not isinstance(exc, KeyboardInterrupt):
                questions.dropped(str(message["id"]), type(exc).__name__)
            raise
        return results

    def _restored(self, task: TaskState, turn: int, block: ToolCallBlock, result: Message,
                  session_id: str) -> None:
        text = text_of(result.get("content"))
        self._report.emit(ev.ToolCallRestored(
            task_id=task.task_id, turn=turn, call_id=block["id"],
            tool_name=block["name"], status="error" if result.get("is_error") else "ok",
            output_bytes=len(text.encode()), from_session=session_id))

    def call_block(self, task: TaskState, turn: int, block: ToolCallBlock) -> Message:
        """A model's `tool_call` block run, as the tool message the model reads next."""
        if self._cancel.is_set():
            raise StopOnCancel()
        raw_input = block.get("input")
        call = ToolCall(block["id"], block["name"],
                        raw_input if isinstance(raw_input, dict) else {}, turn, task.task_id)
        outcome, text = self.call(task, call)
        return tool_message(call.call_id, not outcome.ok, text,
                            f"tool:{call.name}" if outcome.fenced else None, outcome.images)

    def invoke_from_script(self, name: str, data: str | None) -> Any:
        """`tool-registry.invoke` from a script capsule: a declared WebAssembly tool only."""
        if name not in self.tools.wasm:
            return f"tool '{name}' is not declared in manifest allowlist"
        task = self.script_task
        assert task is not None
        self._invocations += 1
        try:
            parsed = json.loads(data) if data else {}
        except ValueError:
            parsed = None
        call = ToolCall(f"inv_{self._invocations}", name,
                        parsed if isinstance(parsed, dict) else {"data": data}, 0,
                        task.task_id, raw=data)
        outcome, _ = self.call(task, call)
        status = outcome.status if outcome.status in ("passed", "failed", "error") else "error"
        if outcome.kind == "wasm" and not outcome.refused:  # the tool's own result, as it was
            return record(status=status, summary=outcome.summary, data=outcome.data,
                          data_path=outcome.data_path, truncated=outcome.truncated,
                          metadata=list(outcome.metadata))
        return record(status=status, summary=None, data=outcome.text, data_path=None,
                      truncated=outcome.truncated, metadata=list(outcome.metadata))

    def call(self, task: TaskState, call: ToolCall) -> tuple[ToolOutcome, str]:
        """Run one call in §5.3 order, with its events; returns the outcome and the text the
        model reads (fenced unless a skill or a refusal)."""
        handler = self.tools.resolve(call.name)
        kind = handler.spec.kind if handler else "unknown"
        turn = call.turn
        report = self._report
        report.emit(ev.ToolCallStarted(task_id=task.task_id, turn=turn, call_id=call.call_id,
                                       tool_name=call.name, kind=kind, input=call.input))
        if handler is None:
            outcome = refusal(f"error: tool '{call.name}' is not declared in manifest "
                              "allowlist", kind)
        elif (denied := self._gate(task, call, kind)) is not None:
            return denied
        elif (size := len(call.data.encode())) > MAX_PAYLOAD_BYTES:
            outcome = refusal(f"error: the call's input is {size} bytes; the limit is "
                              f"{MAX_PAYLOAD_BYTES} (1 MiB), so {call.name} was not run", kind)
        else:
            carried = self.questions.carries(call.call_id, call.name) if self.questions else None
            if carried is not None and not self._replayable(call.name):
                outcome = self._interrupted(call, carried, kind)
            else:
                outcome = self._run(task, call, handler, carried)
                if (note := self._retries(task, call, outcome)) is not None:
                    outcome = _noted(self._run(task, call, handler, carried, again=True),
                                     note)
        text = outcome.message_text(call.name)
        status: Literal["ok", "error"] = "ok" if outcome.ok else "error"
        input_bytes, output_bytes = len(call.data.encode()), len(text.encode())
        if kind != "skill":
            task.spend(tool_calls=1)
        report.emit(ev.ToolCallFinished(
            task_id=task.task_id, turn=turn, call_id=call.call_id, tool_name=call.name,
            kind=kind, status=status, duration_ms=outcome.duration_ms, input=call.input,
            input_bytes=input_bytes, output=text, output_bytes=output_bytes,
            state_effect=outcome.meta("state_effect"), resource_id=outcome.meta("resource_id"),
            attachments=outcome.attachments,
            truncated=outcome.truncated or (outcome.shell is not None and outcome.shell.truncated),
        ))
        shell = outcome.shell
        if shell is None and outcome.meta("work_id"):  # moved to the background: Murmur counts
            task.spend(shell_calls=1)                   # it at shell_detached
        if shell is not None:
            task.spend(shell_calls=1)
            report.emit(ev.ShellExecuted(
                task_id=task.task_id, turn=turn, call_id=call.call_id, binary=shell.binary,
                command=shell.command, exit_code=shell.exit_code, stdout=shell.stdout,
                stderr=shell.stderr, stdout_bytes=shell.stdout_bytes,
                stderr_bytes=shell.stderr_bytes, duration_ms=shell.duration_ms,
                truncated=shell.truncated, full_output_path=shell.full_output_path))
        self._hooks.tool_call(turn, call.name, input_bytes, output_bytes, outcome.duration_ms,
                              status)
        if shell is not None:
            self._hooks.shell(turn, shell)
        return outcome, text

    def _run(self, task: TaskState, call: ToolCall, handler: ToolHandler,
             carried: Interrupted | None = None, again: bool = False) -> ToolOutcome:
        """The call run once (`again`: its retry, whose questions go on numbering after the
        first attempt's and take no journaled answer)."""
        feed = self._report.call_feed(task.task_id, call.turn, call.call_id)
        if self.questions is not None:
            self.questions.begin(task.task_id, call.call_id, call.name, carried, again)
        try:
            return handler.call(call, self._cancel, feed)
        except StopOnInputTimeout as exc:
            if exc.turn is not None:
                raise
            raise StopOnInputTimeout(f"{call.name} asked and {exc}", call.turn) from None
        finally:
            if self.questions is not None:
                self.questions.end()
            feed.close()  # the last lines go out before ToolCallFinished
            self._tool_stream.flush()

    def _replayable(self, name: str) -> bool:
        contract = self.tools.contracts.get(name)
        return contract is not None and contract.replay in ("safe", "idempotent")

    def _interrupted(self, call: ToolCall, carried: Interrupted, kind: ToolKind
                     ) -> ToolOutcome:
        """The call the resumed session died in, not run again (its replay is not safe): the
        model reads that its outcome is uncertain and what it had asked."""
        contract = self.tools.contracts.get(call.name)
        replay = contract.replay if contract is not None else "unknown"
        self._report.warn("W-TOOL-INTERRUPTED", f"{call.name} ({call.call_id}) was running when "
                          f"session {carried.session_id} stopped; its replay is {replay}, so it "
                          "was not run again")
        return refusal(f"error: {call.name} was interrupted when session {carried.session_id} "
                       f"stopped; its outcome is uncertain and it was not run again (its replay "
                       f"is {replay}). It had asked: {carried.summary()}", kind)

    def _retries(self, task: TaskState, call: ToolCall, outcome: ToolOutcome) -> str | None:
        """The retry rule (docs/tools.md): a trapped or timed-out call, or a failure the tool
        says is `definitive`, runs once more only when its replay is safe or idempotent and
        the failure is definitive; the transcript says why it did or did not. Returns None,
        or when the call is to run again, the note its result gets if the retry fails too."""
        stated = outcome.meta(FAILURE_KEY) if not outcome.ok else None
        if stated not in ("definitive", "uncertain"):
            stated = None  # any other value is no statement (docs/wit.md)
        contract = self.tools.contracts.get(call.name)
        if contract is None or self._cancel.is_set() or not (outcome.trapped or stated):
            return None
        kind = failure_kind(contract, outcome.trapped, stated)
        retry, why = retry_decision(contract, kind, stated is not None)
        self._report.warn("W-TOOL-RETRY", f"{call.name} ({call.call_id}) failed; {why}")
        if not retry:
            return None
        said = "the tool said its failure was" if stated else "its failure was"
        return (f"[{call.name} ran twice: the first attempt failed and was retried once ({said} "
                f"definitive, its replay is {contract.replay}); the retry failed too and is not "
                "run again — this is the second attempt's result]")

    def _gate(self, task: TaskState, call: ToolCall, kind: ToolKind
              ) -> tuple[ToolOutcome, str] | None:
        """Approvals: None when the call may run; else the denial, reported (Murmur's
        `call_denied`, no `tool_call` line) and handed to the model as an error result."""
        if self.approvals is None:
            return None
        request = self.approvals.request(kind, call.name, call.input, self._cancel,
                                         call.call_id)
        if request is None:
            return None
        decision = self.approvals.check(request)
        if decision.choice != "deny":
            return None
        reason = decision.reason.strip() or "no reason given"
        self._report.emit(ev.CallDenied(
            task_id=task.task_id, turn=call.turn, call_id=call.call_id, tool_name=call.name,
            kind=kind, event="on-shell" if kind == "shell" else "on-tool-call",
            hook_name=self.approvals.hook_name, target=request.target, reason=reason))
        outcome = refusal(f"error: the user denied this call: {reason}", kind)
        text = outcome.message_text(call.name)
        self._report.emit(ev.ToolCallFinished(
            task_id=task.task_id, turn=call.turn, call_id=call.call_id, tool_name=call.name,
            kind=kind, status="error", duration_ms=0, input=call.input,
            input_bytes=len(call.data.encode()), output=text, output_bytes=len(text.encode())))
        return outcome, text


def _noted(outcome: ToolOutcome, note: str) -> ToolOutcome:
    """A retried call's result: the note is added when it failed again."""
    if outcome.ok:
        return outcome
    return dataclasses.replace(outcome, text=f"{outcome.text}\n\n{note}")
