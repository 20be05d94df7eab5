"""murmur-tui's door tells the session's own events (tui/core/door/told.py); the remote
adapter rebuilds them (tui/core/remote/told.py, told_mode.py): each once, in the session's
order, with the session's times — also for a screen that attaches after the replay window."""

from __future__ import annotations

import json

from tests.fakes import Collect
from tests.remote.test_adapter import CARD
from tui.core.door.frames import Broadcast, DoorFrame, FrameSink, Subscriber
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.remote.adapter import RemoteAdapter
from tui.core.remote.watch import to_stream_frame


def session(replay: int) -> tuple[EventStream, Broadcast, Subscriber, Collect]:
    """A session whose door keeps `replay` frames; its own events in `local`."""
    local = Collect()
    broadcast = Broadcast(replay=replay)
    live = Subscriber(lambda: None, limit=10_000)
    broadcast.subscribe(live, None)
    return EventStream("ses_told", [FrameSink(broadcast), local]), broadcast, live, local


def run_tasks(stream: EventStream, tasks: int, turns: int) -> None:
    for number in range(tasks):
        task = f"tsk_{number}"
        stream.emit(ev.TaskStarted(task_id=task, context_id="ctx", text=f"task {number}",
                                   source="a2a"))
        for turn in range(turns):
            stream.emit(ev.TurnStarted(task_id=task, turn=turn, max_turns=9, input_tokens=1))
            for piece in ("Hel", "lo ", f"{turn}"):
                stream.emit(ev.TextDelta(task_id=task, turn=turn, text=piece))
            stream.emit(ev.TurnCompleted(task_id=task, turn=turn, input_tokens=1,
                                         output_tokens=1, decision="end_turn",
                                         stop_reason="end_turn", tool_name=None, model="m"))
        stream.emit(ev.TaskEnded(task_id=task, exit_status="ok", result="", duration_ms=7,
                                 turns=turns, input_tokens=1, output_tokens=1, tool_calls=0,
                                 shell_calls=0))


def attach(frames: list[DoorFrame]) -> tuple[RemoteAdapter, Collect]:
    sink = Collect()
    target = RemoteAdapter(EventStream("ses_told", [sink]), CARD)
    target.started()
    for item in frames:
        body = json.dumps(item.data)
        target.frame(to_stream_frame(item.event, body, None if item.id is None else str(item.id)))
    return target, sink


def placed(events: list[ev.Event]) -> list[tuple[str, str | None, int, str]]:
    """Each turn's start and text, where it was put."""
    out: list[tuple[str, str | None, int, str]] = []
    for event in events:
        if isinstance(event, ev.TurnStarted):
            out.append(("turn", event.task_id, event.turn, ""))
        elif isinstance(event, ev.TextDelta):
            out.append(("text", event.task_id, event.turn, event.text))
    return out


def test_a_watcher_from_the_start_gets_every_event_once_with_its_own_time() -> None:
    stream, _, live, local = session(replay=512)
    run_tasks(stream, tasks=2, turns=2)
    frames = live.drain()
    # a reconnect's replay: the watcher drops the frames it has seen (watch.py); the events
    # a frame tells are known by their seq besides, and never shown twice
    target, sink = attach(frames + [f for f in frames if "tui" in f.data])
    mine = [e for e in sink.events if not isinstance(e, ev.SessionStarted)]
    assert [type(e).__name__ for e in mine] == [type(e).__name__ for e in local.events]
    # each told event has the session's time; a text frame's delta, its arrival's
    assert [e.ts_ms for e in mine if not isinstance(e, ev.TextDelta)] == [
        e.ts_ms for e in local.events if not isinstance(e, ev.TextDelta)]
    assert [(e.turn, e.text) for e in mine if isinstance(e, ev.TextDelta)] == [
        (e.turn, e.text) for e in local.events if isinstance(e, ev.TextDelta)]
    assert target.unplaced == 0 and target.told.skipped == 0


def test_a_late_watcher_begins_with_the_first_turn_the_replay_holds_whole() -> None:
    stream, broadcast, _, local = session(replay=10)
    run_tasks(stream, tasks=2, turns=3)
    late = Subscriber(lambda: None)
    frames = broadcast.subscribe(late, 0)  # `gap`, then the newest 10 frames
    assert frames[0].event == "gap"
    target, sink = attach(frames)
    # the window begins inside task 1's second turn, with its text: left out, not put under
    # a turn it does not belong to; the task starts with its first told event
    assert frames[1].event == "text" and target.unplaced == 3
    mine = placed(sink.events)
    theirs = placed(local.events)
    assert mine and all(item in theirs for item in mine)
    assert mine == theirs[len(theirs) - len(mine):]  # the newest, whole, in order
    started = [e for e in sink.events if isinstance(e, ev.TaskStarted)]
    assert [e.task_id for e in started] == ["tsk_1"]
    assert sink.events.index(started[0]) == 1  # before anything of its own


def test_a_live_call_start_and_its_replay_show_once() -> None:
    stream, _, live, _ = session(replay=512)
    stream.emit(ev.TaskStarted(task_id="t", context_id="c", text="go", source="a2a"))
    stream.emit(ev.TurnStarted(task_id="t", turn=0, max_turns=9, input_tokens=1))
    stream.emit(ev.ToolCallStarted(task_id="t", turn=0, call_id="c1", tool_name="bash",
                                   kind="shell", input={"command": "ls"}))
    stream.emit(ev.ShellOutput(task_id="t", turn=0, call_id="c1", stream="stdout", text="a"))
    stream.emit(ev.ToolCallFinished(task_id="t", turn=0, call_id="c1", tool_name="bash",
                                    kind="shell", status="ok", duration_ms=5,
                                    input={"command": "ls"}, input_bytes=17, output="a\n",
                                    output_bytes=2))
    frames = live.drain()
    # told at once (no frame of their own): the task's start, the call's, its output
    assert [f.data["tui"]["events"][0]["event"] for f in frames if f.id is None] == [
        "TaskStarted", "ToolCallStarted", "ShellOutput"]
    _, sink = attach(frames)
    kinds = [type(e).__name__ for e in sink.events]
    assert kinds == ["SessionStarted", "TaskStarted", "TurnStarted", "ToolCallStarted",
                     "ShellOutput", "ToolCallFinished"]
    finished = sink.of(ev.ToolCallFinished)[0]
    assert (finished.input, finished.output) == ({"command": "ls"}, "a\n")  # from the artifact
