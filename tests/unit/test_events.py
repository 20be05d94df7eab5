"""The event vocabulary and its JSON form."""

from __future__ import annotations

import io
import json
import threading

import pytest

from tui.core.asking.request import InputRequest
from tui.core.errors import NoAnswer, StopOnInputTimeout
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.headless import HeadlessResponder, HumanPrinter, JsonPrinter

VOCABULARY = {
    "SessionStarted", "TaskStarted", "TurnStarted", "TextDelta", "ThinkingDelta",
    "TurnCompleted", "ToolCallStarted", "ToolCallFinished", "ShellExecuted", "HookFault",
    "InputRequested", "InputAnswered", "Compacted", "CompactionDeclined", "TaskReopened",
    "TaskEnded", "SessionEnded", "Warning", "TaskFailed",
}


def test_vocabulary_is_complete() -> None:
    assert set(ev.Event.registry) >= VOCABULARY


def test_stream_stamps_session_seq_and_time_and_round_trips_json() -> None:
    out = io.StringIO()
    stream = EventStream("ses_1", [JsonPrinter(out)])
    first = stream.emit(ev.TextDelta(task_id="tsk_1", turn=0, text="héllo"))
    second = stream.emit(ev.HookFault(hook="h", handler="on-tool-call", arm="artifact"))
    assert (first.seq, second.seq) == (1, 2) and first.session_id == "ses_1"
    lines = out.getvalue().splitlines()
    decoded = json.loads(lines[0])
    assert decoded["event"] == "TextDelta" and decoded["text"] == "héllo"
    assert ev.event_from_dict(decoded) == first
    assert ev.event_from_dict(json.loads(lines[1])) == second


def test_unknown_event_in_json_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown event"):
        ev.event_from_dict({"event": "Nope"})


def test_events_are_frozen() -> None:
    event = ev.Warning(session_id="s", seq=1, ts_ms=0, code="W", text="t")
    with pytest.raises(AttributeError):
        event.text = "changed"  # type: ignore[misc]


def test_seq_order_is_delivery_order_across_threads() -> None:
    seen: list[int] = []
    stream = EventStream("s", [type("S", (), {"emit": lambda self, e: seen.append(e.seq)})()])

    def burst() -> None:
        for _ in range(500):
            stream.emit(ev.Warning(code="W", text="x"))

    threads = [threading.Thread(target=burst) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == list(range(1, 2001))


def test_human_printer_streams_text_inline_and_warnings_to_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    stream = EventStream("s", [HumanPrinter(out, err)])
    stream.emit(ev.TextDelta(task_id="t", turn=0, text="Hel"))
    stream.emit(ev.TextDelta(task_id="t", turn=0, text="lo"))
    stream.emit(ev.Warning(code="W-RUN-001", text="cut short"))
    stream.emit(ev.TaskFailed(task_id="t", cause="driver_error", reason="HTTP 500"))
    assert out.getvalue() == "  Hello\n✗ task failed (driver_error): HTTP 500\n"
    assert err.getvalue() == "warning: cut short\n"


def test_human_printer_never_writes_what_a_terminal_would_act_on() -> None:
    # a model's text, a command's live lines and a warning may all carry escape sequences:
    # the log shows them, the terminal never obeys them (no title set, no screen cleared)
    out, err = io.StringIO(), io.StringIO()
    stream = EventStream("s", [HumanPrinter(out, err)])
    stream.emit(ev.TextDelta(task_id="t", turn=0, text="look \x1b[2"))
    stream.emit(ev.TextDelta(task_id="t", turn=0, text="J here"))
    stream.emit(ev.ShellOutput(task_id="t", turn=0, call_id="c", stream="stdout",
                               text="evil \x1b]0;pwned\x07 title\nnext"))
    stream.emit(ev.Warning(code="W-X", text="bad \x9b31m"))
    printed = out.getvalue() + err.getvalue()
    assert not any(ch in printed for ch in "\x1b\x07\x9b")
    assert "evil " in printed and " title\n  │ next\n" in printed and "J here" in printed


def test_headless_responder_uses_answers_in_order_then_stdin() -> None:
    err = io.StringIO()
    responder = HeadlessResponder(["first", "second"], stdin=io.StringIO("third\n"), err=err)
    request = InputRequest("r1", "Which branch?", "ask-tool")
    assert [responder.ask(request) for _ in range(3)] == ["first", "second", "third"]
    assert "ask-tool asks: Which branch?" in err.getvalue()
    with pytest.raises(NoAnswer):
        responder.ask(request)
    with pytest.raises(NoAnswer):
        responder.ask(request)


def test_headless_responder_times_out() -> None:
    import os

    read_end, write_end = os.pipe()
    stdin = os.fdopen(read_end)  # a pipe nobody writes to
    try:
        responder = HeadlessResponder([], stdin=stdin, err=io.StringIO())
        with pytest.raises(StopOnInputTimeout):
            responder.ask(InputRequest("r", "q?", "t", timeout_secs=0.2))
    finally:
        os.close(write_end)


def test_cancel_token_calls_back_subscribers_once_and_late_ones_at_once() -> None:
    from tui.core.cancel import CancelToken

    token = CancelToken()
    calls: list[str] = []
    token.subscribe(lambda: calls.append("a"))
    unsubscribe = token.subscribe(lambda: calls.append("b"))
    unsubscribe()
    token.set()
    token.set()
    assert calls == ["a"] and token.is_set()
    token.subscribe(lambda: calls.append("late"))
    assert calls == ["a", "late"]
