"""The Background pane under Pilot: a real shell command demoted after
`lifecycle.shell_grace_secs` is listed as running with its log's tail followed live, `x` stops
it (recorded shell_abandoned, reason stopped) and the row says so."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import leave_prompt
from tests.capsules import write_capsule
from tests.fakes import start_session as start
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp

TICKS = "for i in $(seq 100000); do echo tick $i; sleep 0.1; done"


def background_capsule(root: Path) -> Path:
    return write_capsule(root, [tool_response(TICKS, "s1"), text_response("it runs on")],
                         name="bg", max_turns=None,
                         lifecycle={"task_acceptance": "queue", "after_task": "sleep",
                                    "shell_grace_secs": 0.3})


async def test_background_work_is_listed_tailed_live_and_stopped(
        tmp_path: Path, murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    session = start(app, background_capsule(tmp_path / "c"))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.supervisor
        pane = screen.work_pane
        await wait_until(pilot, lambda: pane.running == 1, within=60)
        await leave_prompt(pilot)  # out of the prompt: the pane, its list in focus
        await pilot.press("4")
        await wait_until(pilot, lambda: "tick" in str(pane.tail.render()), within=60)
        assert pane.rows.has_focus
        row = pane.rows.rows[0]
        assert row.cells[1] == "running" and "tick" in row.cells[3]
        assert "Background (1 running)" in str(
            screen.query_one("#panes").get_tab("tab-background").label)  # type: ignore[attr-defined]

        def last_tick() -> int:
            ticks = [line for line in str(pane.tail.render()).splitlines()
                     if line.startswith("tick ")]
            return int(ticks[-1].split()[1]) if ticks else 0

        seen = last_tick()
        await wait_until(pilot, lambda: last_tick() > seen + 2, within=60)  # followed live
        await pilot.press("x")  # no click needed: 4 gave the list the keys
        await wait_until(pilot, lambda: pane.rows.rows[0].cells[1] == "abandoned (stopped)",
                       within=60)
        assert pane.rows.rows[0].cells[2] == "137" and pane.running == 0
        abandoned = [line for line in map(json.loads, session.paths.trace.read_text()
                                          .splitlines())
                     if line["event_type"] == "shell_abandoned"]
        assert [(a["reason"], a["exit_code"]) for a in abandoned] == [("stopped", 137)]
        await pilot.press("x")  # nothing runs now: said, nothing else happens
