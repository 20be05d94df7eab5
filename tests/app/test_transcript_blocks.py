"""A session is a list of tasks: each task its own block in the transcript's model — a header
saying where it came from, its text as given, its turns numbered from 1, its own end line —
from events alone; the same model written as plain lines and as Markdown; a running call's
line counting its time from the event's own stamp. No app, no widget."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from tests.app.test_transcript_model import make
from tests.conftest import CapsuleFactory
from tests.unit.test_background import demoted_then_completed
from tui.app.models import transcript as tm
from tui.app.models.transcript import TaskBlock, TranscriptModel, TurnModel
from tui.app.models.transcript_text import markdown, text_lines, write_markdown
from tui.core.events import vocabulary as ev
from tui.core.events.wording import LineKind


def session(session_id: str = "ses_a", resumed_from: str | None = None) -> ev.SessionStarted:
    return ev.SessionStarted(session_id=session_id, seq=1, ts_ms=0, capsule_name="demo",
                             capsule_version="1.0.0", model="m", workdir="/w",
                             trace_path="/w/trace.jsonl", context_id="ctx", record_path=None,
                             max_turns=8, tools=("bash",), resumed_from=resumed_from)


def started(task: str, text: str, **fields: Any) -> ev.TaskStarted:
    return make(ev.TaskStarted, task_id=task, context_id="ctx", text=text, **fields)


def answered(task: str, turn: int, text: str) -> list[ev.Event]:
    return [make(ev.TurnStarted, task_id=task, turn=turn, max_turns=8, input_tokens=1),
            make(ev.TextDelta, task_id=task, turn=turn, text=text),
            make(ev.TurnCompleted, task_id=task, turn=turn, input_tokens=1, output_tokens=1,
                 decision="end_turn", stop_reason="end_turn", tool_name=None, model="m")]


def shell_call(task: str, turn: int, call: str, command: str, ms: int) -> list[ev.Event]:
    given = {"command": command}
    return [make(ev.TurnStarted, task_id=task, turn=turn, max_turns=8, input_tokens=1),
            make(ev.ToolCallStarted, task_id=task, turn=turn, call_id=call, tool_name="bash",
                 kind="shell", input=given),
            make(ev.ToolCallFinished, task_id=task, turn=turn, call_id=call,
                 tool_name="bash", kind="shell", status="ok", duration_ms=ms, input=given,
                 input_bytes=20, output="x", output_bytes=1),
            make(ev.TurnCompleted, task_id=task, turn=turn, input_tokens=1, output_tokens=1,
                 decision="tool_call", stop_reason="tool_call", tool_name="bash", model="m")]


def ended(task: str, turns: int, calls: int, status: str = "ok",
          result: str = "") -> ev.TaskEnded:
    return make(ev.TaskEnded, task_id=task, exit_status=status, result=result,
                duration_ms=5, turns=turns, input_tokens=1, output_tokens=1,
                tool_calls=calls, shell_calls=0)


def three_tasks() -> list[ev.Event]:
    """Given at launch (two turns), typed on the screen, and a background command's
    completion; the second fails."""
    return [
        session(),
        started("tsk_1", "Look around,\ncarefully."),
        *shell_call("tsk_1", 0, "c1", "ls -la", 40),
        *answered("tsk_1", 1, "Found two files."),
        ended("tsk_1", 2, 1),
        started("tsk_2", "What is in out/?", source="a2a", via="typed"),
        *answered("tsk_2", 0, "Nothing yet."),
        ended("tsk_2", 1, 0, "failed", "error: the model gave up"),
        make(ev.ShellCompleted, work_id="wrk_9", binary="sh", command="sleep 5",
             exit_code=0, duration_ms=5000, output_path="logs/wrk_9.log", output_bytes=0,
             status="ok", completion_task_id="tsk_3"),
        started("tsk_3", "Background shell command wrk_9 finished.",
                source="detached_shell", origin="completion"),
        *answered("tsk_3", 0, "Noted."),
        ended("tsk_3", 1, 0),
    ]


THREE_TASKS = [
    "Session ses_a · 3 tasks",
    "Task 1 · given at launch",
    "Look around,",
    "carefully.",
    "turn 1",
    '✓ bash {"command": "ls -la"} · 40 ms · 1 B',
    "turn 2",
    "Found two files.",
    "✓ task ok · 2 turns · 1 tool call",
    "Task 2 · typed",
    "What is in out/?",
    "turn 1",
    "Nothing yet.",
    "✗ task failed · 1 turn · 0 tool calls",
    "error: the model gave up",
    "Task 3 · completion of wrk_9",
    "Background shell command wrk_9 finished.",
    "turn 1",
    "Noted.",
    "✓ task ok · 1 turn · 0 tool calls",
]


def fed(events: list[ev.Event]) -> TranscriptModel:
    model = TranscriptModel()
    for event in events:
        model.take(event)
    return model


def test_three_tasks_are_three_blocks_each_with_its_header_turns_and_end() -> None:
    model = fed(three_tasks())
    assert list(text_lines(model)) == THREE_TASKS
    assert [(b.number, b.origin, b.text) for b in model.blocks] == [
        (1, "given at launch", "Look around,\ncarefully."),
        (2, "typed", "What is in out/?"),
        (3, "completion of wrk_9", "Background shell command wrk_9 finished.")]
    assert [(t.block.number if t.block else 0, t.number) for t in model.turns] == [
        (1, 1), (1, 2), (2, 1), (3, 1)]
    assert model.task_text == "Background shell command wrk_9 finished."
    assert model.result == ("✓ task ok · 1 turn · 0 tool calls", "")


def test_the_window_lays_out_each_end_line_under_its_own_turns() -> None:
    model = fed(three_tasks())
    laid: list[str] = []
    headed: set[int] = set()
    for item in model.visible():
        if isinstance(item, TaskBlock) and item.number in headed:
            laid.append(f"end Task {item.number}")
        else:
            laid.append(_name(item))
            if isinstance(item, TaskBlock):
                headed.add(item.number)
    assert laid == ["Task 1", "turn 1", "turn 2", "end Task 1", "Task 2", "turn 1",
                    "end Task 2", "Task 3", "turn 1", "end Task 3"]


def test_a_peers_task_says_it_came_from_a_peer() -> None:
    """A task another capsule sent (`x-murmur-task-origin: peer`, trace origin `peer`), as the
    session's first task at its door or a later one, is told apart from the operator's."""
    model = fed([
        session("ses_p"),
        started("tsk_1", "review this", via="door", origin="peer"),
        ended("tsk_1", 0, 0),
        started("tsk_2", "and this", source="a2a"),
        ended("tsk_2", 0, 0),
        started("tsk_3", "one more", source="a2a", origin="peer"),
    ])
    assert [block.header for block in model.blocks] == [
        "Task 1 · from a peer", "Task 2 · from the door", "Task 3 · from a peer"]


def _name(item: TaskBlock | TurnModel) -> str:
    return f"Task {item.number}" if isinstance(item, TaskBlock) else f"turn {item.number}"


def test_queued_door_lost_and_resumed_tasks_say_so() -> None:
    model = fed([
        session("ses_b", resumed_from="ses_a"),
        started("tsk_1", "", ),  # a resumed session goes on with the task it died in
        ended("tsk_1", 0, 0),
        started("tsk_2", "next, please", source="a2a", via="queued"),
        ended("tsk_2", 0, 0),
        started("tsk_3", "from a peer", source="a2a"),
        make(ev.ShellLost, work_id="wrk_1", binary="sh", command="sleep 9",
             lost_session_id="ses_a", detached_at_ms=1),
        ended("tsk_3", 0, 0),
        started("tsk_4", "Background work was lost.", source="detached_lost",
                origin="completion"),
        ended("tsk_4", 0, 0),
        started("tsk_5", "also from the command line"),
    ])
    assert [block.header for block in model.blocks] == [
        "Task 1 · resumed from ses_a", "Task 2 · queued", "Task 3 · from the door",
        "Task 4 · background work lost: wrk_1", "Task 5 · given at launch"]
    assert model.blocks[0].text == "(no task text)"
    lines = list(text_lines(model))
    assert lines[0] == "Session ses_b · goes on from ses_a · 5 tasks"
    assert lines[-2:] == ["Task 5 · given at launch",
                                            "also from the command line"]


def test_a_follow_up_session_is_named_on_the_block_it_starts() -> None:
    model = fed([session(), started("tsk_1", "first"), *answered("tsk_1", 0, "one"),
                 ended("tsk_1", 1, 0), session("ses_f", resumed_from="ses_a"),
                 started("tsk_2", "and again", via="typed"), *answered("tsk_2", 0, "two")])
    lines = list(text_lines(model))
    assert lines[0] == "Session ses_a · 1 follow-up session · 2 tasks"
    at = lines.index("Task 2 · typed")
    assert lines[at:] == ["Task 2 · typed", "in session ses_f, which goes on from ses_a",
                          "and again", "turn 1", "two"]


def test_the_same_events_as_json_give_the_same_blocks() -> None:
    """A session reached through its door hands over the same events as JSON: the model
    fed them (in the same order) holds the same transcript, line for line."""
    events = three_tasks()
    again = [ev.event_from_dict(json.loads(event.to_json())) for event in events]
    assert list(text_lines(fed(again))) == list(text_lines(fed(events))) == THREE_TASKS


def test_a_running_call_counts_its_time_from_its_own_stamp_and_stops_at_its_end() -> None:
    model = TranscriptModel()
    model.take(started("t", "go"))
    given = {"command": "ls -la"}
    model.take(ev.ToolCallStarted(session_id="s", seq=5, ts_ms=1_000_000, task_id="t",
                                  turn=0, call_id="c", tool_name="bash", kind="shell",
                                  input=given))
    turn = model.turns[0]
    assert turn.running
    assert list(turn.entries(1_003_240)) == [
        (LineKind.RUNNING, '→ bash {"command": "ls -la"} · 3.2 s')]
    assert list(turn.entries()) == [(LineKind.RUNNING, '→ bash {"command": "ls -la"}')]
    model.take(make(ev.ShellOutput, task_id="t", turn=0, call_id="c", stream="stdout",
                    text="total 8\ndrwx a\n"))
    assert list(turn.entries(1_061_000)) == [
        (LineKind.RUNNING, '→ bash {"command": "ls -la"} · 1 min 1 s  ⋯ drwx a')]
    model.take(make(ev.ToolCallFinished, task_id="t", turn=0, call_id="c", tool_name="bash",
                    kind="shell", status="ok", duration_ms=61_000, input=given,
                    input_bytes=20, output="x", output_bytes=1))
    assert not model.running
    assert list(turn.entries(2_000_000)) == [
        (LineKind.SUCCESS, '✓ bash {"command": "ls -la"} · 1 min 1 s · 1 B')]


def test_a_task_that_ends_stops_every_clock() -> None:
    model = TranscriptModel()
    model.take(started("t", "go"))
    model.take(ev.ToolCallStarted(session_id="s", seq=5, ts_ms=1_000, task_id="t", turn=0,
                                  call_id="c", tool_name="bash", kind="shell", input={}))
    model.take(ended("t", 1, 1, "canceled"))
    assert not model.running and list(model.turns[0].entries(9_000)) == [
        (LineKind.RUNNING, "→ bash {}")]


def test_the_window_over_many_tasks_starts_at_the_block_of_its_first_turn() -> None:
    model = TranscriptModel()
    model.take(session())
    for task in range(3):
        model.take(started(f"tsk_{task}", f"task {task}"))
        for turn in range(tm.WINDOW // 2 + 5):
            for event in answered(f"tsk_{task}", turn, f"answer {task}.{turn}"):
                model.take(event)
        model.take(ended(f"tsk_{task}", tm.WINDOW // 2 + 5, 0))
    model.trim()
    assert len(model.window) == tm.WINDOW
    shown = [item for item in model.visible() if isinstance(item, TaskBlock)]
    assert [block.number for block in shown] == [2, 2, 3, 3]  # header and end of each
    first = model.window[0]
    assert first.block is not None and first.block.number == 2 and first.number == 11
    while model.load_older():
        pass
    shown = [item for item in model.visible() if isinstance(item, TaskBlock)]
    assert [block.number for block in shown] == [1, 1, 2, 2, 3, 3]


def test_the_markdown_export_holds_every_task_and_is_private(tmp_path: Path) -> None:
    events = three_tasks()
    events.insert(3, make(ev.ThinkingDelta, task_id="tsk_1", turn=0, text="Look first."))
    model = fed(events)
    text = markdown(model)
    assert text.startswith("# Session ses_a · 3 tasks\n\nCapsule demo 1.0.0 · model m\n")
    for part in ("## Task 1 · given at launch\n\n> Look around,\n> carefully.\n",
                 "### Turn 1\n\n*Thinking:*\n\n> Look first.\n",
                 '```text\n✓ bash {"command": "ls -la"} · 40 ms · 1 B\n```\n',
                 "**✓ task ok · 2 turns · 1 tool call**\n",
                 "## Task 2 · typed\n\n> What is in out/?\n",
                 "**✗ task failed · 1 turn · 0 tool calls**\n\n```text\n"
                 "error: the model gave up\n```\n",
                 "## Task 3 · completion of wrk_9\n"):
        assert part in text
    assert text.index("## Task 1") < text.index("## Task 2") < text.index("## Task 3")
    target = tmp_path / "out" / "ses_a-transcript.md"
    write_markdown(model, target)
    assert target.read_text(encoding="utf-8") == text
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_line_holding_backticks_gets_a_longer_fence() -> None:
    model = TranscriptModel()
    model.take(started("t", "go"))
    model.take(make(ev.ShellExecuted, task_id="t", turn=0, call_id="c", binary="sh",
                    command="echo ```", exit_code=0, stdout="", stderr="", stdout_bytes=0,
                    stderr_bytes=0, duration_ms=1, truncated=False))
    assert "````text\n✓ $ echo ``` · exit 0 · 1 ms\n````" in markdown(model)


def test_a_real_background_completion_is_a_block_naming_its_work(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    """A real session: a command demoted to the background, its completion a task of its
    own — the model fed the session's events names the work on the completion's block."""
    session, sink = demoted_then_completed(make_capsule)
    assert session.run().exit_status == "ok"
    work = sink.of(ev.ShellDetached)[0].work_id
    model = fed(sink.events)
    assert [block.header for block in model.blocks] == [
        "Task 1 · given at launch", f"Task 2 · completion of {work}"]
    lines = list(text_lines(model))
    second = lines.index(f"Task 2 · completion of {work}")
    assert lines[second + 1] == f"Background shell command {work} finished."
    assert lines[-3:] == ["turn 1", "it finished", "✓ task ok · 1 turn · 0 tool calls"]
