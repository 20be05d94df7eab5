"""An abandoned row says what ended it: work still running when its session ended is killed
(docs/tools.md "Background work"; Murmur's `shell_abandoned` with no `exit_code`, spec
murmur-newest.md "Background shell"), and the Background pane's exit column reads `killed`
instead of staying blank, the tail's first line saying why."""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import leave_prompt
from tests.app.test_background_pane import TICKS
from tests.capsules import write_capsule
from tests.conftest import read_jsonl
from tests.fakes import start_session as start
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp


async def test_work_the_sessions_end_killed_shows_killed_in_the_exit_column(
        tmp_path: Path, murmur_home: Path) -> None:
    root = write_capsule(tmp_path / "c", [tool_response(TICKS, "s1"),
                                          text_response("done, it runs on")],
                         name="bg", max_turns=None, lifecycle={"shell_grace_secs": 0.3})
    app = SupervisorApp(murmur_home)
    session = start(app, root)
    async with app.run_test(size=(160, 45)) as pilot:
        pane = app.supervisor.work_pane
        await wait_until(pilot, lambda: bool(pane.rows.rows)
                         and pane.rows.rows[0].cells[1] == "abandoned", within=60)
        await leave_prompt(pilot)  # out of the prompt: the Background pane
        await pilot.press("4")
        row = pane.rows.rows[0]
        assert row.cells[2] == "killed"
        work_id = next(iter(pane.work))
        await wait_until(pilot, lambda: str(pane.tail.render()).startswith(work_id))
        assert str(pane.tail.render()).splitlines()[0] == (
            f"{work_id} · abandoned · killed: the session ended while it ran")
        drawn = pane.rows.render_line(0).text
        assert "abandoned  killed " in drawn, drawn
    abandoned = [line for line in read_jsonl(session.paths.trace)
                 if line["event_type"] == "shell_abandoned"]
    assert len(abandoned) == 1 and abandoned[0].get("exit_code") is None
