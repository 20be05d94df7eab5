"""A cancel is shown as a cancel: the task stops where it was, says so at once, and a hook
that runs after it (on-task-end) cannot send it back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.fakes import Collect
from tui.core.asking.request import InputRequest
from tui.core.cancel import CancelToken
from tui.core.errors import NoAnswer
from tui.core.events import vocabulary as ev
from tui.core.events.wording import log_line, said
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

DEMO = Path(__file__).resolve().parents[2] / "tui" / "demo"


class CancelsAtTheQuestion:
    """The person cancels the session while the demo's question waits."""

    def __init__(self, cancel: CancelToken) -> None:
        self.cancel = cancel
        self.asked: list[str] = []

    def ask(self, request: InputRequest) -> str:
        self.asked.append(request.prompt)
        self.cancel.set()
        raise NoAnswer("the session was canceled")


def test_a_cancel_at_a_question_ends_the_task_before_the_review_hook_runs(
        tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    cancel = CancelToken()
    responder = CancelsAtTheQuestion(cancel)
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="hi", home=tmp_path / "home"),
                      sinks=[sink], responder=responder, cancel=cancel)
    result = session.run()
    assert responder.asked, "the demo asks its question first"
    assert result.exit_status == "canceled"
    kinds = [type(e).__name__ for e in sink.events]
    # the cancel comes first, then the task's end; the review hook (which sends a task back
    # once) ran but did not reopen a task the person stopped
    assert "TaskReopened" not in kinds
    assert kinds.index("TaskCanceled") < kinds.index("TaskEnded")
    canceled = sink.of(ev.TaskCanceled)[0]
    assert canceled.phase == "input"
    shown = said(canceled)
    assert shown is not None and "while a question waited" in shown.text
    assert log_line(canceled) == f"⊘ canceled while a question waited (turn {canceled.turn + 1})"
    trace = [json.loads(line) for line in result.paths.trace.read_text().splitlines()]
    types = [line["event_type"] for line in trace]
    assert "task_reopened" not in types
    assert types.index("task_canceled") < types.index("task_end")
    line = trace[types.index("task_canceled")]
    assert (line["phase"], line["detached_work_ids"], line["delegation_ids"]) == \
        ("input", [], [])
    assert trace[types.index("task_end")]["exit_status"] == "canceled"
    log = (result.paths.logs / "bootstrap.log").read_text()
    assert "review-hook asked to reopen task" in log and "it was canceled" in log
