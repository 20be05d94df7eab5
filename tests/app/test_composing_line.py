"""A tool call the model is still writing (`ToolCallComposing`) has one line in the transcript,
its size updated in place, replaced by the call when it starts; the status bar's retry
countdown ends when it arrives, as it does for streamed text."""

from __future__ import annotations

from tests.app.test_transcript_model import lines, make, turn
from tui.app.models.status import SessionState
from tui.app.models.transcript import TranscriptModel
from tui.core.events import vocabulary as ev
from tui.core.events.wording import LineKind, log_line


def composing(input_bytes: int, call_id: str = "c1") -> ev.ToolCallComposing:
    return make(ev.ToolCallComposing, task_id="t", turn=0, call_id=call_id, tool_name="write",
                input_bytes=input_bytes)


def test_the_line_grows_in_place_then_becomes_the_call() -> None:
    model = TranscriptModel()
    turn(model, 0, done=False)
    assert model.take(composing(0))
    assert lines(model) == [(LineKind.RUNNING, "✎ write · 0 B")]
    model.take(composing(700))
    model.take(composing(5000))
    assert lines(model) == [(LineKind.RUNNING, "✎ write · 4.9 KiB")]
    model.take(composing(3, call_id="c2"))
    model.take(make(ev.ToolCallStarted, task_id="t", turn=0, call_id="c1", tool_name="write",
                    kind="wasm", input={"path": "a"}))
    assert lines(model) == [(LineKind.RUNNING, '→ write {"path": "a"}'),
                            (LineKind.RUNNING, "✎ write · 3 B")]


def test_the_headless_log_names_the_start_only() -> None:
    assert log_line(composing(0)) == "✎ write · composing a call (c1)"
    assert log_line(composing(12)) is None


def test_a_call_being_written_ends_the_retry_wait_in_the_status_bar() -> None:
    state = SessionState()
    state.apply(make(ev.InferenceRetry, task_id="t", turn=0, attempt=1, max_attempts=3,
                     status=503, reason="busy", delay_ms=600_000))
    assert state.kind == "retrying"
    state.apply(composing(0))
    assert state.kind != "retrying"
