"""What each session event says, in words: the one place for it.

Two places show events. The transcript (`Form.SCREEN`) puts a line under the turn it belongs
to, shortens long inputs to fit beside the panes and marks an outcome with ✓ or ✗; the
headless log (`Form.LOG`) prints a line per event with inputs in full and statuses spelled out.
Both are written here, side by side, from the same pieces (marks, counts, durations: in
`tui.core.events.words`; the retry phrase).
`said` gives the transcript's line and its kind; `log_line` gives the headless line.
"""

from __future__ import annotations

import json

from tui.core.events import vocabulary as ev
from tui.core.events.delegation_words import delegation_line
from tui.core.events.formation_wording import log_line as formation_log_line
from tui.core.events.words import ANSWER_LINES as ANSWER_LINES
from tui.core.events.words import Form as Form
from tui.core.events.words import LineKind as LineKind
from tui.core.events.words import Said as Said
from tui.core.events.words import count as count
from tui.core.events.words import duration as duration
from tui.core.events.words import mark as mark
from tui.core.events.words import short as short
from tui.core.events.words import size as size

# -- one function per event ------------------------------------------------------------------
NOT_SENT = "(input not sent by the door)"  # an attached session's call, from Murmur's door


def tool_started(event: ev.ToolCallStarted, form: Form) -> str:
    if not event.input_known:
        return f"→ {event.tool_name} {NOT_SENT}"
    arguments = short(event.input) if form is Form.SCREEN else \
        json.dumps(event.input, ensure_ascii=False)
    return f"→ {event.tool_name} {arguments}"


def composing(event: ev.ToolCallComposing, form: Form) -> str:
    """A tool call the model is still writing: the screen shows its size so far."""
    if form is Form.SCREEN:
        return f"✎ {event.tool_name} · {size(event.input_bytes)}"
    return f"✎ {event.tool_name} · composing a call ({event.call_id})"


def tool_finished(event: ev.ToolCallFinished, form: Form) -> str:
    if form is Form.SCREEN:
        given = short(event.input, 60) if event.input_known else NOT_SENT
        return (f"{mark(event.status == 'ok')} {event.tool_name} {given} · "
                f"{duration(event.duration_ms)} · {event.output_bytes} B")
    return (f"← {event.tool_name} {event.status} · {duration(event.duration_ms)} · "
            f"{event.output_bytes} bytes")


def tool_restored(event: ev.ToolCallRestored, form: Form) -> str:
    """A rebuilt turn's call that finished before the restart (not run again)."""
    if form is Form.SCREEN:
        return (f"{mark(event.status == 'ok')} {event.tool_name} · finished before the restart, "
                f"not run again · {event.output_bytes} B")
    return (f"← {event.tool_name} {event.status} · finished before the restart (session "
            f"{event.from_session}), not run again · {event.output_bytes} bytes")


def shell_executed(event: ev.ShellExecuted, form: Form) -> str:
    cut = " · truncated" if event.truncated else ""
    if form is Form.SCREEN:
        return (f"{mark(event.exit_code == 0)} $ {short(event.command, 80)} · "
                f"exit {event.exit_code} · {duration(event.duration_ms)}{cut}")
    return f"  $ {event.command}  [exit {event.exit_code} · {duration(event.duration_ms)}{cut}]"


def background(event: ev.ShellDetached | ev.ShellCompleted | ev.ShellAbandoned | ev.ShellLost,
               form: Form) -> str:
    """Background work's line: moved there, done, abandoned (or stopped), lost."""
    command = short(event.command, 80) if form is Form.SCREEN else event.command
    match event:
        case ev.ShellDetached():
            return (f"⇢ $ {command} · still running after {duration(event.grace_ms)}: in the "
                    f"background as {event.work_id} · output {event.output_path}")
        case ev.ShellCompleted():
            return (f"{mark(event.status == 'ok')} background {event.work_id} $ {command} · "
                    f"exit {event.exit_code} · {duration(event.duration_ms)} · "
                    f"{event.output_path}")
        case ev.ShellAbandoned():
            return f"⊘ background {event.work_id} $ {command} · {_abandoned(event)}"
    return (f"⊘ background {event.work_id} $ {command} · lost: session "
            f"{event.lost_session_id} was killed while it ran")


def _abandoned(event: ev.ShellAbandoned) -> str:
    how = "stopped" if event.reason == "stopped" else "abandoned (the session ended)"
    return how + (f" · exit {event.exit_code}" if event.exit_code is not None
                  else " · killed while running")


def moved(event: ev.ShellDetached, latest: str = "") -> Said:
    """A shell call's transcript line once its command moved to the background (the call
    returned at once with the work id): while the work runs, the newest line of its log."""
    text = (f"⇢ $ {short(event.command, 60)} · still running after "
            f"{duration(event.grace_ms)}: moved to the background as {event.work_id}")
    return Said(LineKind.RUNNING, f"{text}  ⋯ {short(latest, 60)}" if latest else text)


def moved_ended(detached: ev.ShellDetached, end: ev.ShellCompleted | ev.ShellAbandoned
                ) -> Said:
    """That line once the background work ended: how, and (completed) in how long."""
    head = f"$ {short(detached.command, 60)} · moved to the background as {detached.work_id}"
    if isinstance(end, ev.ShellCompleted):
        ok = end.status == "ok"
        return Said(_outcome(ok), f"{mark(ok)} {head} · exit {end.exit_code} · "
                                  f"{duration(end.duration_ms)}")
    return Said(LineKind.FAILURE, f"⊘ {head} · {_abandoned(end)}")


def shell_output(event: ev.ShellOutput) -> str:
    """A running command's lines in the headless log: `  │ ` before stdout, `  │! ` before
    stderr, and a line saying how many were left out when it wrote faster than they show."""
    prefix = "  │ " if event.stream == "stdout" else "  │! "
    lines = [prefix + line for line in event.text.split("\n")]
    if event.skipped_lines:
        lines.insert(0, f"{prefix}… {count(event.skipped_lines, 'line')} not shown live "
                        f"(the result and the log keep them)")
    return "\n".join(lines)


def latest_line(event: ev.ShellOutput | ev.ToolProgress, limit: int = 100) -> str:
    """The newest non-blank line of live output or progress, shortened (a running call's
    line on screen)."""
    lines = [line for line in event.text.splitlines() if line.strip()]
    return short(lines[-1], limit) if lines else ""


def tool_progress(event: ev.ToolProgress, form: Form) -> str:
    if form is Form.SCREEN:
        return f"⋯ {latest_line(event)}"
    return "  ⋯ " + event.text.rstrip("\n").replace("\n", "\n    ")


def call_denied(event: ev.CallDenied, form: Form) -> str:
    what = "$" if event.kind == "shell" else "tool"
    reason = short(event.reason, 200) if form is Form.SCREEN else event.reason
    return f"⊘ denied {what} {event.target}: {reason}"


def denied(event: ev.CallDenied, call: str) -> Said:
    """A call's transcript line once it was denied (`call`: its start line, `→ tool input`):
    the reason, and no duration — it never ran."""
    return Said(LineKind.FAILURE, f"⊘ {call.removeprefix('→ ')} · denied: "
                                  f"{short(event.reason, 200)}")


def delegated(event: ev.Delegated, form: Form) -> str:
    peer = short(event.peer_url, 80)
    return f"⇢ sent a task to {peer}: {event.peer_task_id} ({event.state})"


def question(event: ev.InputRequested, form: Form) -> str:
    prompt = short(event.prompt, 200) if form is Form.SCREEN else event.prompt
    again = " (asked before the restart)" if event.before_restart else ""
    return f"? {event.tool_name} asks{again}: {prompt}"


def answer(event: ev.InputAnswered, form: Form) -> str:
    """The human's answer, with its line breaks (the screen shows at most ANSWER_LINES of it,
    each cut at 200 characters; the headless log all of it)."""
    label = "  you answered: " if form is Form.SCREEN else "  answered: "
    if event.journaled:
        label = "  answered before the restart: "
    lines = event.answer.strip("\n").splitlines() or [""]
    if form is Form.SCREEN:
        more = len(lines) - ANSWER_LINES
        lines = [_cut(line, 200) for line in lines[:ANSWER_LINES]]
        if more > 0:
            lines.append(f"… {count(more, 'more line')}")
    indent = "\n" + " " * len(label)
    return label + indent.join(lines)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def canceled(event: ev.TaskCanceled) -> str:
    where = {"inference": "during a model call", "input": "while a question waited",
             "turn": "between steps",
             "member_call": "while it waited on call-member",
             "delegation": "while it waited on a delegation"}[event.phase]
    stopped = len(event.delegation_ids)
    also = f"; {stopped} delegation{'s' if stopped != 1 else ''} stopped" if stopped else ""
    return f"⊘ canceled {where} (turn {event.turn + 1}){also}"


def retry(event: ev.InferenceRetry, form: Form) -> str:
    failed = f"model call failed ({event.status or 'connection broke'})"
    wait = (f"retrying in {event.delay_ms / 1000:.1f} s "
            f"(attempt {event.attempt + 1} of {event.max_attempts})")
    if form is Form.SCREEN:
        return f"↻ {failed}; {wait}"
    return f"↻ {failed}: {event.reason}; {wait}"


def model_call_failed(event: ev.TurnCompleted) -> str:
    if not event.error:
        return "✗ the model call failed (no reason was given)"
    return f"✗ the model call failed: {short(event.error, 300)}"


def compacted(event: ev.Compacted, form: Form) -> str:
    at = "" if form is Form.SCREEN else f" at turn {event.turn + 1}"
    return f"⇣ context compacted{at}: {event.tokens_before} → {event.tokens_after} tokens"


def compaction_declined(event: ev.CompactionDeclined, form: Form) -> str:
    if form is Form.SCREEN:
        return f"⇣ compaction declined ({event.reason}) at {event.tokens} tokens"
    return (f"⇣ compaction declined at turn {event.turn + 1} ({event.reason}); "
            f"{event.tokens} tokens")


def reopened(event: ev.TaskReopened, form: Form) -> str:
    if not event.hook_name:  # an attached session whose door does not say (Murmur's)
        return (f"↻ task reopened ({event.reopen_number}); which hook and why were not "
                "sent by the door")
    if form is Form.SCREEN:
        return f"↻ reopened by {event.hook_name}: {short(event.reason)}"
    return f"↻ task reopened by {event.hook_name} ({event.reopen_number}): {event.reason}"


def task_ended(event: ev.TaskEnded, form: Form, cost: str = "") -> str:
    """The task's summary line, with what it cost when its model has a price (`$0.0123`,
    tui.core.cost). The screen shows a failure's reason beneath it on its own."""
    spent = f" · {cost}" if cost else ""
    if form is Form.SCREEN:
        return (f"{mark(event.exit_status == 'ok')} task {event.exit_status} · "
                f"{count(event.turns, 'turn')} · {count(event.tool_calls, 'tool call')}"
                f"{spent}")
    summary = (f"task {event.exit_status} · {count(event.turns, 'turn')} · "
               f"{event.input_tokens} in / {event.output_tokens} out tokens{spent} · "
               f"{count(event.tool_calls, 'tool call')}")
    # a finished answer was already streamed; a failure's reason was not
    return summary if event.exit_status == "ok" else f"{summary}\n{event.result}"


def session_ended(event: ev.SessionEnded, cost: str = "") -> str:
    """The session's last line: how it ended, how long it ran, its tokens and — when every
    call's model has a price — what they cost."""
    spent = f" · {cost}" if cost else ""
    return (f"session {event.exit_status} · {duration(event.duration_ms)} · "
            f"{event.total_input_tokens} in / {event.total_output_tokens} out tokens{spent}")


def hook_fault(event: ev.HookFault) -> str:
    what = f"returned {event.arm}: {event.error}" if event.arm else event.error
    return f"! hook {event.hook} {event.handler}: {what}"


def warning(event: ev.Warning) -> str:
    return f"warning: {event.text}"


# -- the two places ----------------------------------------------------------------------------
def said(event: ev.Event) -> Said | None:
    """The line the transcript shows under a turn for `event`, or None for none."""
    match event:
        case ev.ToolCallComposing():
            return Said(LineKind.RUNNING, composing(event, Form.SCREEN))
        case ev.ToolCallStarted():
            return Said(LineKind.RUNNING, tool_started(event, Form.SCREEN))
        case ev.ToolCallFinished():
            return Said(_outcome(event.status == "ok"), tool_finished(event, Form.SCREEN))
        case ev.ToolCallRestored():
            return Said(_outcome(event.status == "ok"), tool_restored(event, Form.SCREEN))
        case ev.ShellExecuted():
            return Said(_outcome(event.exit_code == 0), shell_executed(event, Form.SCREEN))
        case ev.ShellDetached():
            return Said(LineKind.NOTE, background(event, Form.SCREEN))
        case ev.CallDenied():
            return Said(LineKind.FAILURE, call_denied(event, Form.SCREEN))
        case ev.Delegated():
            return Said(LineKind.NOTE, delegated(event, Form.SCREEN))
        case ev.InputRequested():
            return Said(LineKind.QUESTION, question(event, Form.SCREEN))
        case ev.InputAnswered():
            return Said(LineKind.NOTE, answer(event, Form.SCREEN))
        case ev.InferenceRetry():
            return Said(LineKind.NOTE, retry(event, Form.SCREEN))
        case ev.TurnCompleted() if event.decision == "error":
            return Said(LineKind.FAILURE, model_call_failed(event))
        case ev.Compacted():
            return Said(LineKind.NOTE, compacted(event, Form.SCREEN))
        case ev.CompactionDeclined():
            return Said(LineKind.NOTE, compaction_declined(event, Form.SCREEN))
        case ev.TaskReopened():
            return Said(LineKind.NOTE, reopened(event, Form.SCREEN))
        case ev.TaskCanceled():
            return Said(LineKind.FAILURE, canceled(event))
    return None


def _outcome(ok: bool) -> LineKind:
    return LineKind.SUCCESS if ok else LineKind.FAILURE


def log_line(event: ev.Event) -> str | None:
    """The headless log's line for `event` (it may span lines), or None for events not
    shown. Streamed text and warnings are printed as they come, not through here."""
    match event:
        case ev.SessionStarted():
            return (f"session {event.session_id} · {event.capsule_name} "
                    f"{event.capsule_version} · model {event.model}\n  workdir {event.workdir}")
        case ev.TaskStarted():
            first = event.text.strip().splitlines()[0] if event.text.strip() else "(empty task)"
            return f"task {event.task_id}: {first}"
        case ev.TurnStarted():
            return f"turn {event.turn + 1}/{event.max_turns} · {event.input_tokens} tokens in"
        case ev.ToolCallComposing() if event.input_bytes == 0:  # its start; sizes: --json
            return composing(event, Form.LOG)
        case ev.ToolCallStarted():
            return tool_started(event, Form.LOG)
        case ev.ToolCallFinished():
            return tool_finished(event, Form.LOG)
        case ev.ToolCallRestored():
            return tool_restored(event, Form.LOG)
        case ev.ShellOutput():
            return shell_output(event)
        case ev.ToolProgress():
            return tool_progress(event, Form.LOG)
        case ev.ShellExecuted():
            return shell_executed(event, Form.LOG)
        case ev.ShellDetached() | ev.ShellCompleted() | ev.ShellAbandoned() | ev.ShellLost():
            return background(event, Form.LOG)
        case ev.CallDenied():
            return call_denied(event, Form.LOG)
        case ev.Delegated():
            return delegated(event, Form.LOG)
        case ev.SpawnerEnded():
            return delegation_line(event)  # a delegated child's parent gone (formations.md)
        case ev.InputRequested():
            return question(event, Form.LOG)
        case ev.Progress():
            return f"… {event.text}"
        case ev.InferenceRetry():
            return retry(event, Form.LOG)
        case ev.Compacted():
            return compacted(event, Form.LOG)
        case ev.CompactionDeclined():
            return compaction_declined(event, Form.LOG)
        case ev.TaskReopened():
            return reopened(event, Form.LOG)
        case ev.TaskCanceled():
            return canceled(event)
        case ev.InputAnswered():
            return answer(event, Form.LOG)
        case ev.HookFault():
            return hook_fault(event)
        case ev.TaskFailed():
            return f"✗ task failed ({event.cause}): {event.reason}"
        case ev.TaskEnded():
            return task_ended(event, Form.LOG)
        case ev.SessionEnded():
            return session_ended(event)
    return formation_log_line(event)  # a member's calls, delegations, its formation's end
