"""The fleet screen under Pilot, over real `murmur-tui launch --headless --serve` processes:
found from their running records, answered inline, sent a task, canceled and stopped through
their doors, and a stale record shown as gone."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from textual.pilot import Pilot

from tests.app.conftest import keep_notes
from tests.conftest import CapsuleFactory
from tests.responses import call_response, text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tests.wasm.conftest import FIXTURES
from tui.app.fleet.app import FleetApp
from tui.app.fleet.model import FleetSession
from tui.app.screens.confirm import ConfirmScreen

ASK = [call_response("ask", {"q": "which branch?"}), text_response("thanks")]


def ask_capsule(make_capsule: CapsuleFactory, folder: str) -> Path:
    return make_capsule(ASK * 3, extra=SLEEP + "  input_timeout_secs: 120\n", folder=folder,
                        name=folder, tools={"ask": FIXTURES / "ask_tool.wasm"})


def row(app: FleetApp, door: Served) -> FleetSession:
    return app.sessions[door.session_id]


async def until_state(door: Served, task_id: str, state: str) -> dict[str, object]:
    return await asyncio.to_thread(door.until, task_id, state)


def kill_launched(app: FleetApp) -> None:
    """Whatever the fleet launched and a failed test left running."""
    for item in app.launched:
        if item.process.poll() is None:
            item.process.kill()
            item.process.wait(10)


async def type_in(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")


async def confirmed(pilot: Pilot[None], key: str) -> None:
    """`x` or `S`, and Enter on the question it asks first."""
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
    await pilot.press("enter")


async def test_three_sessions_answered_tasked_canceled_and_stopped_from_the_fleet(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    first, second = serve(ask_capsule(make_capsule, "asker")), \
        serve(ask_capsule(make_capsule, "asker-two"))
    plain = serve(make_capsule([text_response("hello to you")], extra=SLEEP, folder="plain",
                               name="plain"))
    served.extend([first, second, plain])
    app = FleetApp(murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.sessions) == 3 and all(
            s.connection == "live" for s in app.sessions.values()))
        assert {s.capsule for s in app.sessions.values()} == {"asker", "asker-two", "plain"}
        one, two = first.send("ask me"), second.send("ask me too")
        await wait_until(pilot, lambda: row(app, first).group == "needs" and
                       row(app, second).group == "needs")
        assert row(app, first).question is not None
        assert "which branch?" in row(app, first).question.prompt  # type: ignore[union-attr]
        assert row(app, first).task == "ask me"  # what it was asked, from the door
        # the fleet's list says so: both under Needs you, numbered first
        shown = [r.key for r in app.fleet.rows.rows]
        assert shown.index("group:needs") < shown.index(first.session_id) < \
            shown.index("group:working")
        # answer the first inline, without opening it
        app.fleet.rows.select_key(first.session_id)
        await pilot.press("a")
        assert app.fleet.input.display and "which branch?" in str(app.fleet.hint.render())
        await type_in(pilot, "main")
        done = await until_state(first, one["id"], "TASK_STATE_COMPLETED")
        assert done["artifacts"][0]["parts"][0]["text"] == "thanks"  # type: ignore[index]
        await wait_until(pilot, lambda: row(app, first).group == "done")
        assert row(app, first).status == "idle · last ok"
        # a task for the plain session, typed on the fleet screen
        app.fleet.rows.select_key(plain.session_id)
        await pilot.press("t")
        await type_in(pilot, "say hello")
        await wait_until(pilot, lambda: row(app, plain).last_task_status == "ok")
        assert row(app, plain).task == "say hello"
        # cancel the second's waiting task
        app.fleet.rows.select_key(second.session_id)
        await confirmed(pilot, "x")
        canceled = await until_state(second, two["id"], "TASK_STATE_CANCELED")
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"  # type: ignore[index]
        await wait_until(pilot, lambda: row(app, second).group == "done")
        # stop the plain session: its process ends and its record goes
        app.fleet.rows.select_key(plain.session_id)
        await confirmed(pilot, "S")
        assert await asyncio.to_thread(plain.process.wait, 30) == 0
        assert not (murmur_home / "running" / f"{plain.session_id}.json").exists()
        await wait_until(pilot, lambda: row(app, plain).group == "done" and
                       row(app, plain).status.startswith(("ended", "gone")))
        totals = str(app.fleet.totals.render())
        assert totals.startswith("3 sessions") and "0 need you" in totals


async def test_a_stale_record_is_shown_as_gone_with_why(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    live = serve(make_capsule([text_response("x")], extra=SLEEP))
    served.append(live)
    record = json.loads((murmur_home / "running" / f"{live.session_id}.json").read_text())
    dead = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await dead.wait()
    stale = {**record, "session_id": "ses_0000000000000000000000000000dead", "pid": dead.pid}
    (murmur_home / "running" / f"{stale['session_id']}.json").write_text(json.dumps(stale))
    (murmur_home / "running" / f"{stale['session_id']}.json").chmod(0o600)
    broken = murmur_home / "running" / "ses_broken.json"
    broken.write_text('{"session_id": "ses_broken", "pid": "\u001b]0;pwned\u0007"')
    broken.chmod(0o600)
    app = FleetApp(murmur_home)
    said = keep_notes(app)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: len(app.sessions) == 2 and
                       app.sessions[live.session_id].connection == "live")
        gone = app.sessions[stale["session_id"]]
        assert gone.group == "needs" and gone.status.startswith("gone: ")
        assert str(dead.pid) in gone.status or "not running" in gone.status
        # it died before this screen opened: shown under Needs you, never told; `d` puts
        # it aside, under Done
        assert gone.told_gone and not gone.seen_running
        assert not [n for n in said if "is gone" in n]
        app.fleet.rows.select_key(gone.session_id)
        await pilot.press("d")
        await wait_until(pilot, lambda: gone.group == "done")
        assert gone.status.startswith("gone: ")
        told = [t for t in app.told_problems if "ses_broken.json" in t]
        assert told and "ses_broken" not in app.sessions  # said, never followed


async def test_a_session_launched_from_the_fleet_asks_and_is_answered_inline(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    root = ask_capsule(make_capsule, "launched")
    app = FleetApp(murmur_home)
    try:
        async with app.run_test(size=(160, 30)) as pilot:
            await pilot.press("n")
            await type_in(pilot, f"{root}  ask me")
            await wait_until(pilot, lambda: len(app.sessions) == 1 and next(
                iter(app.sessions.values())).group == "needs", within=60)
            session = next(iter(app.sessions.values()))
            assert session.origin == "launched" and session.capsule == "launched"
            assert "·new" in app.fleet.rows.get(session.session_id).shown()[2]  # type: ignore[union-attr]
            await pilot.press("a")
            await type_in(pilot, "main")
            await wait_until(pilot, lambda: session.last_task_status == "ok")
            await confirmed(pilot, "S")
            process = app.launched[0].process if app.launched else None
            await wait_until(pilot, lambda: session.group == "done" and
                           session.status.startswith(("ended", "gone")))
        if process is not None:
            assert await asyncio.to_thread(process.wait, 30) == 0
    finally:
        kill_launched(app)
