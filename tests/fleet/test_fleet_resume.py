"""`r` in the fleet on a served session SIGKILLed while its replay-safe tool asked: the row shows
gone, `r` starts a served session resuming it, whose question — asked again, marked asked
before the restart — arrives on the new row and is answered there with `a`; the dead task ends
with that answer. `r` on a live row says why nothing is resumed."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

from tests.app.conftest import keep_notes
from tests.conftest import read_jsonl
from tests.fleet.test_fleet_screen import confirmed, kill_launched, type_in
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tests.wasm.test_durable_questions import asking_capsule
from tui.app.fleet.app import FleetApp
from tui.core.loop.journal import JOURNAL


def capsule(tmp_path: Path) -> Path:
    return asking_capsule(tmp_path, "durable-fleet", SLEEP)


def journaled_ask(root: Path) -> list[Path]:
    return [path for path in root.glob(f"workdir/*/{JOURNAL}") if '"asked"' in path.read_text()]


async def test_r_on_a_killed_served_session_resumes_it_and_its_question_is_answered_inline(
        tmp_path: Path, murmur_home: Path, served: list[Served]) -> None:
    root = capsule(tmp_path)
    door = serve(root)
    served.append(door)
    task = door.send("pick one")
    app = FleetApp(murmur_home)
    said = keep_notes(app)
    try:
        async with app.run_test(size=(160, 30)) as pilot:
            await wait_until(pilot, lambda: door.session_id in app.sessions and
                           app.sessions[door.session_id].question is not None, within=60)
            dead = app.sessions[door.session_id]
            # r on a live row resumes nothing, and says why
            app.fleet.rows.select_key(dead.session_id)
            await pilot.press("r")
            await wait_until(pilot, lambda: any("is running" in note for note in said))
            assert not app.launched
            await wait_until(pilot, lambda: bool(journaled_ask(root)))
            door.process.send_signal(signal.SIGKILL)
            await asyncio.to_thread(door.process.wait, 30)
            await wait_until(pilot, lambda: dead.connection == "gone")
            assert dead.status.startswith("gone")
            # the rebuilt turn runs the call again (its replay is safe); the model, called
            # next, ends the task
            (root / "script.json").write_text(json.dumps([text_response("done")]), encoding="utf-8")
            app.fleet.rows.select_key(dead.session_id)
            await pilot.press("r")
            await wait_until(pilot, lambda: any(s.resumes == dead.session_id
                                              for s in app.sessions.values()), within=60)
            later = next(s for s in app.sessions.values() if s.resumes == dead.session_id)
            assert later.session_id != dead.session_id and later.origin == "launched"
            await wait_until(pilot, lambda: later.question is not None, within=60)
            assert later.question is not None
            assert later.question.before_restart
            assert later.question.task_id == task["id"]  # the dead task goes on
            # what the dead task was asked, and the row under Needs you
            await wait_until(pilot, lambda: later.task == "pick one" and later.group == "needs")
            app.fleet.rows.select_key(later.session_id)
            await wait_until(pilot, lambda: str(app.fleet.detail.render()).startswith(
                later.session_id))
            detail = str(app.fleet.detail.render())
            assert f"resumes {dead.session_id}" in detail
            assert "asks (asked before the restart):" in detail
            shown = app.fleet.rows.get(later.session_id)
            assert shown is not None and "(asked before the restart)" in shown.shown()[6]
            # a second r on the dead row starts nothing more
            app.fleet.rows.select_key(dead.session_id)
            await pilot.press("r")
            await wait_until(pilot, lambda: any("already resumed" in note for note in said))
            app.fleet.rows.select_key(later.session_id)
            await pilot.press("a")
            await wait_until(pilot, lambda: "(asked before the restart)" in str(
                app.fleet.hint.render()))
            await type_in(pilot, "main")
            await wait_until(pilot, lambda: later.last_task_status == "ok", within=60)
            assert later.question is None and later.task_id == task["id"]
            await confirmed(pilot, "S")
            await wait_until(pilot, lambda: later.status.startswith(("ended", "gone")))
        process = app.launched[0].process if app.launched else None
        if process is not None:
            assert await asyncio.to_thread(process.wait, 30) == 0
    finally:
        kill_launched(app)
    # the answer typed in the fleet reached the tool once, in the resumed session's journal
    folders = [p.parent for p in journaled_ask(root) if p.parent.name != dead.session_id]
    assert len(folders) == 1
    journal = read_jsonl(folders[0] / JOURNAL)
    assert [a["answer"] for a in journal if a["event"] == "answered"] == ["main"]
    assert (folders[0] / "out" / "result.txt").read_text() == "done"
