"""A formation member's calls and delegations wherever a session's events go besides the
screen: a line each in headless mode, the same events in `--json` (read back whole), and
through the door's frames to an attached screen — told at once, as murmur-tui's door tells an
event with no frame of its own, and rebuilt there as they were emitted."""

from __future__ import annotations

import io
import json

from tests.fakes import Collect
from tui.core.a2a.client import Card
from tui.core.door.frames import Broadcast, FrameSink, Subscriber
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.headless import HumanPrinter, JsonPrinter
from tui.core.remote.adapter import RemoteAdapter
from tui.core.remote.watch import to_stream_frame

SESSION = "ses_" + "a" * 32
TASK = "tsk_" + "1" * 32


def events() -> list[ev.Event]:
    return [
        ev.TaskStarted(task_id=TASK, context_id="ctx", text="Review it.", origin="peer",
                       caller_member="lead"),
        ev.MemberCallBusy(task_id=TASK, member="coder", attempt=1, retry_in_ms=1_120),
        ev.MemberCallStarted(task_id=TASK, call_id="mcl_1", member="coder",
                             task="Fix parse.py\nthen run the tests", callee_task_id="tsk_c",
                             turn=0),
        ev.MemberCallEnded(task_id=TASK, call_id="mcl_1", member="coder", status="completed",
                           duration_ms=12_300, answer="Fixed: 3 tests pass."),
        ev.MemberCallStarted(task_id=TASK, call_id="mcl_2", member="reviewer", task="Look",
                             callee_task_id="tsk_r", turn=0),
        ev.MemberCallEnded(task_id=TASK, call_id="mcl_2", member="reviewer",
                           status="unreachable", duration_ms=3_000,
                           reason="connection refused"),
        ev.DelegationStarted(task_id=TASK, delegation_id="dlg_1", capsule="fmt",
                             version="1.0.0", child_session_id="ses_child",
                             child_workdir=".murmur/children/fmt-0123"),
        ev.DelegationEnded(task_id=TASK, delegation_id="dlg_1", capsule="fmt",
                           version="1.0.0", child_session_id="ses_child", duration_ms=4_200,
                           outcome="timed_out", reason="no completion within 600 s"),
        ev.TaskContinued(task_id=TASK, continuation_number=1, member_calls=("mcl_1", "mcl_2"),
                         delegations=("dlg_1",), waited_ms=75_000, turns_remaining=4),
        ev.FormationEnded(formation_id="frm_" + "0" * 32),
    ]


def test_headless_prints_a_line_for_each() -> None:
    out, err = io.StringIO(), io.StringIO()
    stream = EventStream(SESSION, [HumanPrinter(out, err)])
    for event in events():
        stream.emit(event)
    assert out.getvalue().splitlines() == [
        f"task {TASK}: Review it.",
        "coder is busy: offered again in 1 s (attempt 1)",
        '→ call-member coder: "Fix parse.py\\nthen run the tests" · mcl_1 · its task tsk_c',
        "← coder answered · 12.3 s · answer 20 bytes · mcl_1",
        '→ call-member reviewer: "Look" · mcl_2 · its task tsk_r',
        "← reviewer: unreachable · 3.0 s · mcl_2 · connection refused",
        "⇢ delegated to fmt@1.0.0 as ses_child · dlg_1 · workdir .murmur/children/fmt-0123",
        "✗ delegated to fmt@1.0.0 as ses_child · no outcome within the deadline · 4.2 s · "
        "no completion within 600 s",
        "continuing with 2 member answer(s) and 1 delegation outcome(s) after 1:15",
        f"formation frm_{'0' * 32} ended: winding down",
    ]
    assert err.getvalue() == ""


def test_json_carries_each_whole_and_reads_back() -> None:
    out = io.StringIO()
    stream = EventStream(SESSION, [JsonPrinter(out)])
    sent = [stream.emit(event) for event in events()]
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["event"] for line in lines] == [type(event).__name__ for event in sent]
    assert lines[3]["answer"] == "Fixed: 3 tests pass." and lines[3]["status"] == "completed"
    assert lines[8]["member_calls"] == ["mcl_1", "mcl_2"]
    back = [ev.event_from_dict(line) for line in lines]
    assert [event.to_json() for event in back] == [event.to_json() for event in sent]


def test_an_attached_screen_gets_them_through_the_door() -> None:
    broadcast = Broadcast()
    connection = Subscriber(lambda: None)
    broadcast.subscribe(connection, None)
    door = EventStream(SESSION, [FrameSink(broadcast)])
    sent = [door.emit(event) for event in events()]
    frames = connection.drain()
    # each was told at once, in a frame of its own; the continuation in Murmur's status frame
    # ("continuing with 2 member answer(s)"), which carries it
    assert [frame.event for frame in frames] == [
        "status" if isinstance(event, ev.TaskContinued) else "tui" for event in sent]
    sink = Collect()
    card = Card("C", "lead", "0.1.0", "http://127.0.0.1:1", SESSION, (), True)
    adapter = RemoteAdapter(EventStream(SESSION, [sink]), card, workdir="/w")
    adapter.started()
    for frame in frames:
        adapter.frame(to_stream_frame(frame.event, json.dumps(frame.data),
                                      None if frame.id is None else str(frame.id)))
    got = [event for event in sink.events if not isinstance(event, ev.SessionStarted)]
    # as emitted, with the session's own times (the attached stream numbers them anew)
    assert [_unnumbered(event) for event in got] == [_unnumbered(event) for event in sent]
    assert isinstance(got[-2], ev.TaskContinued) and got[-2].member_calls == ("mcl_1", "mcl_2")


def _unnumbered(event: ev.Event) -> str:
    data = json.loads(event.to_json())
    del data["seq"]
    return json.dumps(data)
