"""The transcript's model on its own: events in, turns, lines, line kinds and the window out —
no app, no widget."""

from __future__ import annotations

import itertools
import subprocess
import sys
from typing import Any, TypeVar

from tui.app.models import transcript as tm
from tui.app.models.transcript import TranscriptModel
from tui.core.events import vocabulary as ev
from tui.core.events.wording import LineKind

E = TypeVar("E", bound=ev.Event)
_seq = itertools.count(1)


def make(cls: type[E], **fields: Any) -> E:
    return cls(session_id="ses_m", seq=next(_seq), ts_ms=0, **fields)


def turn(model: TranscriptModel, number: int, *, done: bool = True, task: str = "t") -> None:
    model.take(make(ev.TurnStarted, task_id=task, turn=number, max_turns=10_000,
                    input_tokens=1))
    model.take(make(ev.TextDelta, task_id=task, turn=number, text=f"answer {number}"))
    if done:
        model.take(make(ev.TurnCompleted, task_id=task, turn=number, input_tokens=1,
                        output_tokens=1, decision="final", stop_reason="end_turn",
                        tool_name=None, model="m"))


def lines(model: TranscriptModel) -> list[tuple[LineKind, str]]:
    return [entry for t in model.turns for entry in t.entries()]


def test_a_call_line_is_replaced_by_its_outcome_in_place() -> None:
    model = TranscriptModel()
    turn(model, 0, done=False)
    started = make(ev.ToolCallStarted, task_id="t", turn=0, call_id="c1", tool_name="grep",
                   kind="wasm", input={"pattern": "x"})
    assert model.take(started)
    assert lines(model) == [(LineKind.RUNNING, '→ grep {"pattern": "x"}')]
    model.take(make(ev.ToolCallFinished, task_id="t", turn=0, call_id="c1", tool_name="grep",
                    kind="wasm", status="error", duration_ms=3, input={"pattern": "x"},
                    input_bytes=15, output="no", output_bytes=2))
    assert lines(model) == [(LineKind.FAILURE, '✗ grep {"pattern": "x"} · 3 ms · 2 B')]
    assert model.turns[0].text == "answer 0" and model.turns[0].number == 1


def test_questions_answers_and_commands_have_their_kind() -> None:
    model = TranscriptModel()
    turn(model, 0, done=False)
    model.take(make(ev.InputRequested, task_id="t", request_id="r1", prompt="Which branch?",
                    tool_name="ask"))
    model.take(make(ev.InputAnswered, task_id="t", request_id="r1", answer="main"))
    for code in (0, 2):
        model.take(make(ev.ShellExecuted, task_id="t", turn=0, call_id=f"s{code}",
                        binary="sh", command=f"exit {code}", exit_code=code, stdout="",
                        stderr="", stdout_bytes=0, stderr_bytes=0, duration_ms=1,
                        truncated=False))
    assert lines(model) == [
        (LineKind.QUESTION, "? ask asks: Which branch?"),
        (LineKind.NOTE, "  you answered: main"),
        (LineKind.SUCCESS, "✓ $ exit 0 · exit 0 · 1 ms"),
        (LineKind.FAILURE, "✗ $ exit 2 · exit 2 · 1 ms"),
    ]


def test_a_retry_drops_the_partial_answer_and_says_when() -> None:
    model = TranscriptModel()
    turn(model, 0, done=False)
    model.take(make(ev.InferenceRetry, task_id="t", turn=0, attempt=1, max_attempts=3,
                    status=None, reason="reset", delay_ms=1500))
    assert model.turns[0].text == ""
    assert lines(model) == [(LineKind.NOTE, "↻ model call failed (connection broke); "
                                            "retrying in 1.5 s (attempt 2 of 3)")]


def test_a_failed_model_call_is_a_failure_line_and_the_result_keeps_the_reason() -> None:
    model = TranscriptModel()
    model.take(make(ev.TaskStarted, task_id="t", context_id="c", text="  \n"))
    assert model.task_text == "(no task text)"
    turn(model, 0, done=False)
    model.take(make(ev.TurnCompleted, task_id="t", turn=0, input_tokens=1, output_tokens=None,
                    decision="error", stop_reason="error", tool_name=None, model="m",
                    error="HTTP 500"))
    assert lines(model) == [(LineKind.FAILURE, "✗ the model call failed: HTTP 500")]
    model.take(make(ev.TaskEnded, task_id="t", exit_status="failed", result="error: HTTP 500",
                    duration_ms=5, turns=1, input_tokens=1, output_tokens=0, tool_calls=0,
                    shell_calls=0))
    assert model.result == ("✗ task failed · 1 turn · 0 tool calls", "error: HTTP 500")
    assert all(t.done for t in model.window)


def test_events_the_transcript_does_not_show_change_nothing() -> None:
    model = TranscriptModel()
    assert not model.take(make(ev.Warning, code="W", text="x"))
    assert not model.take(make(ev.ShellExecuted, task_id="t", turn=0, call_id=None,
                               binary="sh", command="true", exit_code=0, stdout="",
                               stderr="", stdout_bytes=0, stderr_bytes=0, duration_ms=1,
                               truncated=False))
    assert not model.turns


def test_the_window_keeps_recent_turns_and_brings_older_ones_back() -> None:
    model = TranscriptModel()
    total = tm.WINDOW * 2 + 5
    for number in range(total):
        turn(model, number)
    gone = model.trim()
    assert len(gone) == total - tm.WINDOW and gone[0].number == 1
    assert len(model.window) == tm.WINDOW and model.hidden_older == total - tm.WINDOW
    brought = model.load_older()
    assert [t.number for t in brought] == list(range(total - tm.WINDOW - tm.LOAD_OLDER + 1,
                                                     total - tm.WINDOW + 1))
    assert model.window[0] is brought[0]
    assert model.hidden_older == total - tm.WINDOW - tm.LOAD_OLDER


def test_a_turn_still_streaming_stays_in_the_window() -> None:
    model = TranscriptModel()
    turn(model, 0, done=False)
    for number in range(1, tm.WINDOW + 3):
        turn(model, number)
    model.trim()
    assert model.window[0].number == 1  # the open first turn holds the window's start


def test_memory_is_bounded_and_counts_what_it_let_go() -> None:
    model = TranscriptModel()
    for number in range(tm.MODEL_TURNS + 7):
        turn(model, number)
    model.trim()
    assert len(model.turns) == tm.MODEL_TURNS and model.dropped == 7
    assert model.hidden_older == tm.MODEL_TURNS + 7 - tm.WINDOW
    assert model.turns[0].number == 8


def test_the_model_imports_neither_textual_nor_rich() -> None:
    script = ("import sys, tui.app.models.transcript, tui.app.models.transcript_text\n"
              "print(','.join(sorted(m for m in sys.modules "
              "if m.split('.')[0] in ('textual', 'rich'))))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""


def test_the_screen_shortens_what_the_headless_log_prints_in_full() -> None:
    from tui.core.events.wording import log_line, said

    long_input = {"text": "word " * 60}
    event = make(ev.ToolCallStarted, task_id="t", turn=0, call_id="c", tool_name="echo",
                 kind="wasm", input=long_input)
    line = said(event)
    assert line is not None and line.kind is LineKind.RUNNING
    assert len(line.text) == len("→ echo ") + 100 and line.text.endswith("…")
    logged = log_line(event)
    assert logged is not None and logged.startswith("→ echo ") and "…" not in logged
    assert logged.count("word") == 60


def test_durations_read_as_people_read_them() -> None:
    from tui.core.events.wording import duration

    assert [duration(ms) for ms in (0, 480, 1000, 2140, 59_999, 128_098, 3_780_000)] == [
        "0 ms", "480 ms", "1.0 s", "2.1 s", "1 min 0 s", "2 min 8 s", "1 h 3 min"]


def test_the_tool_tables_durations_fit_its_column() -> None:
    from tui.app.widgets.tool_calls import short_duration

    shown = [short_duration(ms) for ms in (7, 999, 2140, 59_949, 59_999, 128_098, 3_780_000)]
    assert shown == ["7ms", "999ms", "2.1s", "59.9s", "1m00s", "2m08s", "1h03m"]
    assert all(len(text) <= 6 for text in shown)


def test_an_answer_taken_from_the_journal_says_it_was_given_before_the_restart() -> None:
    model = TranscriptModel()
    turn(model, 0, done=False)
    model.take(make(ev.InputAnswered, task_id="t", request_id="q_1", answer="main",
                    journaled=True))
    assert lines(model) == [(LineKind.NOTE, "  answered before the restart: main")]


def test_a_call_restored_from_the_journal_says_it_is_not_run_again() -> None:
    model = TranscriptModel()
    turn(model, 0, done=False)
    model.take(make(ev.ToolCallRestored, task_id="t", turn=0, call_id="c1", tool_name="check",
                    status="ok", output_bytes=12, from_session="ses_dead"))
    assert lines(model) == [
        (LineKind.SUCCESS, "✓ check · finished before the restart, not run again · 12 B")]
