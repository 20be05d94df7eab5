"""The door's frames (streaming-protocol.md): each session event as Murmur's frame, the SSE
encoding, the replay buffer of 512 with `gap`, and a subscriber's queue of 128 with `lagged`.
Real EventStream, FrameSink, Broadcast and Subscriber; no HTTP here (test_server_http.py)."""

from __future__ import annotations

import json
import secrets
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.door.frames import (
    QUEUE_FRAMES,
    REPLAY_FRAMES,
    Broadcast,
    DoorFrame,
    FrameSink,
    Subscriber,
)
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.text.secrets import remember

T = "tsk_1"


def session() -> tuple[EventStream, Broadcast, Subscriber]:
    broadcast = Broadcast()
    stream = EventStream("ses_frames", sinks=[FrameSink(broadcast)])
    subscriber = Subscriber(lambda: None)
    broadcast.subscribe(subscriber, None)
    return stream, broadcast, subscriber


def finished(**fields: Any) -> ev.ToolCallFinished:
    base: dict[str, Any] = dict(task_id=T, turn=0, call_id="call_1", tool_name="bash",
                                kind="shell", status="ok", duration_ms=12, input={},
                                input_bytes=2, output="hi\n", output_bytes=3)
    return ev.ToolCallFinished(**{**base, **fields})


def ended(exit_status: Any, result: str, task_id: str = T) -> ev.TaskEnded:
    return ev.TaskEnded(task_id=task_id, exit_status=exit_status, result=result, duration_ms=5,
                        turns=1, input_tokens=1, output_tokens=1, tool_calls=1, shell_calls=1)


def test_each_event_kind_becomes_murmurs_frame_in_order() -> None:
    stream, broadcast, subscriber = session()
    stream.emit(ev.TaskStarted(task_id=T, context_id="ctx_1", text="go"))
    stream.emit(ev.TurnStarted(task_id=T, turn=0, max_turns=10, input_tokens=5))
    stream.emit(ev.ThinkingDelta(task_id=T, turn=0, text="hmm"))
    stream.emit(ev.TextDelta(task_id=T, turn=0, text="Hello"))
    stream.emit(ev.TextDelta(task_id=T, turn=0, text=""))  # nothing to say: no frame
    stream.emit(ev.ToolCallComposing(task_id=T, turn=0, call_id="call_1", tool_name="bash",
                                     input_bytes=0))
    stream.emit(ev.ToolCallComposing(task_id=T, turn=0, call_id="call_1", tool_name="bash",
                                     input_bytes=9))
    stream.emit(ev.ToolCallStarted(task_id=T, turn=0, call_id="call_1", tool_name="bash",
                                   kind="shell", input={"command": "echo hi"}))
    stream.emit(ev.ShellExecuted(task_id=T, turn=0, call_id="call_1", binary="bash",
                                 command="echo hi", exit_code=3, stdout="hi\n", stderr="",
                                 stdout_bytes=3, stderr_bytes=0, duration_ms=12,
                                 truncated=False))
    stream.emit(finished(status="error"))
    stream.emit(ev.InputRequested(task_id=T, request_id="r1", prompt="Which env?",
                                  tool_name="ask"))
    stream.emit(ev.InputAnswered(task_id=T, request_id="r1", answer="staging"))
    stream.emit(ev.TurnCompleted(task_id=T, turn=0, input_tokens=5, output_tokens=2,
                                 decision="end_turn", stop_reason="end_turn", tool_name=None,
                                 model="m"))
    stream.emit(ended("ok", "done"))
    drained = subscriber.drain()
    frames = [frame for frame in drained if frame.id is not None]
    # murmur-tui's own unnumbered `tui` frame tells at once each event that has no frame
    # of its own (told.py)
    assert [(frame.event, frame.data["tui"]["events"][0]["event"]) for frame in drained
            if frame.id is None] == [("tui", "TaskStarted"), ("tui", "ToolCallStarted"),
                                     ("tui", "ShellExecuted")]
    got = [(frame.id, frame.event, {k: v for k, v in frame.data.items() if k != "tui"})
           for frame in frames]
    # a task's start writes no frame of its own: its first is its first turn's `working`
    # (streaming-protocol.md "status"); the driver's start of a call is `tool-call-started`,
    # each larger size `tool-call-progress`, and the dispatch that follows writes no numbered
    # frame (murmur-newest.md §5.5, SEV)
    assert got == [
        (1, "status", {"id": T, "context_id": "ctx_1", "status": {
            "state": "working", "message": "inference turn 1"}, "final": False}),
        (2, "thinking", {"id": T, "text": "hmm", "final": False}),
        (3, "text", {"id": T, "text": "Hello", "final": False}),
        (4, "tool-call-started", {"id": T, "tool_call_id": "call_1", "tool_name": "bash"}),
        (5, "tool-call-progress", {"id": T, "tool_call_id": "call_1", "input_bytes": 9}),
        (6, "artifact", {"id": T, "artifact": {
            "tool_name": "bash", "content": "hi\n", "fence_source": "tool:bash",
            "tool_call_id": "call_1", "is_error": True, "duration_ms": 12, "exit_code": 3,
            "truncated": False}}),
        # Murmur's input-required frame carries no context_id
        (7, "status", {"id": T, "status": {"state": "input-required",
                                           "message": "Which env?"}, "final": False}),
        (8, "status", {"id": T, "status": {"state": "working", "message": "resumed"},
                       "final": False}),
        (9, "text", {"id": T, "text": "", "final": True}),
        (10, "status", {"id": T, "context_id": "ctx_1", "status": {
            "state": "completed", "message": "session ended", "response": "done"},
            "final": True}),
    ]
    # murmur-tui's `tui` key tells the session's own events (told.py), each once, in order
    told = [[event["event"] for event in frame.data.get("tui", {}).get("events", [])]
            for frame in frames]
    assert told == [["TaskStarted", "TurnStarted"], [], [], ["ToolCallComposing"],
                    ["ToolCallComposing"],
                    ["ToolCallStarted", "ShellExecuted", "ToolCallFinished"], ["InputRequested"],
                    ["InputAnswered"], ["TurnCompleted"], ["TaskEnded"]]
    started = frames[5].data["tui"]["events"][0]
    assert (started["input"], started["kind"], started["seq"]) == (
        {"command": "echo hi"}, "shell", 8)
    assert "output" not in frames[5].data["tui"]["events"][2]  # the artifact's content has it
    assert [tuple(frame.data) for frame in broadcast._buffer][-1] == (
        "id", "context_id", "status", "final", "tui")  # keys in Murmur's order, then ours


def test_a_skill_artifact_has_no_fence_and_no_exit_code() -> None:
    stream, _, subscriber = session()
    stream.emit(finished(kind="skill", tool_name="notes", call_id=None, truncated=True))
    (frame,) = subscriber.drain()
    assert frame.data["artifact"] == {
        "tool_name": "notes", "content": "hi\n", "fence_source": None, "tool_call_id": None,
        "is_error": False, "duration_ms": 12, "exit_code": None, "truncated": True}


def test_final_states_and_messages_follow_murmurs_words() -> None:
    stream, _, subscriber = session()
    for n, (status, result) in enumerate([
            ("canceled", ""), ("error", "error: input-timeout after 60 s"),
            ("max_turns", "error: the model used its 10 turns")]):
        stream.emit(ended(status, result, f"tsk_{n}"))
    states = [(f.data["status"]["state"], f.data["status"]["message"],
               "response" in f.data["status"], f.final) for f in subscriber.drain()]
    assert states == [("canceled", "task canceled", False, True),
                      ("failed", "input-timeout", False, True),
                      ("failed", "the model used its 10 turns", False, True)]


def test_each_attempt_of_a_task_ends_in_exactly_one_final_status() -> None:
    """streaming-protocol.md "status": every attempt ends in one `final:true` status; a task
    the door ended before it started (`task canceled before it started`, numbered) writes no
    second one when the session gets to it, and a reopened task's new attempt ends again."""
    broadcast = Broadcast()
    sink = FrameSink(broadcast)
    stream = EventStream("ses_frames", sinks=[sink])
    subscriber = Subscriber(lambda: None)
    broadcast.subscribe(subscriber, None)
    assert sink.final("tsk_q", "canceled", "task canceled before it started", "ctx_q")
    assert not sink.final("tsk_q", "canceled", "task canceled before it started", "ctx_q")
    stream.emit(ended("canceled", "", "tsk_q"))  # the session's own word comes too late
    stream.emit(ended("ok", "one"))
    stream.emit(ended("ok", "one again"))  # not a new attempt: no second final
    stream.emit(ev.TaskReopened(task_id=T, hook_name="judge", reason="try again",
                                reopen_number=1, turns_remaining=3))
    stream.emit(ended("ok", "two"))
    finals = [(f.id, f.data["id"], f.data["status"]["message"], f.data["status"].get(
        "response")) for f in subscriber.drain() if f.final]
    assert finals == [(1, "tsk_q", "task canceled before it started", None),
                      (2, T, "session ended", "one"), (3, T, "session ended", "two")]


def test_only_a_call_the_driver_announced_has_call_frames() -> None:
    """`tool-call-started` / `tool-call-progress` come from the session driver's own stream
    (murmur-newest.md §5.5: "only from the session driver's turn"): a driver that never
    streams calls gets none, and no frame names a call by a null id."""
    stream, _, subscriber = session()
    stream.emit(ev.ToolCallStarted(task_id=T, turn=0, call_id=None, tool_name="bash",
                                   kind="shell", input={}))
    stream.emit(ev.ToolCallStarted(task_id=T, turn=0, call_id="call_9", tool_name="bash",
                                   kind="shell", input={}))
    stream.emit(ev.ToolCallComposing(task_id=T, turn=0, call_id="", tool_name="bash",
                                     input_bytes=0))
    # murmur-tui's own unnumbered `tui` frames tell each event at once; Murmur's frames none
    assert [(frame.id, frame.event) for frame in subscriber.drain()] == [
        (None, "tui"), (None, "tui"), (None, "tui")]


def test_session_end_closes_every_stream_with_capsule_closed() -> None:
    stream, broadcast, subscriber = session()
    stream.emit(ev.SessionEnded(exit_status="ok", duration_ms=1, total_turns=0,
                                total_input_tokens=0, total_output_tokens=0,
                                total_tool_calls=0, total_shell_calls=0))
    assert [f.event for f in subscriber.drain()] == ["capsule-closed"] and subscriber.closed
    late = Subscriber(lambda: None)
    assert [f.event for f in broadcast.subscribe(late, 0)] == ["capsule-closed"]
    assert late.closed and broadcast.subscribers == 0


# -- SSE ----------------------------------------------------------------------------------------
def sse_fields(raw: bytes) -> list[tuple[str, str]]:
    text = raw.decode()
    assert text.endswith("\n\n") and "\r" not in text
    return [tuple(line.split(": ", 1)) for line in text[:-2].split("\n")]  # type: ignore[misc]


def test_a_frame_is_id_event_and_one_data_line() -> None:
    assert DoorFrame("text", {"id": T, "text": "a", "final": False}, 42).sse() == (
        b'id: 42\nevent: text\ndata: {"id":"tsk_1","text":"a","final":false}\n\n')
    assert DoorFrame("lagged", {"missed": 3}).sse() == b'event: lagged\ndata: {"missed":3}\n\n'


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_no_text_a_model_writes_breaks_out_of_its_data_line(text: str) -> None:
    raw = DoorFrame("text", {"id": T, "text": text, "final": False}, 7).sse()
    fields = sse_fields(raw)
    assert [name for name, _ in fields] == ["id", "event", "data"]
    assert json.loads(fields[2][1])["text"] == text
    assert not any(ord(char) < 0x20 for char in raw.decode()[:-2].replace("\n", ""))


def test_injected_frames_and_escape_sequences_stay_inside_the_text() -> None:
    stream, _, subscriber = session()
    evil = "ok\n\nid: 999\nevent: status\ndata: {\"final\":true}\r\n\x1b[2J\x1b]0;pwn\x07\x00"
    stream.emit(ev.TextDelta(task_id=T, turn=0, text=evil))
    raw = subscriber.drain()[0].sse()
    assert raw.count(b"\n") == 4 and b"\r" not in raw and b"\x1b" not in raw \
        and b"\x07" not in raw and b"\x00" not in raw
    assert json.loads(sse_fields(raw)[2][1])["text"] == evil


def test_a_key_never_reaches_a_frame() -> None:
    key = "sk-" + secrets.token_urlsafe(24)
    remember(key)
    stream, _, subscriber = session()
    stream.emit(ev.TextDelta(task_id=T, turn=0, text=f"the key is {key}"))
    stream.emit(finished(output=f"export OPENAI_API_KEY={key}\n"))
    stream.emit(ev.InputRequested(task_id=T, request_id="r", prompt=f"is {key} right?",
                                  tool_name="ask"))
    stream.emit(ended("ok", f"used {key}"))
    wire = b"".join(frame.sse() for frame in subscriber.drain())
    assert key[3:].encode() not in wire
    # the text, the output, the question and the response — the last two twice: in the frame
    # and in its event under `tui` (told.py; the output is not repeated there)
    assert wire.count(b"[redacted]") == 6


# -- the replay buffer and the queues -----------------------------------------------------------
def publish(broadcast: Broadcast, count: int) -> None:
    for n in range(count):
        broadcast.publish("text", {"id": T, "text": str(n), "final": False})


def test_replay_from_a_last_event_id_inside_the_buffer_is_exact() -> None:
    broadcast = Broadcast()
    publish(broadcast, 20)
    replay = broadcast.subscribe(Subscriber(lambda: None), 15)
    assert [frame.id for frame in replay] == [16, 17, 18, 19, 20]
    assert broadcast.subscribe(Subscriber(lambda: None), 20) == []
    assert [f.id for f in broadcast.subscribe(Subscriber(lambda: None), 0)] == list(range(1, 21))


def test_a_last_event_id_older_than_the_buffer_gets_gap_then_all_it_holds() -> None:
    broadcast = Broadcast()
    publish(broadcast, REPLAY_FRAMES + 100)
    replay = broadcast.subscribe(Subscriber(lambda: None), 10)
    assert (replay[0].event, replay[0].data, replay[0].id) == (
        "gap", {"first_available_id": 101}, None)
    assert [frame.id for frame in replay[1:]] == list(range(101, REPLAY_FRAMES + 101))
    # exactly at the edge: the next frame it needs is the oldest held, so no gap
    edge = broadcast.subscribe(Subscriber(lambda: None), 100)
    assert edge[0].id == 101 and len(edge) == REPLAY_FRAMES


def test_a_last_event_id_from_the_future_gets_gap() -> None:
    broadcast = Broadcast()
    publish(broadcast, 5)
    replay = broadcast.subscribe(Subscriber(lambda: None), 900)
    assert replay[0].event == "gap" and [f.id for f in replay[1:]] == [1, 2, 3, 4, 5]


def test_nothing_is_lost_or_doubled_between_replay_and_live() -> None:
    broadcast = Broadcast()
    publish(broadcast, 3)
    subscriber = Subscriber(lambda: None)
    replay = broadcast.subscribe(subscriber, 1)
    publish(broadcast, 2)
    assert [f.id for f in [*replay, *subscriber.drain()]] == [2, 3, 4, 5]


def test_a_slow_subscriber_loses_the_oldest_and_is_told_with_lagged() -> None:
    broadcast = Broadcast()
    woken: list[int] = []
    slow = Subscriber(lambda: woken.append(1))
    fast = Subscriber(lambda: None)
    broadcast.subscribe(slow, None)
    broadcast.subscribe(fast, None)
    seen: list[int | None] = []
    for _ in range(10):  # the fast one drains as it goes; the slow one never does
        publish(broadcast, 100)
        seen += [frame.id for frame in fast.drain()]
    assert seen == list(range(1, 1001)) and len(woken) == 1000
    drained = slow.drain()
    assert (drained[0].event, drained[0].data) == ("lagged", {"missed": 1000 - QUEUE_FRAMES})
    assert [f.id for f in drained[1:]] == list(range(1000 - QUEUE_FRAMES + 1, 1001))
    publish(broadcast, 1)
    assert [f.event for f in slow.drain()] == ["text"]  # lagged once, for what it lost


def test_a_subscriber_that_never_reads_never_holds_the_session() -> None:
    broadcast = Broadcast()
    stuck = Subscriber(lambda: None)
    broadcast.subscribe(stuck, None)
    stream = EventStream("s", sinks=[FrameSink(broadcast)])
    for n in range(5000):
        stream.emit(ev.TextDelta(task_id=T, turn=0, text=f"t{n}"))
    assert len(stuck._queue) == QUEUE_FRAMES and len(broadcast._buffer) == REPLAY_FRAMES
    broadcast.unsubscribe(stuck)
    assert broadcast.subscribers == 0
