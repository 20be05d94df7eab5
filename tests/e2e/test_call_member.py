"""`call-member`, the task's continuation and `end-without-answer` (spec murmur-newest §7.5,
§9.1): a caller session built with a formation seat, its scripted driver calling a real callee
session served on loopback (`launch --headless --serve`), the answer travelling back into the
caller's next turn; a busy callee re-offered, a callee killed mid-call, a deadline passed; and
a task a member sent ended with no answer."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import write_capsule
from tests.conftest import CapsuleFactory
from tests.fakes import Collect
from tests.responses import call_response, text_response
from tests.served import SLEEP, Served, serve, served
from tests.waits import block_until
from tui.core import ids
from tui.core.a2a.task import parse_task
from tui.core.door.frames import Broadcast, FrameSink, Subscriber
from tui.core.events import vocabulary as ev
from tui.core.formation.seat import Callee, Seat
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule
from tui.core.text.fence import fence

__all__ = ["served"]  # the fixture: real served sessions, killed after the test

ACCEPTS = "exports:\n  peer_tasks:\n    accept: true\n"
LOCALHOST = "  network:\n    allow: [localhost]\n"
TOKEN = "mft1.eyJ0ZXN0IjoxfQ.c2lnbmVk"  # opaque here: the callee's door is public


def seat_for(*callees: tuple[str, str]) -> Seat:
    seat = Seat(ids.formation_id(), "lead", True, "a-verifying-key",
                tuple(Callee(name, TOKEN) for name, _ in callees))
    seat.know_urls(dict(callees))
    return seat


def caller(root: Path, responses: list[dict[str, Any]], *, network: str = LOCALHOST,
           lifecycle: dict[str, Any] | None = None) -> Path:
    return write_capsule(root, responses, name="lead", shell=(), capabilities=network,
                         driver_config={"requests_log": "requests.jsonl"},
                         lifecycle=lifecycle)


def run(root: Path, seat: Seat, task: str = "ask coder", *more: Any
        ) -> tuple[SessionResult, Collect]:
    sink = Collect()
    result = Session(load_capsule(root), LaunchOptions(task=task, seat=seat),
                     sinks=[sink, *more]).run()
    return result, sink


def in_thread(root: Path, seat: Seat) -> tuple[Session, Collect, list[SessionResult],
                                               threading.Thread]:
    """The caller's session running on its own thread: what it emits, and its result once
    the thread ends."""
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="ask", seat=seat), sinks=[sink])
    results: list[SessionResult] = []
    thread = threading.Thread(target=lambda: results.append(session.run()))
    thread.start()
    return session, sink, results, thread


def trace(result: SessionResult) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.paths.trace.read_text().splitlines()]


def of(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [line for line in lines if line["event_type"] == kind]


def requests(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "requests.jsonl").read_text().splitlines()]


def progress(sink: Collect) -> list[str]:
    return [event.text for event in sink.of(ev.Progress)]


CALL = call_response("call-member", {"member": "coder", "task": "write the poem"}, "c1",
                     "I'll ask coder.")
WAIT = text_response("coder has it; I'll answer when it does.")
QUOTE = text_response("coder said: {{member:coder}}")


def test_a_call_is_answered_and_the_task_continues_with_the_fenced_answer(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    callee = make_capsule([text_response("roses are red")], folder="coder",
                          extra=SLEEP + ACCEPTS)
    door = serve(callee)
    served.append(door)
    root = caller(murmur_home.parent / "lead", [CALL, WAIT, QUOTE])
    broadcast = Broadcast()  # what the caller's own door would stream
    result, sink = run(root, seat_for(("coder", door.url)), "ask coder", FrameSink(broadcast))

    assert (result.exit_status, result.result) == ("ok", "coder said: roses are red")
    assert progress(sink) == ["waiting on call-member: 1 call(s) outstanding"]
    assert len(sink.of(ev.TaskContinued)) == 1  # "continuing with …": its own event
    said = [frame.data["status"]["message"] for frame in broadcast.subscribe(
        Subscriber(lambda: None), 0) if frame.event == "status"]
    assert said == ["inference turn 1", "inference turn 2",
                    "waiting on call-member: 1 call(s) outstanding",
                    "continuing with 1 member answer(s)", "inference turn 3", "session ended"]
    # the tool answered at once, in Murmur's words, with the call's id and the callee's task
    [finished] = [e for e in sink.of(ev.ToolCallFinished) if e.tool_name == "call-member"]
    summary, data = finished.output.split("\n")
    started = json.loads(data)
    assert (summary, finished.status, finished.kind) == ("Called coder: started", "ok",
                                                         "runtime")
    assert started["call_id"].startswith("mcl_") and started["member"] == "coder"
    assert started["status"] == "started" and started["task_id"]
    # the callee ran it as a peer's task
    done = door.until(started["task_id"], "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"][0]["text"] == "roses are red"
    # the third model call was sent one user message of the answer, fenced member:coder
    last = requests(root)[2]["messages"][-1]
    assert last["role"] == "user"
    assert last["content"] == [{"type": "text", "text": fence("member:coder", "roses are red")}]
    assert last["content"][0]["text"] == ("<untrusted-content source=member:coder>\n"
                                          "roses are red\n</untrusted-content>")
    lines = trace(result)
    [start] = of(lines, "member_call_start")
    assert (start["call_id"], start["member"], start["member_task_id"], start["turn"]) == (
        started["call_id"], "coder", started["task_id"], 0)
    [ended] = of(lines, "member_call")
    assert (ended["call_id"], ended["status"], ended["answer_bytes"]) == (
        started["call_id"], "completed", len(b"roses are red"))
    [continued] = of(lines, "task_continued")
    assert continued["continuation_number"] == 1
    assert continued["member_calls"] == [started["call_id"]] and continued["delegations"] == []
    assert isinstance(continued["waited_ms"], int) and continued["waited_ms"] >= 0
    assert continued["turns_remaining"] == 10 - 2
    order = [line["event_type"] for line in lines]
    assert order.index("member_call_start") < order.index("member_call") < \
        order.index("task_continued") < order.index("task_end")
    assert of(lines, "task_end")[0]["exit_status"] == "ok"
    assert "roses are red" not in json.dumps(of(lines, "member_call"))  # meta: no content
    # the edge's token reached the callee's door and nothing else
    assert TOKEN not in result.paths.trace.read_text()
    assert not any(TOKEN in event.to_json() for event in sink.events)
    assert TOKEN not in (root / "requests.jsonl").read_text()


def test_without_localhost_in_network_allow_every_call_fails_and_start_warns(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = caller(murmur_home.parent / "lead", [CALL, text_response("no luck")], network="")
    result, sink = run(root, seat_for(("coder", "http://127.0.0.1:9")))
    assert [(w.code, w.text) for w in sink.of(ev.Warning) if w.code == "W-RUN-008"] == [
        ("W-RUN-008", "call-member: capabilities.network.allow does not include localhost, "
                      "so no member's door can be reached and every call fails")]
    [finished] = [e for e in sink.of(ev.ToolCallFinished) if e.tool_name == "call-member"]
    assert finished.status == "error"
    assert finished.output == ("Called coder: failed\ncapabilities.network.allow does not "
                               "include localhost, so no member's door can be reached "
                               "(W-RUN-008)")
    assert result.exit_status == "ok" and progress(sink) == []  # nothing was out
    assert of(trace(result), "member_call_start") == []


def test_the_tools_exist_only_for_a_member_and_call_member_only_with_callees(
        murmur_home: Path) -> None:
    root = caller(murmur_home.parent / "lead", [text_response("hi")])
    alone = Session(load_capsule(root), LaunchOptions(task="t"))
    member = Session(load_capsule(root), LaunchOptions(
        task="t", seat=Seat(ids.formation_id(), "coder", False, "k")))
    calling = Session(load_capsule(root), LaunchOptions(
        task="t", seat=seat_for(("coder", "http://127.0.0.1:9"), ("reviewer", "x"))))
    try:
        assert [s.name for s in alone.tools.specs()] == []
        assert [s.name for s in member.tools.specs()] == ["end-without-answer"]
        specs = {s.name: s for s in calling.tools.specs()}
        assert sorted(specs) == ["call-member", "end-without-answer"]
        schema = specs["call-member"].parameters
        assert schema["properties"]["member"]["enum"] == ["coder", "reviewer"]  # roster order
        assert schema["required"] == ["member", "task"]
        assert specs["end-without-answer"].parameters["required"] == ["reason"]
    finally:
        for session in (alone, member, calling):
            session.close_unstarted()


def test_a_busy_callee_is_offered_the_task_again_with_a_doubling_wait(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    # the callee runs a long task and holds another in its one queue place: busy
    callee = make_capsule([call_response("bash", {"command": "sleep 60"}),
                           text_response("the answer, at last")], folder="coder",
                          lifecycle={"task_acceptance": "queue", "after_task": "sleep",
                                     "queue_depth": 1}, extra=ACCEPTS)
    door = serve(callee)
    served.append(door)
    running = door.send("keep busy")
    door.until(running["id"], "TASK_STATE_WORKING")
    waiting = door.send("hold the queue")
    root = caller(murmur_home.parent / "lead", [CALL, WAIT, QUOTE])
    _session, sink, results, thread = in_thread(root, seat_for(("coder", door.url)))
    try:
        block_until(lambda: len(sink.of(ev.MemberCallBusy)) >= 2,
                    what="the callee refused the call twice")
        # a place in the queue frees: the next offer is taken; then the long task ends
        door.rpc("CancelTask", {"id": waiting["id"]})
        block_until(lambda: sink.of(ev.MemberCallStarted), what="the call was taken")
        door.rpc("CancelTask", {"id": running["id"]})
    finally:
        thread.join(120)
    [result] = results
    [finished] = [e for e in sink.of(ev.ToolCallFinished) if e.tool_name == "call-member"]
    summary, data = finished.output.split("\n")
    assert (summary, finished.status) == ("Called coder: busy", "ok")
    assert json.loads(data)["status"] == "busy" and json.loads(data)["task_id"] is None
    lines = trace(result)
    busy = of(lines, "member_call_busy")
    # refused at once, then after ~1 s: each refusal waits twice as long, with some jitter
    assert [(line["member"], line["attempt"]) for line in busy][:2] == [("coder", 1),
                                                                        ("coder", 2)]
    for line, base in zip(busy, (1000, 2000, 4000, 8000), strict=False):
        assert base <= line["retry_in_ms"] <= base + 250
    [start] = of(lines, "member_call_start")
    assert start["member"] == "coder" and start["call_id"] == json.loads(data)["call_id"]
    assert of(lines, "member_call")[0]["status"] == "completed"
    assert result.result == "coder said: the answer, at last"


def test_a_callee_killed_mid_call_is_unreachable_and_the_caller_still_ends(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served],
        tmp_path: Path) -> None:
    started = tmp_path / "started"
    callee = make_capsule([call_response("bash", {"command": f"touch {started}; sleep 60"})],
                          folder="coder", extra=SLEEP + ACCEPTS)
    door = serve(callee)
    served.append(door)
    root = caller(murmur_home.parent / "lead", [CALL, WAIT, QUOTE])
    _session, _sink, results, thread = in_thread(root, seat_for(("coder", door.url)))
    block_until(started.exists, what="the callee began its task")
    door.process.send_signal(signal.SIGKILL)
    thread.join(120)
    [result] = results
    [ended] = of(trace(result), "member_call")
    assert ended["status"] == "unreachable" and "cannot reach the door" in ended["reason"]
    assert result.exit_status == "ok"
    text = requests(root)[2]["messages"][-1]["content"][0]["text"]
    assert text.startswith("coder did not answer (call-member mcl_")
    assert ": unreachable): cannot reach the door at " in text
    assert result.result == "coder said: (no answer from coder)"


def test_past_the_deadline_a_call_is_timed_out(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served],
        monkeypatch: pytest.MonkeyPatch) -> None:
    callee = make_capsule([call_response("bash", {"command": "sleep 60"})], folder="coder",
                          extra=SLEEP + ACCEPTS)
    door = serve(callee)
    served.append(door)
    monkeypatch.setenv("MURMUR_DELEGATION_TIMEOUT_SECS", "1.5")
    root = caller(murmur_home.parent / "lead", [CALL, WAIT, QUOTE],
                  lifecycle={"delegation_deadline_secs": 600})
    result, _ = run(root, seat_for(("coder", door.url)))
    [ended] = of(trace(result), "member_call")
    assert ended["status"] == "timed_out"
    assert ended["reason"] == ("no answer within 1.5 s (lifecycle.delegation_deadline_secs, "
                               "or MURMUR_DELEGATION_TIMEOUT_SECS)")
    task_id = of(trace(result), "member_call_start")[0]["member_task_id"]
    door.until(task_id, "TASK_STATE_CANCELED")  # the callee's task is not left running
    assert result.exit_status == "ok"


def test_a_task_that_ends_with_a_call_out_abandons_it(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    callee = make_capsule([call_response("bash", {"command": "sleep 60"})], folder="coder",
                          extra=SLEEP + ACCEPTS)
    door = serve(callee)
    served.append(door)
    # max_turns 2: the turn that ends is the last, so the task does not wait
    root = write_capsule(murmur_home.parent / "lead", [CALL, WAIT], name="lead", shell=(),
                         capabilities=LOCALHOST, max_turns=2)
    result, sink = run(root, seat_for(("coder", door.url)))
    assert result.result == WAIT["content"][0]["text"]
    [ended] = of(trace(result), "member_call")
    assert ended["status"] == "abandoned"
    assert progress(sink) == []
    task_id = of(trace(result), "member_call_start")[0]["member_task_id"]
    door.until(task_id, "TASK_STATE_CANCELED")


# -- end-without-answer ---------------------------------------------------------------------------
END = call_response("end-without-answer", {"reason": "the poem needs a topic"}, "e1")


class DoorView:
    """The door's task table following the session's events, as a served session's door does
    (what `GetTask` answers)."""

    def __init__(self) -> None:
        from tui.core.door.tasks import TaskTable

        self.table = TaskTable()

    def emit(self, event: ev.Event) -> None:
        self.table.apply(event)


def member_session(root: Path, caller_member: str | None,
                   sinks: list[Any]) -> Session:
    session = Session(load_capsule(root), LaunchOptions(
        seat=Seat(ids.formation_id(), "coder", False, "a-verifying-key")), sinks=sinks)
    session.take_first("write a poem", origin="peer", caller_member=caller_member)
    return session


def test_end_without_answer_ends_a_members_task_with_no_answer(murmur_home: Path) -> None:
    root = write_capsule(murmur_home.parent / "coder", [END, text_response("never read")],
                         name="coder", shell=())
    sink, door = Collect(), DoorView()
    result = member_session(root, "lead", [sink, door]).run()

    assert (result.exit_status, result.result) == ("no_answer",
                                                   "no answer: the poem needs a topic")
    assert result.paths.result.read_text() == "no answer: the poem needs a topic"
    lines = trace(result)
    assert of(lines, "task_start")[0]["task_id"] == of(lines, "task_end")[0]["task_id"]
    assert of(lines, "task_end")[0]["exit_status"] == "no_answer"
    assert of(lines, "task_failed") == []
    assert len(of(lines, "inference")) == 1  # the task ended with that turn
    [finished] = [e for e in sink.of(ev.ToolCallFinished)
                  if e.tool_name == "end-without-answer"]
    assert finished.output == ("The task ends without an answer when this turn ends; lead "
                               "reads: no answer: the poem needs a topic")
    # what the door answers GetTask with: failed, the reason as its message, noAnswer
    [task] = [door.table.get(e.task_id) for e in sink.of(ev.TaskStarted)]
    assert task is not None
    wire = task.wire()
    assert wire["status"]["state"] == "TASK_STATE_FAILED"
    assert wire["status"]["message"]["parts"][0]["text"] == "the poem needs a topic"
    assert wire["metadata"] == {"murmur": {"noAnswer": True}}
    # a caller's poll reads it so: its call ends no_answer
    read = parse_task({"task": wire}, "http://127.0.0.1:1")
    assert (read.state, read.no_answer, read.message) == ("failed", True,
                                                          "the poem needs a topic")


def test_end_without_answer_in_a_task_no_member_sent_fails_and_the_task_goes_on(
        murmur_home: Path) -> None:
    root = write_capsule(murmur_home.parent / "coder",
                         [END, text_response("then here is the poem")], name="coder",
                         shell=())
    sink, door = Collect(), DoorView()
    result = member_session(root, None, [sink, door]).run()
    assert (result.exit_status, result.result) == ("ok", "then here is the poem")
    [finished] = [e for e in sink.of(ev.ToolCallFinished)
                  if e.tool_name == "end-without-answer"]
    assert finished.status == "error"
    assert finished.output == ("error: end-without-answer ends only a task another formation "
                               "member sent with call-member; this task was not sent by a "
                               "member, so answer it (or say why you cannot) in your reply")
    [task] = [door.table.get(e.task_id) for e in sink.of(ev.TaskStarted)]
    assert task is not None and "metadata" not in task.wire()


def test_the_roster_scaffolds_lead_calls_its_worker_and_answers_with_what_it_said(
        murmur_home: Path, served: list[Served], tmp_path: Path) -> None:
    from tests.conftest import run_cli
    from tui.core.running.tokens import token_at

    made = run_cli("new", "--roster", "crew", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    worker = serve(tmp_path / "crew" / "worker")
    served.append(worker)
    host, _, port = worker.url.removeprefix("http://").rpartition(":")
    # the worker's door is authenticated: until the launcher mints the formation's tokens,
    # the lead is handed the worker's own operator token for the edge
    token = token_at(murmur_home, host, int(port))
    assert token
    seat = Seat(ids.formation_id(), "lead", True, "a-verifying-key", (Callee("worker", token),))
    seat.know_urls({"worker": worker.url})
    sink = Collect()
    result = Session(load_capsule(tmp_path / "crew" / "lead"), LaunchOptions(seat=seat),
                     sinks=[sink]).run()  # the task: lead's task.md
    assert (result.exit_status, result.result) == (
        "ok", "worker answered: Hello from worker, the member of crew that lead calls.")
    assert progress(sink) == ["waiting on call-member: 1 call(s) outstanding"]
    assert len(sink.of(ev.TaskContinued)) == 1  # "continuing with …": its own event
    assert [line["status"] for line in of(trace(result), "member_call")] == ["completed"]


def test_a_task_canceled_while_it_waits_ends_and_abandons_its_call(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    callee = make_capsule([call_response("bash", {"command": "sleep 60"})], folder="coder",
                          extra=SLEEP + ACCEPTS)
    door = serve(callee)
    served.append(door)
    root = caller(murmur_home.parent / "lead", [CALL, WAIT, QUOTE])
    session, sink, results, thread = in_thread(root, seat_for(("coder", door.url)))
    try:
        block_until(lambda: "waiting on call-member: 1 call(s) outstanding" in progress(sink),
                    what="the task waited on its call")
        [started] = sink.of(ev.TaskStarted)
        assert session.cancel_task(started.task_id) == "running"
    finally:
        thread.join(120)
    [result] = results
    assert result.exit_status == "canceled"
    lines = trace(result)
    assert of(lines, "task_canceled")[0]["phase"] == "member_call"
    assert [line["status"] for line in of(lines, "member_call")] == ["abandoned"]
    assert of(lines, "task_continued") == []
    door.until(of(lines, "member_call_start")[0]["member_task_id"], "TASK_STATE_CANCELED")
