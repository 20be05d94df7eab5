"""The runtime-provided tools of a formation member (spec murmur-newest §7.5): `call-member`,
which exists exactly when the roster lets this member call someone, and `end-without-answer`,
which every member has (a task another member sent may be ended with no answer).

Both are murmur-tui's own (kind `runtime`): no artifact, no manifest entry. Their results are
the runtime's words, unfenced; what a callee answers reaches the task later, fenced
`member:<name>` (member_calls.py).
"""

from __future__ import annotations

import json
import threading
import time

from tui.core.cancel import CancelToken
from tui.core.events import vocabulary as ev
from tui.core.formation.member_calls import MemberCalls, Result
from tui.core.tools.table import SILENT, CallProgress, ToolCall, ToolOutcome, ToolSpec

CALL_MEMBER = "call-member"
END_WITHOUT_ANSWER = "end-without-answer"
NETWORK_WARNING = ("W-RUN-008", "call-member: capabilities.network.allow does not include "
                   "localhost, so no member's door can be reached and every call fails")


def call_member_spec(callees: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(CALL_MEMBER, (
        "Hand a task to another member of this formation. Returns at once with the call's id; "
        "the member works on it meanwhile. When you end your turn, the task waits for every "
        "answer still out and goes on with one message holding them all, each fenced "
        "member:<name>."), {
        "type": "object",
        "properties": {
            "member": {"type": "string", "enum": list(callees),
                       "description": "the member to hand the task to"},
            "task": {"type": "string", "description": "the task, as the member reads it"}},
        "required": ["member", "task"], "additionalProperties": False}, "runtime")


END_SPEC = ToolSpec(END_WITHOUT_ANSWER, (
    "End the task another formation member sent you without answering it, and say why. The "
    "member that called reads: no answer: <reason>. Only for a task a member sent."), {
    "type": "object",
    "properties": {"reason": {"type": "string",
                              "description": "why there is no answer, for the caller"}},
    "required": ["reason"], "additionalProperties": False}, "runtime")


class CallMember:
    """`call-member {member, task}`."""

    def __init__(self, calls: MemberCalls) -> None:
        self.calls = calls
        self.spec = call_member_spec(calls.seat.callee_names)

    def call(self, call: ToolCall, cancel: CancelToken,
             progress: CallProgress = SILENT) -> ToolOutcome:
        started = time.perf_counter()
        result = self.calls.call(call.task_id, call.turn, call.input.get("member"),
                                 call.input.get("task"))
        return outcome(result, int((time.perf_counter() - started) * 1000))


def outcome(result: Result, duration_ms: int) -> ToolOutcome:
    """`Called <m>: started` and its JSON; `Called <m>: failed` and why."""
    text = result.summary
    if result.data is not None:
        text += "\n" + json.dumps(result.data, ensure_ascii=False, separators=(",", ":"))
    if result.reason:
        text += f"\n{result.reason}"
    data = json.dumps(result.data, separators=(",", ":")) if result.data is not None else None
    return ToolOutcome(status="passed" if result.status == "passed" else "failed", text=text,
                       fenced=False, kind="runtime", duration_ms=duration_ms,
                       summary=result.summary, data=data)


class Callers:
    """Which member sent each task (an event sink: `TaskStarted.caller_member`), and the tasks
    the model ended with `end-without-answer` (the turn loop takes the reason)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_task: dict[str, str] = {}
        self._unanswered: dict[str, str] = {}

    def emit(self, event: ev.Event) -> None:
        if isinstance(event, ev.TaskStarted) and event.caller_member:
            with self._lock:
                self._by_task[event.task_id] = event.caller_member
        elif isinstance(event, ev.TaskEnded):
            with self._lock:
                self._by_task.pop(event.task_id, None)

    def end(self, task_id: str, reason: str) -> str | None:
        """The task ends without an answer after this turn; None, or why it cannot."""
        with self._lock:
            if task_id not in self._by_task:
                return ("error: end-without-answer ends only a task another formation member "
                        "sent with call-member; this task was not sent by a member, so answer "
                        "it (or say why you cannot) in your reply")
            self._unanswered[task_id] = reason
            return None

    def caller(self, task_id: str) -> str | None:
        with self._lock:
            return self._by_task.get(task_id)

    def take(self, task_id: str) -> str | None:
        """The reason the task ends without an answer, once; None when it answers."""
        with self._lock:
            return self._unanswered.pop(task_id, None)


class EndWithoutAnswer:
    """`end-without-answer {reason}`."""

    spec = END_SPEC

    def __init__(self, callers: Callers) -> None:
        self.callers = callers

    def call(self, call: ToolCall, cancel: CancelToken,
             progress: CallProgress = SILENT) -> ToolOutcome:
        reason = call.input.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            return _result("failed", "error: end-without-answer needs a reason: the text the "
                                     "calling member reads")
        refused = self.callers.end(call.task_id, reason.strip())
        if refused is not None:
            return _result("failed", refused)
        caller = self.callers.caller(call.task_id) or "the caller"
        return _result("passed", f"The task ends without an answer when this turn ends; "
                                 f"{caller} reads: no answer: {reason.strip()}")


def _result(status: str, text: str) -> ToolOutcome:
    return ToolOutcome(status="passed" if status == "passed" else "failed", text=text,
                       fenced=False, kind="runtime", duration_ms=0)
