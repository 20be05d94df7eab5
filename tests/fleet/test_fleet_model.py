"""The fleet's rows: which group a session is in, and the order within a group."""

from __future__ import annotations

from tui.app.fleet.model import FleetSession, age, totals
from tui.app.fleet.tree import build, grouped
from tui.core.a2a.task import RemoteTask
from tui.core.events import vocabulary as ev


def asked(session: FleetSession, at: float, request: str = "r1") -> None:
    session.apply(ev.TaskStarted(task_id="t1", context_id="c1", text="deploy"), at - 1)
    session.apply(ev.InputRequested(task_id="t1", request_id=request, prompt="Which env?",
                                    tool_name="ask"), at)


def test_a_question_moves_a_session_to_needs_you_and_its_answer_back_to_working() -> None:
    session = FleetSession("ses_a", "http://127.0.0.1:1")
    session.connection = "live"
    assert session.group == "done"
    assert session.apply(ev.TaskStarted(task_id="t1", context_id="c1", text="x"), 1.0)
    assert session.group == "working"
    assert session.apply(ev.InputRequested(task_id="t1", request_id="t1", prompt="Which?",
                                           tool_name="ask"), 2.0)
    assert session.group == "needs" and session.since == 2.0 and session.status == "asks"
    assert session.apply(ev.InputAnswered(task_id="t1", request_id="t1", answer="prod"), 3.0)
    assert session.group == "working"
    session.apply(ev.TaskEnded(task_id="t1", exit_status="ok", result="done", duration_ms=1,
                               turns=1, input_tokens=5, output_tokens=7, tool_calls=1,
                               shell_calls=0), 4.0)
    assert session.group == "done" and session.status == "idle · last ok"


def test_groups_come_in_screen_order_and_the_longest_wait_is_first() -> None:
    late, early, busy = (FleetSession(f"ses_{n}", "u") for n in ("late", "early", "busy"))
    asked(late, 20.0)
    asked(early, 10.0)
    busy.apply(ev.TaskStarted(task_id="t", context_id="c", text="work"), 5.0)
    groups = dict(grouped(build([late, busy, early])))
    assert [top.key for top in groups["needs"]] == ["ses_early", "ses_late"]
    assert [top.key for top in groups["working"]] == ["ses_busy"]
    assert [group for group, _ in grouped([])] == ["needs", "working", "done"]


def test_a_gone_session_is_done_whatever_it_was_doing() -> None:
    session = FleetSession("ses_g", "u")
    asked(session, 1.0)
    session.connection, session.why_gone = "gone", "the process is not running"
    assert session.regroup(2.0)
    assert session.group == "done" and session.status == "gone: the process is not running"


def test_totals_add_tokens_and_tool_calls_across_the_fleet() -> None:
    one, two = FleetSession("a", "u"), FleetSession("b", "u")
    for session, tokens in ((one, 10), (two, 32)):
        session.apply(ev.TurnCompleted(task_id="t", turn=0, input_tokens=tokens,
                                       output_tokens=2, decision="end_turn",
                                       stop_reason="end_turn", tool_name=None, model="m"))
        session.apply(ev.ToolCallFinished(task_id="t", turn=0, call_id="c", tool_name="bash",
                                          kind="shell", status="ok", duration_ms=1, input={},
                                          input_bytes=0, output="", output_bytes=0))
    asked(two, 3.0)
    t = totals([one, two])
    assert (t.sessions, t.needs, t.tokens_in, t.tokens_out, t.tool_calls) == (2, 1, 42, 4, 2)


def test_ages_read_at_a_glance() -> None:
    assert [age(s) for s in (4, 75, 7300, 90000)] == ["4 s", "1 min", "2 h", "1 d"]


def test_the_doors_answer_to_a_new_task_is_said_as_it_is() -> None:
    """spec/murmur-newest.md §5.4: a new task is answered SUBMITTED, or REJECTED with
    `task rejected: capsule is busy`; a rejected task never runs."""
    from tui.core.a2a.task import parse_task, rejection, taken_as

    def answered(state: str, message: str | None = None) -> RemoteTask:
        status: dict[str, object] = {"state": state}
        if message is not None:
            status["message"] = {"role": "ROLE_AGENT", "parts": [{"text": message}]}
        return parse_task({"task": {"id": "tsk_1", "contextId": "ctx_1", "status": status}},
                          "http://127.0.0.1:1")

    busy = answered("TASK_STATE_REJECTED", "task rejected: capsule is busy")
    assert rejection(busy) == "capsule is busy"
    assert rejection(answered("TASK_STATE_REJECTED")) == "the door gave no reason"
    assert rejection(answered("TASK_STATE_SUBMITTED")) is None
    assert taken_as(answered("TASK_STATE_SUBMITTED"), busy=True) == "queued"
    assert taken_as(answered("TASK_STATE_SUBMITTED"), busy=False) == "sent"
    assert taken_as(answered("TASK_STATE_WORKING"), busy=True) == "sent, running"
    assert taken_as(answered(""), busy=False) == "sent (the door named no state)"


def test_a_rows_queued_tasks_leave_its_count_as_they_start_and_its_rejected_ones_stay() -> None:
    session = FleetSession("ses_a", "http://127.0.0.1:1")
    session.apply(ev.TaskStarted(task_id="t1", context_id="c1", text="long"), 1.0)
    session.sent("t2", None, queued=True)
    session.sent("t3", "capsule is busy", queued=False)
    session.sent("t4", "capsule is busy", queued=False)
    assert session.sending == "1 queued · 2 rejected: capsule is busy"
    session.apply(ev.TaskStarted(task_id="t2", context_id="c1", text="next"), 2.0)
    assert session.sending == "2 rejected: capsule is busy" and session.queued == []
    assert [task_id for task_id, _ in session.rejected] == ["t3", "t4"]
