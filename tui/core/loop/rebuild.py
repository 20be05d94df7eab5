"""The turn a resumed session's predecessor died in, rebuilt (docs/tools.md, "Durable
questions"): the model's message and the results of the calls that finished come from the dead
session's journal and are not run again; the call that was running runs again only when its
contract is replay-safe (dispatch carries it); calls that had not started run now. What the
record already holds of the turn is not added twice."""

from __future__ import annotations

from tui.core.chat import Message
from tui.core.loop.context import Context
from tui.core.loop.dispatch import Dispatcher
from tui.core.loop.journal import OpenTurn
from tui.core.loop.report import Report
from tui.core.loop.state import TaskState


def present(turn: OpenTurn, context: Context) -> dict[str, Message] | None:
    """The turn's results the context already holds, by call id; None when it does not hold
    the turn's message (the record got neither)."""
    message_id = str(turn.message["id"])
    if message_id not in context.ids:
        return None
    after = context.messages[context.ids.index(message_id) + 1:]
    wanted = {str(c["id"]) for c in turn.calls()}
    return {str(m["tool_call_id"]): m for m in after
            if m.get("role") == "tool" and m.get("tool_call_id") in wanted}


def needed(turn: OpenTurn, context: Context) -> bool:
    """The turn is not whole in the context reloaded from the record."""
    calls = turn.calls()
    held = present(turn, context)
    return bool(calls) and (held is None or any(str(c["id"]) not in held for c in calls))


def rebuild(turn: OpenTurn, task: TaskState, context: Context, dispatch: Dispatcher,
            report: Report) -> None:
    """Finish `turn` as one of `task`'s turns and add what the context lacks of it (raises
    CanceledError / InputTimedOut as a turn's calls do)."""
    calls = turn.calls()
    held = present(turn, context) or {}
    number = task.usage.turns
    task.spend(turns=1)
    report.position.turn = number
    done = [c for c in calls if str(c["id"]) in turn.finished or str(c["id"]) in held]
    said = [f"{len(done)} finished call{'s' if len(done) != 1 else ''} "
            "taken from its journal, not run again"]
    waiting = turn.interrupted
    if waiting is not None and waiting.call_id not in held:
        said.append(f"{waiting.tool_name} ({waiting.call_id}) was running when it stopped")
        later = len(calls) - len(done) - 1
        if later:
            said.append(f"{later} call{'s' if later != 1 else ''} after it had not started")
    report.warn("W-RESUME-TURN", f"the turn session {turn.session_id} stopped in (task "
                f"{turn.task_id}) was rebuilt: " + "; ".join(said))
    questions = dispatch.questions
    if questions is not None:
        questions.numbering = turn.task_id  # the same question ids as before the restart
    try:
        results = dispatch.run_turn(task, number, turn.message, calls,
                                    {**turn.finished, **held}, turn.session_id)
    finally:
        if questions is not None:
            questions.numbering = None
    have = set(context.ids)
    for message in (turn.message, *results):
        if str(message["id"]) not in have and \
                (message.get("role") != "tool" or str(message.get("tool_call_id")) not in held):
            context.append(message)
