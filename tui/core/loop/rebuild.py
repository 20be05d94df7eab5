"""The turn a resumed session's predecessor died in, rebuilt (docs/tools.md, "Durable
questions"): the model's message and the results of the calls that finished come from the dead
session's journal (its lines that verify: journal_seal.py) and are not run again; the call that
was running runs again only when its contract is replay-safe (dispatch carries it); calls that
had not started run now — when the journal is not whole, nothing shows they had not started,
so each is carried as the running one is. What the record already holds of the turn is not
added twice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tui.core.chat import Message, as_message
from tui.core.loop.context import Context
from tui.core.loop.dispatch import Dispatcher
from tui.core.loop.journal import OpenTurn
from tui.core.loop.report import Report
from tui.core.loop.state import TaskState


def held_in(turn: OpenTurn, messages: Sequence[Mapping[str, Any]]
            ) -> dict[str, Message] | None:
    """The turn's results `messages` (a record's) already hold, by call id; None when they do
    not hold the turn's message (the record got neither)."""
    message_id = turn.message["id"]
    at = next((n for n, m in enumerate(messages) if m.get("id") == message_id), None)
    if at is None:
        return None
    wanted = {str(c["id"]) for c in turn.calls()}
    return {str(m["tool_call_id"]): result for m in messages[at + 1:]
            if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)
            and m["tool_call_id"] in wanted and (result := as_message(m)) is not None}


def present(turn: OpenTurn, context: Context) -> dict[str, Message] | None:
    return held_in(turn, context.messages)


def whole_in(turn: OpenTurn, messages: Sequence[Mapping[str, Any]]) -> bool:
    """`messages` hold the turn whole: its message and a result for each of its calls."""
    held = held_in(turn, messages)
    return held is not None and all(str(c["id"]) in held for c in turn.calls())


def needed(turn: OpenTurn, context: Context) -> bool:
    """The turn is not whole in the context reloaded from the record."""
    return bool(turn.calls()) and not whole_in(turn, context.messages)


def rebuild(turn: OpenTurn, task: TaskState, context: Context, dispatch: Dispatcher,
            report: Report) -> None:
    """Finish `turn` as one of `task`'s turns and add what the context lacks of it (raises
    StopOnCancel / StopOnInputTimeout as a turn's calls do)."""
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
        plural = "s" if later != 1 else ""
        if later and turn.whole:
            said.append(f"{later} call{plural} after it had not started")
        elif later:  # the journal lost lines: what came after may have run
            said.append(f"its journal is not whole, so the {later} call{plural} after it may "
                        "have started and each counts as interrupted too")
    report.warn("W-RESUME-TURN", f"the turn session {turn.session_id} stopped in (task "
                f"{turn.task_id}) was rebuilt: " + "; ".join(said))
    questions = dispatch.questions
    if questions is not None:
        questions.numbering = turn.task_id  # the same question ids as before the restart
    try:
        results = dispatch.run_turn(task, number, turn.message, calls,
                                    {**turn.finished, **held}, turn.session_id)
    finally:
        if questions is not None:  # the interrupted calls are carried in this turn or never
            questions.numbering, questions.interrupted = None, []
    have = set(context.ids)
    for message in (turn.message, *results):
        if str(message["id"]) not in have and \
                (message.get("role") != "tool" or str(message.get("tool_call_id")) not in held):
            context.append(message)
