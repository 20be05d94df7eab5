"""What a formation member's own events say, in words (tui.core.events.wording for the rest):
a `call-member` call going out, re-offered while the callee is busy and ending in one of its
eight statuses, the task going on with the answers it waited for, a delegated child started
and ended, and the formation ending under the member. The transcript's form (`Form.SCREEN`)
cuts a task's text to one line; the headless log's (`Form.LOG`) gives it whole, with the ids.
"""

from __future__ import annotations

import json

from tui.core.events import vocabulary as ev
from tui.core.events.words import Form, LineKind, Said, count, duration, short
from tui.core.text.fence import fence

# each call-member status: its mark and what it says after `<member>: ` (completed: answered)
CALL_STATUSES: dict[str, tuple[str, str]] = {
    "completed": ("✓", "answered"),
    "failed": ("✗", "its task failed"),
    "canceled": ("⊘", "canceled"),
    "rejected": ("✗", "rejected the task"),
    "timed_out": ("✗", "no answer within the deadline"),
    "unreachable": ("✗", "unreachable"),
    "abandoned": ("⊘", "abandoned: the task went on without it"),
    "no_answer": ("✗", "ended its task without an answer"),
}
DELEGATION_OUTCOMES: dict[str, tuple[str, str]] = {
    "completed": ("✓", "completed"),
    "timed_out": ("✗", "no outcome within the deadline"),
    "failed": ("✗", "failed"),
    "refused": ("✗", "refused"),
}
ANSWER_FOLD = 6  # lines of a member's answer the screen shows before `o` unfolds it


def clock(ms: int) -> str:
    """`0:14`, `12:03`, `1:02:03`: a wait as the status bar counts it."""
    minutes, seconds = divmod(max(0, ms) // 1000, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def seconds(ms: int) -> str:
    """A back-off as people say it: `1 s`, `2 s`, `8 s` (the jitter is not worth a digit)."""
    return f"{max(1, round(ms / 1000))} s"


def call_started(event: ev.MemberCallStarted, form: Form) -> str:
    if form is Form.SCREEN:
        return f'→ {event.member}: "{short(event.task, 80)}"'
    return (f"→ call-member {event.member}: {json.dumps(event.task, ensure_ascii=False)} · "
            f"{event.call_id} · its task {event.callee_task_id}")


def call_busy(event: ev.MemberCallBusy, form: Form) -> str:
    line = f"{event.member} is busy: offered again in {seconds(event.retry_in_ms)}"
    return line if form is Form.SCREEN else f"{line} (attempt {event.attempt})"


def call_ended(event: ev.MemberCallEnded, form: Form) -> str:
    mark, words = CALL_STATUSES.get(event.status, ("✗", event.status))
    head = f"{mark} {event.member} {words}" if event.status == "completed" else \
        f"{mark} {event.member}: {words}"
    reason = event.reason or ""
    if form is Form.SCREEN:
        why = f" · {short(reason, 200)}" if reason else ""
        return f"{head} · {duration(event.duration_ms)}{why}"
    why = f" · {reason}" if reason else ""
    answer = f" · answer {count(len(event.answer.encode()), 'byte')}" \
        if event.answer is not None else ""
    return f"← {head.removeprefix(mark + ' ')} · {duration(event.duration_ms)}{answer} · " \
        f"{event.call_id}{why}"


def call_kind(event: ev.MemberCallEnded) -> LineKind:
    if event.status == "completed":
        return LineKind.SUCCESS
    return LineKind.NOTE if event.status in ("canceled", "abandoned") else LineKind.FAILURE


def fenced_answer(event: ev.MemberCallEnded) -> str:
    """The callee's answer as the model reads it: fenced as `member:<name>`."""
    return fence(f"member:{event.member}", event.answer or "")


def fold(text: str, lines: int = ANSWER_FOLD) -> str:
    """`text`'s first `lines` lines, and how many more there are (`o` shows them)."""
    kept = text.split("\n")
    if len(kept) <= lines + 1:
        return text
    more = len(kept) - lines
    return "\n".join([*kept[:lines], f"… {count(more, 'more line')} (o shows them)"])


def continued(event: ev.TaskContinued) -> str:
    parts = [f"{len(event.member_calls)} member answer(s)"] if event.member_calls else []
    if event.delegations:
        parts.append(f"{len(event.delegations)} delegation outcome(s)")
    got = " and ".join(parts) or "no answers"
    return f"continuing with {got} after {clock(event.waited_ms)}"


def formation_ended(event: ev.FormationEnded) -> str:
    return f"formation {event.formation_id} ended: winding down"


def _delegated(capsule: str, version: str, child: str | None) -> str:
    return f"delegated to {capsule}@{version}" + (f" as {child}" if child else "")


def delegation_started(event: ev.DelegationStarted, form: Form) -> str:
    line = f"⇢ {_delegated(event.capsule, event.version, event.child_session_id)}"
    if form is Form.SCREEN:
        return line
    return f"{line} · {event.delegation_id} · workdir {event.child_workdir}"


def delegation_ended(event: ev.DelegationEnded, form: Form) -> str:
    mark, words = DELEGATION_OUTCOMES.get(event.outcome, ("✗", event.outcome))
    reason = event.reason or ""
    why = f" · {short(reason, 200) if form is Form.SCREEN else reason}" if reason else ""
    head = _delegated(event.capsule, event.version, event.child_session_id)
    return f"{mark} {head} · {words} · {duration(event.duration_ms)}{why}"


def said(event: ev.Event) -> Said | None:
    """The transcript's line for a formation event (a call's end: its status line alone)."""
    match event:
        case ev.MemberCallStarted():
            return Said(LineKind.RUNNING, call_started(event, Form.SCREEN))
        case ev.MemberCallBusy():
            return Said(LineKind.NOTE, call_busy(event, Form.SCREEN))
        case ev.MemberCallEnded():
            return Said(call_kind(event), call_ended(event, Form.SCREEN))
        case ev.TaskContinued():
            return Said(LineKind.NOTE, continued(event))
        case ev.FormationEnded():
            return Said(LineKind.NOTE, formation_ended(event))
        case ev.DelegationStarted():
            return Said(LineKind.RUNNING, delegation_started(event, Form.SCREEN))
        case ev.DelegationEnded():
            ok = event.outcome == "completed"
            return Said(LineKind.SUCCESS if ok else LineKind.FAILURE,
                        delegation_ended(event, Form.SCREEN))
    return None


def log_line(event: ev.Event) -> str | None:
    """The headless log's line for a formation event, or None for another event."""
    match event:
        case ev.MemberCallStarted():
            return call_started(event, Form.LOG)
        case ev.MemberCallBusy():
            return call_busy(event, Form.LOG)
        case ev.MemberCallEnded():
            return call_ended(event, Form.LOG)
        case ev.TaskContinued():
            return continued(event)
        case ev.FormationEnded():
            return formation_ended(event)
        case ev.DelegationStarted():
            return delegation_started(event, Form.LOG)
        case ev.DelegationEnded():
            return delegation_ended(event, Form.LOG)
    return None
