"""Turns (spec §5.2): one driver call and what follows — the inference line, on-inference,
compaction, tool calls — returning a typed outcome; and the turns of one task attempt, within
inference.max_turns and inference.max_session_tokens."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core.cancel import CancelToken
from tui.core.chat import assistant_message
from tui.core.errors import DriverError, MalformedResponse, StopOnCancel
from tui.core.events import vocabulary as ev
from tui.core.events.kinds import TurnDecision
from tui.core.inference.driver import Driver
from tui.core.inference.response import ModelResponse, parse_response
from tui.core.loop import compaction
from tui.core.loop.context import Context, sha
from tui.core.loop.dispatch import Dispatcher
from tui.core.loop.hook_points import HookPoints
from tui.core.loop.report import Report
from tui.core.loop.state import (
    Continue,
    Failed,
    Finished,
    Limited,
    TaskOutcome,
    TaskState,
    TurnOutcome,
)
from tui.core.loop.waiting import Waiting
from tui.core.manifest.model import Inference
from tui.core.text import tokens

_DECISIONS: dict[str, TurnDecision] = {"tool_call": "tool_call", "end_turn": "end_turn",
                                       "max_tokens": "text"}


@dataclass
class Turns:
    """What a turn needs, built once per session."""

    driver: Driver
    context: Context
    report: Report
    hooks: HookPoints
    dispatch: Dispatcher
    cancel: CancelToken
    inference: Inference
    window: int | None  # context.max_tokens
    out: Path  # the session's out/ folder
    head: dict[str, Any]  # the request without its messages
    tool_payload: list[dict[str, Any]]
    system_sha: str
    tools_sha: str
    waiting: Waiting | None = None  # a formation member's: call-member answers, no answer

    def run(self, task: TaskState) -> TaskOutcome:
        """Turns until the model is done or a limit is reached (raises StopOnCancel)."""
        max_turns = self.inference.max_turns
        ceiling = self.inference.max_session_tokens
        for turn in range(task.usage.turns, max_turns):
            if self.cancel.is_set():
                raise StopOnCancel()
            spent = task.usage.tokens
            if ceiling is not None and spent >= ceiling:
                return Limited("spend_ceiling_reached", f"error: the session spent {spent} "
                               f"tokens; inference.max_session_tokens is {ceiling}")
            outcome = self.one(task, turn)
            if not isinstance(outcome, Continue):
                return outcome
        return Limited("max_turns_reached", f"error: inference loop exceeded {max_turns} turns")

    def one(self, task: TaskState, turn: int) -> TurnOutcome:
        """One driver call and what follows."""
        context = self.context
        message_ids = list(context.ids)
        payload_messages = list(context.payload)
        input_tokens = context.count()
        task.spend(turns=1, input_tokens=input_tokens)
        self.report.position.turn = turn
        self.report.emit(ev.TurnStarted(task_id=task.task_id, turn=turn,
                                        max_turns=self.inference.max_turns,
                                        input_tokens=input_tokens))
        request = context.request(self.head, payload_messages)
        deltas = self.report.deltas(task.task_id, turn)
        position = self.report.position
        position.phase = "inference"
        try:
            reply = self.driver.complete(request, deltas, self.cancel)
        except DriverError as exc:
            self._failed(task, turn, input_tokens, message_ids, str(exc))
            return Failed(f"error: {exc}", exc.cause, turn)
        finally:
            deltas.flush()
            if not self.cancel.is_set():  # canceled: the task stopped in its model call
                position.phase = "turn"
        if self.cancel.is_set():
            raise StopOnCancel()
        if reply.status != "passed":
            text = _error_text(reply.error_text)
            self._failed(task, turn, input_tokens, message_ids, text)
            context.drop_continuation()
            return Failed(f"error: {text}", "driver_error", turn)
        context.after_reply(reply, len(payload_messages))
        raw = reply.data or ""
        output_tokens = tokens.count(raw)
        task.spend(output_tokens=output_tokens)
        try:
            response = parse_response(raw)
        except MalformedResponse as exc:
            self._failed(task, turn, input_tokens, message_ids, str(exc), output_tokens,
                         "malformed_response")
            return Failed(f"error: {exc}", "malformed_response", turn)
        decision = _DECISIONS.get(response.stop_reason, "error")
        calls = response.tool_calls
        self.report.emit(ev.TurnCompleted(
            task_id=task.task_id, turn=turn, input_tokens=input_tokens,
            output_tokens=output_tokens, decision=decision, stop_reason=response.stop_reason,
            tool_name=str(calls[0]["name"]) if calls else None, model=self.inference.model,
            content=tuple(response.content), message_ids=tuple(message_ids),
            usage=response.usage, error=response.error if response.stop_reason == "error"
            else None, system_sha=self.system_sha, tools_sha=self.tools_sha,
            response_sha=sha(raw), message_shas=context.message_shas()))
        if self.hooks.bound("on-inference"):
            self.hooks.inference(turn, input_tokens, output_tokens, decision,
                                 str(calls[0]["name"]) if calls else None,
                                 context.sent(payload_messages),
                                 message_ids, response.content, self.tool_payload)
        if response.stop_reason != "error":
            failed = compaction.check(context, self.hooks, self.report,
                                      self.inference.compaction, self.window,
                                      self.inference.model, self.out, task.task_id, turn,
                                      input_tokens + output_tokens)
            if failed is not None:
                return failed
        return self._after(task, turn, response)

    def _after(self, task: TaskState, turn: int, response: ModelResponse) -> TurnOutcome:
        stop = response.stop_reason
        if stop == "error":
            text = response.error or "the driver reported an error"
            return Failed(f"error: {text}", "driver_error", turn)
        if stop == "tool_call":
            calls = response.tool_calls
            if not calls:
                return Failed("error: stop_reason tool_call without a tool_call block",
                              "malformed_response", turn)
            message = assistant_message(response.content)
            results = self.dispatch.run_turn(task, turn, message, calls)
            self.context.append(message)
            for result in results:
                self.context.append(result)
            unanswered = self.waiting.unanswered(task) if self.waiting else None
            return unanswered or Continue()
        if stop in ("end_turn", "max_tokens"):
            self.context.append(assistant_message(response.content))
            if stop == "max_tokens":
                self.report.warn("W-RUN-001", f"turn {turn + 1} stopped at "
                                 f"inference.max_tokens ({self.inference.max_tokens}); the "
                                 "result is a fragment")
            elif self.waiting is not None and self.waiting.go_on(
                    task, self.inference.max_turns, self.context, self.cancel):
                return Continue()  # with the answers of its call-member calls
            return Finished(response.text)
        return Failed(f"error: unsupported stop_reason '{stop}'", "malformed_response", turn)

    def _failed(self, task: TaskState, turn: int, input_tokens: int, message_ids: list[str],
                error: str, output_tokens: int | None = None,
                code: str = "driver_error") -> None:
        self.report.emit(ev.TurnCompleted(
            task_id=task.task_id, turn=turn, input_tokens=input_tokens,
            output_tokens=output_tokens, decision="error", stop_reason="error", tool_name=None,
            model=self.inference.model, message_ids=tuple(message_ids), error=error,
            error_code=code, system_sha=self.system_sha, tools_sha=self.tools_sha,
            message_shas=self.context.message_shas()))


def _error_text(data: str) -> str:
    """A failed driver call's text: the response's `error` when it is a response object."""
    try:
        response = parse_response(data)
    except MalformedResponse:
        return data
    return response.error or data
