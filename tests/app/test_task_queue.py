"""The queue of prompts and the status bar's "waiting" state, from events alone."""

from __future__ import annotations

import dataclasses

from tests.app.test_transcript_model import make
from tui.app.models.queue import TaskQueue
from tui.app.models.status import SessionState
from tui.core.events import vocabulary as ev


def test_only_what_the_session_does_not_hold_moves_or_goes() -> None:
    queue = TaskQueue()
    a, _, c = (queue.add(text) for text in ("a", "b", "c"))
    held = queue.next_held()
    assert held is not None and held.text == "a"
    held.sent = True
    assert queue.move(1, -1) == 1  # b cannot pass the task the session holds
    assert queue.remove(0) is None and [i.text for i in queue.items] == ["a", "b", "c"]
    assert queue.move(1, 1) == 2 and [i.text for i in queue.items] == ["a", "c", "b"]
    assert queue.move(2, 1) == 2  # the end
    assert queue.started(a.task_id) and [i.text for i in queue.items] == ["c", "b"]
    assert not queue.started(c.task_id)  # c was never given to the session
    queue.items[0].sent = True
    queue.unsend()  # the session ended first: everything waits again
    assert queue.sent == []


def test_a_sleeping_session_waits_and_a_follow_up_starts_the_numbers_again() -> None:
    state = SessionState()
    started = make(ev.SessionStarted, capsule_name="c", capsule_version="1", model="m",
                   workdir="/w", trace_path="/w/t", context_id="ctx", record_path=None,
                   max_turns=4, tools=(), max_session_tokens=None, capabilities=(),
                   context_max_tokens=None)
    state.apply(started)
    state.apply(make(ev.TaskStarted, task_id="t1", context_id="ctx", text="x"))
    assert state.kind == "busy"
    state.apply(make(ev.TaskEnded, task_id="t1", exit_status="ok", result="r", duration_ms=1,
                     turns=1, input_tokens=10, output_tokens=2, tool_calls=0,
                     shell_calls=0))
    assert state.kind == "waiting" and state.line().startswith("waiting for the next task")
    state.apply(make(ev.SessionEnded, exit_status="ok", duration_ms=1, total_turns=1,
                     total_input_tokens=10, total_output_tokens=2, total_tool_calls=0,
                     total_shell_calls=0))
    assert state.kind == "finished"
    state.apply(started)  # the same session told again (an attached one's own start)
    assert state.kind == "finished" and state.exit_status == "ok"  # not a follow-up
    state.apply(dataclasses.replace(started, session_id="ses_follow"))  # the follow-up's start
    assert state.kind == "busy" and state.exit_status is None and state.result == ""


def test_two_identical_prompts_are_two_tasks_told_apart_by_their_ids() -> None:
    queue = TaskQueue()
    one, two = queue.add("same"), queue.add("same")
    assert one.task_id != two.task_id and one.task_id.startswith("tsk_")
    one.sent = two.sent = True
    assert queue.started(two.task_id) and queue.items == [one]  # the second, not the first
    assert not queue.started(two.task_id)
