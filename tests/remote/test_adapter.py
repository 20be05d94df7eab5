"""Frames to events: each frame type, a whole attached session through the fake door, and
hostile frames (bad JSON, huge lines, escape sequences, a key echoed back)."""

from __future__ import annotations

import io
import json
import threading

from tests.door_fake import CONTEXT, SESSION, FakeDoor, ack, closed, frame, raw, serving, status
from tests.fakes import Collect
from tui.core.a2a.client import Card, DoorClient
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.events.wording import LineKind, Said, said
from tui.core.headless import HumanPrinter
from tui.core.remote.adapter import RemoteAdapter
from tui.core.remote.watch import StreamFrame, Watcher, WatchState, to_stream_frame
from tui.core.text.secrets import remember

T1 = "tsk_" + "1" * 32
CARD = Card("C", "fake-capsule", "0.1.0", "http://127.0.0.1:1", SESSION, (), True)
SHELL = ("<untrusted-content source=tool:bash>\n$ echo hello\nExit code: 3\nStdout:\nhello\n\n"
         "Stderr:\noops\n</untrusted-content>")


def adapter() -> tuple[RemoteAdapter, Collect]:
    sink = Collect()
    return RemoteAdapter(EventStream(SESSION, [sink]), CARD, workdir="/w"), sink


def feed(target: RemoteAdapter, event: str, data: object, frame_id: int | None = 1) -> None:
    text = data if isinstance(data, str) else json.dumps(data)
    target.frame(to_stream_frame(event, text, None if frame_id is None else str(frame_id)))


def st(state: str, message: str, *, context: str | None = CONTEXT, final: bool = False,
       response: str | None = None) -> dict[str, object]:
    body: dict[str, object] = {"id": T1, "status": {"state": state, "message": message},
                               "final": final}
    if context:
        body["context_id"] = context
    if response is not None:
        body["status"]["response"] = response  # type: ignore[index]
    return body


def test_a_task_frame_by_frame() -> None:
    target, sink = adapter()
    started = target.started()
    assert (started.capsule_name, started.capsule_version, started.session_id,
            started.model, started.workdir) == ("fake-capsule", "0.1.0", SESSION, "", "/w")
    feed(target, "status", st("working", "inference turn 1"))
    feed(target, "thinking", {"id": T1, "text": "hmm", "final": False})
    feed(target, "text", {"id": T1, "text": "Hel", "final": False})
    feed(target, "text", {"id": T1, "text": "", "final": True})
    feed(target, "tool-call-started", {"id": T1, "tool_call_id": "c1", "tool_name": "bash"})
    feed(target, "tool-call-progress", {"id": T1, "tool_call_id": "c1", "input_bytes": 12})
    feed(target, "artifact", {"id": T1, "artifact": {
        "tool_name": "bash", "content": SHELL, "fence_source": "tool:bash",
        "tool_call_id": "c1", "is_error": False, "duration_ms": 12, "exit_code": 3,
        "truncated": False}})
    feed(target, "status", st("input-required", "Which env?", context=None))
    assert target.context_of(T1) == CONTEXT  # kept from the earlier frame
    target.note_answer(T1, "staging")
    feed(target, "status", st("working", "resumed", context=None))
    feed(target, "status", st("working", "inference turn 2"))
    feed(target, "text", {"id": T1, "text": "Done.", "final": True})  # the whole reply
    feed(target, "status", st("completed", "session ended", final=True, response="Done."))
    feed(target, "capsule-closed", {}, None)
    kinds = [type(e).__name__ for e in sink.events]
    # Murmur's tool-call frames are the driver writing the call; its artifact is the call
    # as a local session tells it: started, the command, finished
    assert kinds == ["SessionStarted", "TaskStarted", "TurnStarted", "ThinkingDelta",
                     "TextDelta", "ToolCallComposing", "ToolCallComposing", "ToolCallStarted",
                     "ShellExecuted", "ToolCallFinished", "InputRequested", "InputAnswered",
                     "TurnStarted", "TextDelta", "TaskEnded", "SessionEnded"]
    # no trace here: what the door did not send is said to be missing, never an empty {}
    started, finished = sink.of(ev.ToolCallStarted)[0], sink.of(ev.ToolCallFinished)[0]
    assert (started.kind, started.input_known, finished.input_known) == ("shell", False, False)
    assert said(started) == Said(LineKind.RUNNING, "→ bash (input not sent by the door)")
    assert said(finished) == Said(
        LineKind.SUCCESS, "✓ bash (input not sent by the door) · 12 ms · 111 B")
    assert sink.of(ev.TaskStarted)[0].context_id == CONTEXT
    assert [t.turn for t in sink.of(ev.TurnStarted)] == [0, 1]
    shell = sink.of(ev.ShellExecuted)[0]
    assert (shell.command, shell.exit_code, shell.stdout, shell.stderr) == (
        "echo hello", 3, "hello", "oops")
    asked = sink.of(ev.InputRequested)[0]
    assert (asked.request_id, asked.prompt) == (T1, "Which env?")
    assert said(asked) == Said(LineKind.QUESTION,
                               "? a tool (not named by the door) asks: Which env?")
    assert sink.of(ev.InputAnswered)[0].answer == "staging"
    ended = sink.of(ev.TaskEnded)[0]
    assert (ended.exit_status, ended.result, ended.turns, ended.tool_calls,
            ended.shell_calls) == ("ok", "Done.", 2, 1, 1)
    assert sink.of(ev.SessionEnded)[0].total_shell_calls == 1
    assert [e.seq for e in sink.events] == list(range(1, len(sink.events) + 1))


def test_failures_timeouts_and_reopens() -> None:
    target, sink = adapter()
    feed(target, "status", st("working", "inference turn 1"))
    feed(target, "status", st("input-required", "q?", context=None))
    feed(target, "status", st("failed", "input-timeout", context=None, final=True))
    assert not sink.of(ev.TaskEnded) and sink.of(ev.Warning)[0].code == "W-INPUT-TIMEOUT"
    feed(target, "status", st("failed", "driver invocation failed: boom", final=True))
    assert sink.of(ev.TaskFailed)[0].cause == "driver_error"
    assert sink.of(ev.TaskFailed)[0].reason == "driver invocation failed: boom"
    feed(target, "status", st("working", "inference turn 1"))  # an on-task-end hook reopened
    feed(target, "status", st("failed", "max_turns exceeded: the task used all 1 inference "
                              "turns", final=True))
    assert [e.exit_status for e in sink.of(ev.TaskEnded)] == ["failed", "max_turns_reached"]
    reopened = sink.of(ev.TaskReopened)[0]
    assert reopened.reopen_number == 1
    assert said(reopened) == Said(LineKind.NOTE, "↻ task reopened (1); which hook and why "
                                  "were not sent by the door")
    feed(target, "status", st("working", "inference turn 2"))  # reopened again
    feed(target, "status", st("failed", "", final=True))  # and failed, saying nothing
    assert sink.of(ev.TaskFailed)[-1].reason == "no reason was sent by the door"


def test_hostile_frames_never_raise_and_are_counted() -> None:
    target, sink = adapter()
    feed(target, "status", "{not json")
    feed(target, "status", [1, 2])
    feed(target, "status", {"id": T1, "status": "working"})
    feed(target, "artifact", {"id": T1, "artifact": {"tool_name": 7}})
    feed(target, "tool-call-progress", {"id": T1, "tool_call_id": "c", "input_bytes": "x"})
    feed(target, "text", {"id": T1, "text": None, "final": False})
    feed(target, "no-such-frame", {"id": T1})
    feed(target, "status", {"id": {"nested": True}, "status": {"state": "working"}})
    assert target.skipped == 8
    assert all(isinstance(e, ev.TaskStarted) for e in sink.events)


def test_a_key_echoed_by_the_door_is_redacted_and_escapes_are_not_printed() -> None:
    key = "sk-remote-echo-9f8e7d6c5b4a"
    remember(key)
    target, sink = adapter()
    printed, err = io.StringIO(), io.StringIO()
    target.stream.add(HumanPrinter(printed, err))
    feed(target, "status", st("working", "inference turn 1"))
    feed(target, "text", {"id": T1, "text": f"the key is {key} \x1b]0;pwned\x07\x1b[2J",
                          "final": False})
    feed(target, "status", st("input-required", f"Use {key}?", context=None))
    feed(target, "status", st("completed", "session ended", final=True, response=key))
    dumped = "".join(e.to_json() for e in sink.events)
    assert key not in dumped and "[redacted]" in dumped
    shown = printed.getvalue() + err.getvalue()
    assert key not in shown and "\x1b" not in shown and "\x07" not in shown


def test_an_attached_session_through_the_fake_door() -> None:
    big = "data: " + "z" * (9 * 1024 * 1024)
    script = [ack(), status(T1, "working", "inference turn 1", 1),
              raw(f"id: 2\nevent: text\n{big}\n\n".encode()),  # over the frame cap: dropped
              frame("text", {"id": T1, "text": "hi", "final": False}, 2),
              frame("text", "{bad json", 3),
              status(T1, "completed", "session ended", 4, final=True, response="hi"),
              closed()]
    sink = Collect()
    states: list[WatchState] = []
    done = threading.Event()
    with serving(FakeDoor("C", [script])) as door:
        client = DoorClient(door.url)
        target = RemoteAdapter(EventStream(SESSION, [sink]), client.card())
        target.started()

        def on_frame(item: StreamFrame) -> None:
            target.frame(item)

        def on_state(state: WatchState) -> None:
            states.append(state)
            if state.kind in ("closed", "gone"):
                done.set()

        Watcher(client, on_frame, on_state).start()
        assert done.wait(60)
    assert states[-1].kind == "closed"
    assert [type(e).__name__ for e in sink.events] == [
        "SessionStarted", "TaskStarted", "TurnStarted", "TextDelta", "TaskEnded",
        "SessionEnded"]
    assert sink.of(ev.TextDelta)[0].text == "hi"


def test_a_question_asked_again_after_a_restart_is_marked_through_the_door() -> None:
    from tui.core.door.frames import status

    frame = status(T1, "input-required", "Which env?", before_restart=True)
    assert frame["status"] == {"state": "input-required", "message": "Which env?",
                               "before_restart": True}
    assert "before_restart" not in status(T1, "input-required", "Which env?")["status"]
    target, sink = adapter()
    feed(target, "status", st("working", "inference turn 1"))
    feed(target, "status", frame)
    feed(target, "status", st("input-required", "And now?", context=None))
    assert [e.before_restart for e in sink.of(ev.InputRequested)] == [True, False]
