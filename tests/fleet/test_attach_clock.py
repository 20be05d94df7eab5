"""An attached screen's clocks count from the session's own stamps: a call that has run for
ten minutes when the screen attaches shows ten minutes, not the seconds since attaching, and
the status bar's clock counts from the session's start."""

from __future__ import annotations

import re
import time
from pathlib import Path

from tests.door_fake import CONTEXT, SESSION, FakeDoor, ack, frame, serving, silence
from tests.fakes import Collect
from tests.remote.test_adapter import CARD
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.attach import RemoteSource
from tui.app.models.status import SessionState
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.remote.adapter import RemoteAdapter

TASK = "tsk_" + "7" * 32
AGO = 600_000  # ten minutes, in ms


def told(event: ev.Event, seq: int, at: int) -> dict[str, object]:
    """An event as murmur-tui's door tells it (tui/core/door/told.py)."""
    return {**event.to_dict(), "session_id": SESSION, "seq": seq, "ts_ms": at}


async def test_a_call_running_before_the_attach_shows_its_whole_time(
        murmur_home: Path) -> None:
    began = time.time_ns() // 1_000_000 - AGO
    started = ev.TaskStarted(task_id=TASK, context_id=CONTEXT, text="wait", source="a2a")
    turn = ev.TurnStarted(task_id=TASK, turn=0, max_turns=5, input_tokens=9)
    call = ev.ToolCallStarted(task_id=TASK, turn=0, call_id="c1", tool_name="bash",
                              kind="shell", input={"command": "sleep 900"})
    script = [ack(),
              frame("status", {"id": TASK, "context_id": CONTEXT, "status": {
                  "state": "working", "message": "inference turn 1"}, "final": False,
                  "tui": {"events": [told(started, 2, began), told(turn, 3, began)]}}, 1),
              frame("tui", {"id": TASK, "tui": {"events": [told(call, 4, began + 1000)]}}),
              silence(60)]
    with serving(FakeDoor("C", [script])) as door:
        app = SupervisorApp(murmur_home, source=RemoteSource(murmur_home, SESSION, door.url))
        async with app.run_test(size=(160, 40)) as pilot:
            rows = app.supervisor.tools.rows
            await wait_until(pilot, lambda: bool(rows.rows) and bool(rows.rows[0].cells[2]))
            assert rows.rows[0].cells[0] == "bash" and rows.rows[0].cells[1].endswith("run")
            # 9 min 59 s and counting: the session's own start of the call
            assert re.fullmatch(r"(9m59s|10m\d\ds)", rows.rows[0].cells[2]), rows.rows[0].cells
            lines = "\n".join(line for t in app.supervisor.transcript.window_turns
                              for line in t.lines.values())
            assert '→ bash {"command": "sleep 900"}' in lines
            await pilot.press("q")


def test_the_status_clock_counts_from_the_sessions_start() -> None:
    sink = Collect()
    began = time.time_ns() // 1_000_000 - AGO
    adapter = RemoteAdapter(EventStream(SESSION, [sink]), CARD, started_ms=began)
    start = adapter.started()
    assert start.ts_ms == began
    attached, local = SessionState(session_clock=True), SessionState()
    attached.apply(start)
    local.apply(start)
    assert attached.elapsed >= AGO / 1000  # the session's ten minutes
    assert local.elapsed < AGO / 1000  # a local screen (or a replay) counts from arrival
