"""A formation member's calls to others in its transcript's model, its export and its status
bar: the call's line with its clock while out, the callee busy, each of the eight statuses in
words, the answer fenced as the model reads it (folded on screen, whole in the export), the
task going on with the answers, delegations, the formation ending — and a task a member sent
says whom it is from."""

from __future__ import annotations

import re

import pytest

from tests.app.test_transcript_model import make, turn
from tui.app.models.status import SessionState
from tui.app.models.transcript import TranscriptModel
from tui.app.models.transcript_text import markdown, text_lines
from tui.core.events import vocabulary as ev
from tui.core.events.formation_wording import CALL_STATUSES
from tui.core.events.wording import LineKind

TASK = "Review the patch in src/parse.py\nand say what breaks."


def member(task_id: str = "t", caller: str | None = None) -> TranscriptModel:
    model = TranscriptModel()
    model.take(make(ev.SessionStarted, capsule_name="lead", capsule_version="0.1.0",
                    model="m", max_turns=10, workdir="/w", trace_path="", context_id="c",
                    record_path=None, tools=(),
                    formation_id="frm_0123", formation_member="lead"))
    model.take(make(ev.TaskStarted, task_id=task_id, context_id="c", text="Ship it.",
                    caller_member=caller))
    return model


def started(call: str = "mcl_1", member: str = "coder", at: int = 1_000) -> ev.MemberCallStarted:
    return ev.MemberCallStarted(session_id="ses_m", seq=0, ts_ms=at, task_id="t", call_id=call,
                                member=member, task=TASK, callee_task_id="task_9", turn=0)


def ended(status: str, call: str = "mcl_1", answer: str | None = None,
          reason: str | None = None, ms: int = 12_345) -> ev.MemberCallEnded:
    return make(ev.MemberCallEnded, task_id="t", call_id=call, member="coder", status=status,
                duration_ms=ms, answer=answer, reason=reason)


def entries(model: TranscriptModel, now: int | None = None,
            fold: bool = False) -> list[tuple[LineKind, str]]:
    return [entry for t in model.turns for entry in t.entries(now, fold)]


def test_a_call_counts_while_out_and_its_answer_arrives_fenced() -> None:
    model = member()
    turn(model, 0)
    assert model.take(started())
    assert entries(model) == [(LineKind.RUNNING,
                               '→ coder: "Review the patch in src/parse.py and say what '
                               'breaks."')]
    assert entries(model, now=13_300)[0][1].endswith('what breaks." · 12.3 s')
    model.take(make(ev.MemberCallBusy, task_id="t", member="reviewer", attempt=2,
                    retry_in_ms=2_180))
    answer = "\n".join(f"line {n}" for n in range(1, 11))
    model.take(ended("completed", answer=answer))
    fenced = ["<untrusted-content source=member:coder>",
              *(f"line {n}" for n in range(1, 11)), "</untrusted-content>"]
    assert [text for _, text in entries(model)] == [
        "✓ coder answered · 12.3 s", "\n".join(fenced),
        "reviewer is busy: offered again in 2 s"]
    assert entries(model)[0][0] is LineKind.SUCCESS
    # on screen the answer folds to its first lines; the export has it whole
    assert entries(model, fold=True)[1][1].splitlines() == [
        *fenced[:6], "… 6 more lines (o shows them)"]
    assert not model.window[0].running  # its clock stopped
    model.take(make(ev.TaskContinued, task_id="t", continuation_number=1,
                    member_calls=("mcl_1",), delegations=(), waited_ms=14_200,
                    turns_remaining=7))
    assert entries(model)[-1] == (LineKind.NOTE,
                                  "continuing with 1 member answer(s) after 0:14")
    out = markdown(model)
    assert "✓ coder answered · 12.3 s\n<untrusted-content source=member:coder>\nline 1\n" \
        in out and "line 10\n</untrusted-content>" in out
    assert "continuing with 1 member answer(s) after 0:14" in out


@pytest.mark.parametrize(("status", "reason", "line", "kind"), [
    ("failed", "tests do not pass", "✗ coder: its task failed · 3.0 s · tests do not pass",
     LineKind.FAILURE),
    ("canceled", None, "⊘ coder: canceled · 3.0 s", LineKind.NOTE),
    ("rejected", "queue full", "✗ coder: rejected the task · 3.0 s · queue full",
     LineKind.FAILURE),
    ("timed_out", None, "✗ coder: no answer within the deadline · 3.0 s", LineKind.FAILURE),
    ("unreachable", None, "✗ coder: unreachable · 3.0 s", LineKind.FAILURE),
    ("abandoned", None, "⊘ coder: abandoned: the task went on without it · 3.0 s",
     LineKind.NOTE),
    ("no_answer", "out of scope",
     "✗ coder: ended its task without an answer · 3.0 s · out of scope", LineKind.FAILURE),
])
def test_every_status_in_words(status: str, reason: str | None, line: str,
                               kind: LineKind) -> None:
    model = member()
    turn(model, 0)
    model.take(started())
    model.take(ended(status, reason=reason, ms=3_000))
    assert entries(model) == [(kind, line)]


def test_all_eight_statuses_are_worded() -> None:
    assert set(CALL_STATUSES) == {"completed", "failed", "canceled", "rejected", "timed_out",
                                  "unreachable", "abandoned", "no_answer"}


def test_delegations_and_the_formation_ending() -> None:
    model = member()
    turn(model, 0)
    model.take(make(ev.DelegationStarted, task_id="t", delegation_id="dlg_1", capsule="fmt",
                    version="1.0.0", child_session_id="ses_child", child_workdir=".murmur/x"))
    assert entries(model) == [(LineKind.RUNNING, "⇢ delegated to fmt@1.0.0 as ses_child")]
    model.take(make(ev.DelegationEnded, task_id="t", delegation_id="dlg_1", capsule="fmt",
                    version="1.0.0", child_session_id="ses_child", duration_ms=4_200,
                    outcome="completed"))
    model.take(make(ev.DelegationEnded, task_id="t", delegation_id=None, capsule="big",
                    version="2.0.0", child_session_id=None, duration_ms=10,
                    outcome="refused", reason="spawn envelope: network"))
    assert entries(model) == [
        (LineKind.SUCCESS, "✓ delegated to fmt@1.0.0 as ses_child · completed · 4.2 s"),
        (LineKind.FAILURE, "✗ delegated to big@2.0.0 · refused · 10 ms · spawn envelope: "
                           "network")]
    model.take(make(ev.FormationEnded, formation_id="frm_0123"))
    assert entries(model)[-1] == (LineKind.NOTE, "formation frm_0123 ended: winding down")
    assert next(text_lines(model)) == \
        "Session ses_m · 1 task · formation frm_0123 ended: winding down"


def test_a_task_from_a_member_says_whom_it_is_from() -> None:
    model = member(caller="lead")
    assert [block.header for block in model.blocks] == ["Task 1 · from lead"]


def test_the_status_bar_waits_on_the_callee_once_the_turn_ended() -> None:
    state = SessionState()
    state.apply(make(ev.SessionStarted, capsule_name="lead", capsule_version="0.1.0",
                     model="m", max_turns=10, workdir="/w", trace_path="", context_id="c",
                     record_path=None, tools=()))
    state.apply(make(ev.TaskStarted, task_id="t", context_id="c", text="x"))
    state.apply(make(ev.TurnStarted, task_id="t", turn=0, max_turns=10, input_tokens=1))
    state.apply(started())
    assert state.status == "busy"  # the turn still runs
    state.apply(make(ev.TurnCompleted, task_id="t", turn=0, input_tokens=1, output_tokens=1,
                     decision="end_turn", stop_reason="end_turn", tool_name=None, model="m"))
    assert re.fullmatch(r"waiting on coder · \d+:\d\d", state.status)
    assert re.match(r"waiting on coder · \d+:\d\d  ·  turn 1/10", state.line())
    state.apply(ended("completed", answer="ok"))
    assert state.status == "busy"
