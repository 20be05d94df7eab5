"""The trace fills what the stream lacks, once each, read as it grows: what has no frame at
once, the rest with the frame it belongs to — only the attached session's lines."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes import Collect
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.remote.trace_fill import TraceFill


def line(kind: str, event_id: str, **fields: object) -> str:
    return json.dumps({"event_type": kind, "event_id": event_id, "session_id": "ses_x",
                       "timestamp": 1, **fields}) + "\n"


def test_shell_hook_faults_and_compaction_come_once_each(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(line("session_start", "e1")
                     + line("shell", "e2", task_id="t", turn=1, binary="git",
                            command="git status", exit_code=1, stdout_bytes=5,
                            stderr_bytes=0, duration_ms=9)
                     + "{not json\n"
                     + line("compaction", "e3", task_id="t", turn=1, tokens_before=900,
                            tokens_after=300)
                     + '{"event_type":"hook_dispatch_error","event_id":"e4",'
                     '"session_id":"ses_x","hook_na')
    sink = Collect()
    fill = TraceFill.for_workdir(str(tmp_path), EventStream("ses_x", [sink]), "ses_x")
    assert fill is not None
    assert fill.fill() == 1  # the compaction; the shell line waits for its call's artifact
    with trace.open("a") as handle:  # the writer finishes its line; a gap asks again
        handle.write('me":"guard","event":"on-shell","arm":"error","error":"trap"}\n')
        handle.write(line("compaction", "e5", task_id="t", turn=1, tokens_before=1,
                          tokens_after=1).replace("ses_x", "ses_earlier"))  # not this one's
    assert fill.fill() == 1 and fill.fill() == 0
    assert not sink.of(ev.ShellExecuted)
    assert fill.flush() == 1  # the stream closed and no artifact claimed it
    shell = sink.of(ev.ShellExecuted)[0]
    assert (shell.binary, shell.command, shell.exit_code) == ("git", "git status", 1)
    assert [e.tokens_after for e in sink.of(ev.Compacted)] == [300]
    assert sink.of(ev.HookFault)[0].error == "trap"
    assert fill.bad_lines == 1
    assert TraceFill.for_workdir(str(tmp_path / "elsewhere"), EventStream("s")) is None


def test_with_a_trace_a_call_has_its_input_command_and_times_from_it(tmp_path: Path) -> None:
    """Murmur's door sends no input: the trace's tool_call line has it (and the call's time:
    its line's, less its duration, for the start), its shell line the command."""
    from tests.remote.test_adapter import CARD, SHELL, T1, feed
    from tui.core.remote.adapter import RemoteAdapter

    trace = tmp_path / "trace.jsonl"
    trace.write_text(line("session_start", "e0", model="m-1", max_turns=7)
                     + line("compaction", "e1", task_id=T1, turn=0, tokens_before=9,
                            tokens_after=3)
                     + line("shell", "e2", task_id=T1, turn=0, binary="echo",
                            command="echo hello", exit_code=3, stdout_bytes=6, stderr_bytes=5,
                            duration_ms=12)
                     + json.dumps({"event_type": "tool_call", "event_id": "e3",
                                   "session_id": "ses_x", "timestamp": 50_000, "turn": 0,
                                   "task_id": T1, "tool_name": "bash", "tool_call_id": "c1",
                                   "input": {"command": "echo hello"}, "input_bytes": 25,
                                   "duration_ms": 12}) + "\n")
    sink = Collect()
    stream = EventStream("ses_x", [sink])
    target = RemoteAdapter(stream, CARD, fill=TraceFill(trace, stream, "ses_x"))
    assert (target.started().model, sink.events[0].max_turns) == ("m-1", 7)
    assert not sink.of(ev.Compacted)  # murmur-tui's door would tell it: not yet known
    artifact = {"id": T1, "artifact": {
        "tool_name": "bash", "content": SHELL, "fence_source": "tool:bash",
        "tool_call_id": "c1", "is_error": False, "duration_ms": 12, "exit_code": 3,
        "truncated": False}}
    feed(target, "artifact", artifact)
    artifact["artifact"]["tool_call_id"] = "c2"  # a call the trace has no line for
    feed(target, "artifact", artifact, 2)
    assert [e.tokens_after for e in sink.of(ev.Compacted)] == [3]  # Murmur's door: told
    started = sink.of(ev.ToolCallStarted)
    assert [(e.input, e.input_known) for e in started] == [
        ({"command": "echo hello"}, True), ({}, False)]
    assert started[0].ts_ms == 50_000 - 12
    assert [(e.binary, e.command) for e in sink.of(ev.ShellExecuted)] == [
        ("echo", "echo hello"), ("bash", "echo hello")]
    finished = sink.of(ev.ToolCallFinished)
    assert (finished[0].input_bytes, finished[0].ts_ms) == (25, 50_000)


def test_a_trace_swapped_for_a_fifo_or_a_link_is_not_read_and_a_deep_line_is_one_bad_line(
        tmp_path: Path) -> None:
    """The session's shell can write its workdir: what sits at trace.jsonl after the attach
    began is opened without following a link or blocking, and parsed without recursion."""
    import os

    trace = tmp_path / "trace.jsonl"
    trace.write_text(line("session_start", "e1"))
    sink = Collect()
    fill = TraceFill.for_workdir(str(tmp_path), EventStream("ses_x", [sink]))
    assert fill is not None and fill.fill() == 0
    trace.unlink()
    os.mkfifo(trace, 0o600)  # a plain open() here would wait for a writer for good
    assert fill.fill() == 0 and fill.problem == "it is a FIFO (named pipe)"
    trace.unlink()
    trace.symlink_to("/dev/zero")
    assert fill.fill() == 0 and fill.problem == "it is a link"
    assert TraceFill.for_workdir(str(tmp_path), EventStream("ses_x")) is None
    trace.unlink()
    deep = b'{"event_type":"shell","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    trace.write_bytes(line("session_start", "e1").encode() + deep
                      + line("compaction", "e3", task_id="t", turn=1, tokens_before=9,
                             tokens_after=3).encode())
    assert fill.fill() == 1 and fill.problem is None
    assert fill.bad_lines == 1 and sink.of(ev.Compacted)[0].tokens_after == 3


def test_lines_from_before_the_attach_are_claimed_by_replayed_frames_never_told_at_the_end(
        tmp_path: Path) -> None:
    """A late screen: the trace already holds the session's past. A frame the door still
    replays takes its lines; the rest is not dumped at the end, out of its place."""
    from tests.remote.test_adapter import CARD, SHELL, T1, feed
    from tui.core.remote.adapter import RemoteAdapter

    trace = tmp_path / "trace.jsonl"
    old_call = {"event_type": "tool_call", "event_id": "e1", "session_id": "ses_x",
                "timestamp": 10, "turn": 0, "task_id": T1, "tool_name": "bash",
                "tool_call_id": "c_old", "input": {"command": "true"}, "input_bytes": 20}
    trace.write_text(json.dumps(old_call) + "\n"
                     + json.dumps({**old_call, "event_id": "e2", "tool_call_id": "c1",
                                   "input": {"command": "echo hello"}}) + "\n"
                     + line("inference", "e3", task_id=T1, turn=0, input_tokens=5))
    sink = Collect()
    stream = EventStream("ses_x", [sink])
    target = RemoteAdapter(stream, CARD, fill=TraceFill(trace, stream, "ses_x"))
    target.started()
    feed(target, "artifact", {"id": T1, "artifact": {  # still in the door's replay
        "tool_name": "bash", "content": SHELL, "fence_source": "tool:bash",
        "tool_call_id": "c1", "is_error": False, "duration_ms": 12, "exit_code": 3,
        "truncated": False}})
    assert sink.of(ev.ToolCallStarted)[0].input == {"command": "echo hello"}
    with trace.open("a") as handle:  # written after the attach, claimed by no frame
        handle.write(line("inference", "e4", task_id=T1, turn=1, input_tokens=7))
    feed(target, "capsule-closed", {}, None)
    assert [e.input_tokens for e in sink.of(ev.TurnCompleted)] == [7]
    assert len(sink.of(ev.ToolCallStarted)) == 1  # c_old's line stayed in the past
