"""A formation member's screen at 80×24 with a call out: the call's line counting, the callee
busy before it took the task, and the status bar waiting on the callee (the clocks standing
still, so the picture is the same whenever it is taken). Update with `--snapshot-update` and
look at the SVG before committing it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.app.conftest import replay, settle
from tests.app.test_snapshots import StoppedClock
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.core.events import vocabulary as ev

AT = 1_796_000_000_000
SES, TASK = "ses_019a2f7c3d4e7a8b9c0d1e2f3a4b5c6d", "tsk_019a2f7c3d4e7a8b9c0d1e2f3a4b5c70"
FRM = "frm_019a2f7c3d4e7a8b9c0d1e2f3a4b5c71"


def stamp(seq: int, event: ev.Event) -> ev.Event:
    object.__setattr__(event, "session_id", SES)
    object.__setattr__(event, "seq", seq)
    object.__setattr__(event, "ts_ms", AT + seq * 100)
    return event


def member_events() -> list[ev.Event]:
    ask = {"member": "coder", "task": "Fix the off-by-one in parse.py and run its tests"}
    events: list[ev.Event] = [
        ev.SessionStarted(capsule_name="team-lead", capsule_version="0.1.0",
                          model="claude-sonnet-4-5", workdir="/w", trace_path="",
                          context_id="ctx_1", record_path=None, max_turns=8, tools=(),
                          formation_id=FRM, formation_member="lead",
                          formation_callees=("coder", "reviewer")),
        ev.TaskStarted(task_id=TASK, context_id="ctx_1",
                       text="Ship the parser fix: have coder fix it, reviewer check it."),
        ev.TurnStarted(task_id=TASK, turn=0, max_turns=8, input_tokens=812),
        ev.TextDelta(task_id=TASK, turn=0, text="I'll hand the fix to coder."),
        ev.MemberCallBusy(task_id=TASK, member="coder", attempt=1, retry_in_ms=1_000),
        ev.ToolCallStarted(task_id=TASK, turn=0, call_id="c1", tool_name="call-member",
                           kind="unknown", input=ask),
        ev.ToolCallFinished(task_id=TASK, turn=0, call_id="c1", tool_name="call-member",
                            kind="unknown", status="ok", duration_ms=41, input=ask,
                            input_bytes=80, output="Called coder: started", output_bytes=21),
        ev.MemberCallStarted(task_id=TASK, call_id="mcl_1", member="coder", task=ask["task"],
                             callee_task_id="tsk_c", turn=0),
        ev.TurnCompleted(task_id=TASK, turn=0, input_tokens=812, output_tokens=64,
                         decision="end_turn", stop_reason="end_turn", tool_name=None,
                         model="claude-sonnet-4-5"),
    ]
    return [stamp(seq, event) for seq, event in enumerate(events, 1)]


def test_a_member_waiting_on_its_callee_at_80x24(snap_compare: Any, murmur_home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.app.models import status
    from tui.app.widgets import transcript

    monkeypatch.setattr(status, "time", StoppedClock)
    monkeypatch.setattr(transcript, "now_ms", lambda: AT + 12_900)  # the call out 12 s

    async def waiting(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, SupervisorApp)
        app.supervisor.prompt.cursor_blink = False
        await replay(pilot, member_events())
        view = app.supervisor.transcript
        await wait_until(pilot, lambda: app.idle and view.scroll_y >= view.max_scroll_y
                         and app.state.kind == "calls")
        await settle(pilot)

    assert snap_compare(SupervisorApp(murmur_home), terminal_size=(80, 24), run_before=waiting)
