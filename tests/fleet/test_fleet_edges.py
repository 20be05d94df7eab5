"""The fleet screen's edges, under Pilot over real served sessions (`launch --headless --serve`):
a heading over its columns at 80 and 60 columns, the first highlight on the first row, `x` and
`S` asking first, one "Needs you" toast per question however often the stream reports it, and a
session whose process was killed shown *gone* under Needs you at once, its question no longer
answerable, until `r` resumes it — then under Done for good."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App

from tests.app.conftest import keep_notes
from tests.conftest import CapsuleFactory
from tests.fleet.test_fleet_screen import ask_capsule, kill_launched, row, until_state
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tui.app.fleet.app import FleetApp
from tui.app.screens.confirm import ConfirmScreen

HEADING_80 = "#  session        capsule        status             waited tokens   task / quest"
HEADING_60 = "#  session        capsule        status             waited t"
PROMPT = '{"q":"which branch?"}'  # what the test capsule's asking tool asks


def screen_lines(app: App[Any]) -> list[str]:
    """The screen's lines as a terminal shows them."""
    update = app.screen._compositor.render_full_update()
    return ["".join(strip.text for strip in line) for line in update.strips]


def line_of(app: App[Any], start: str) -> str:
    return next((line for line in screen_lines(app) if line.startswith(start)), "")


def asks_notes(said: list[str], door: Served) -> list[str]:
    return [note for note in said if f"({door.session_id}) asks" in note]


def all_told(app: FleetApp) -> bool:
    """Every question noticed has been checked with its door, and told if it still waits."""
    return not [w for w in app.workers if w.group == "tell" and not w.is_finished]


async def answer(door: Served, task: dict[str, Any], text: str) -> None:
    """The question answered through the door, as `attach` or another client would."""
    await asyncio.to_thread(door.send, text, taskId=task["id"], contextId=task["contextId"])
    await until_state(door, task["id"], "TASK_STATE_COMPLETED")


async def test_the_heading_names_each_column_over_it_at_80_and_60_columns(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("hi")], extra=SLEEP, folder="plain",
                              name="plain"))
    served.append(door)
    task = door.send("say hi")
    await until_state(door, task["id"], "TASK_STATE_COMPLETED")
    app = FleetApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: line_of(app, "1  ").startswith(
            f"1  ses_…{door.session_id[-9:]} plain          idle · last ok     "),
            what=lambda: screen_lines(app)[:6])
        await wait_until(pilot, lambda: line_of(app, "1  ").rstrip().endswith("say hi"))
        lines = screen_lines(app)
        assert lines[1] == HEADING_80  # each name over its column, letter for letter
        assert lines[2] == "   Needs you (0)".ljust(80)
        shown = line_of(app, "1  ")
        for name, cell in (("session", "ses_…"), ("capsule", "plain"), ("status", "idle"),
                           ("task / quest", "say hi")):
            assert shown.index(cell) == HEADING_80.index(name), (name, shown)
        waited, tokens = shown[HEADING_80.index("waited"):].split()[:3:2]
        assert waited.isdigit() and tokens.replace(",", "").isdigit(), shown
        await pilot.resize_terminal(60, 20)
        await wait_until(pilot, lambda: screen_lines(app)[1] == HEADING_60,
                         what=lambda: screen_lines(app)[:4])
        shown = line_of(app, "1  ")
        assert len(shown) == 60 and shown.index("idle") == HEADING_60.index("status")


async def test_the_first_highlight_is_the_first_row_until_the_person_moves_it(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    idle = serve(make_capsule([text_response("hi")], extra=SLEEP, folder="idle", name="idle"))
    served.append(idle)
    app = FleetApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: idle.session_id in app.sessions and
                         row(app, idle).connection == "live")
        await wait_until(pilot, lambda: line_of(app, " ses_").startswith(
            f" {idle.session_id} · idle"))
        assert app.fleet.rows.highlighted == idle.session_id
        # a session found later asks: it goes to the top, under Needs you, and the highlight
        # goes with the first row
        asker = await asyncio.to_thread(serve, ask_capsule(make_capsule, "asker"))
        served.append(asker)
        await wait_until(pilot, lambda: asker.session_id in app.sessions and
                         row(app, asker).connection == "live")
        asker.send("ask me")
        await wait_until(pilot, lambda: row(app, asker).group == "needs")
        await wait_until(pilot, lambda: line_of(app, "1  ").startswith(
            f"1  ses_…{asker.session_id[-9:]} asker"))
        await wait_until(pilot, lambda: line_of(app, " ses_").startswith(
            f" {asker.session_id} · asker"), what=lambda: screen_lines(app)[-5:])
        assert app.fleet.selected() is row(app, asker)
        assert app.fleet.rows.highlighted == asker.session_id
        # the person moves it: it stays on their row as the list is drawn again
        await pilot.press("2")
        assert app.fleet.rows.highlighted == idle.session_id
        drawn = app._last_draw
        await wait_until(pilot, lambda: app._last_draw > drawn)  # drawn again since
        await wait_until(pilot, lambda: line_of(app, " ses_").startswith(
            f" {idle.session_id} · idle"))
        assert app.fleet.rows.highlighted == idle.session_id


async def test_x_and_s_ask_first_naming_the_session_and_the_task(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(ask_capsule(make_capsule, "asker"))
    served.append(door)
    app = FleetApp(murmur_home)
    said = keep_notes(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: door.session_id in app.sessions and
                         row(app, door).connection == "live")
        sid = door.session_id
        await pilot.press("x")  # nothing runs: said so, nothing asked
        await wait_until(pilot, lambda: f"{sid}: no task is running." in said)
        assert not isinstance(app.screen, ConfirmScreen)
        task = door.send("ask me")
        await wait_until(pilot, lambda: row(app, door).group == "needs")
        asked = (f"Cancel the running task of {sid} (asker)?\n\ntask {task['id']}: ask me\n\n"
                 "The session goes on.\n\nEnter or y: yes · Esc or n: no")
        for keep in ("escape", "n"):  # Esc and n keep the task
            await pilot.press("x")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            assert isinstance(app.screen, ConfirmScreen) and app.screen.question == asked
            await pilot.press(keep)
            await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert not any(note.startswith("Cancel sent") for note in said)
        await until_state(door, task["id"], "TASK_STATE_INPUT_REQUIRED")
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")  # Enter cancels
        await until_state(door, task["id"], "TASK_STATE_CANCELED")
        await wait_until(pilot, lambda: f"Cancel sent to {sid}." in said)
        await wait_until(pilot, lambda: row(app, door).group == "done")

        stop = f"Stop {sid} (asker)?\n\nThe session ends and its door closes.\n\n" \
               "Enter or y: yes · Esc or n: no"
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen) and app.screen.question == stop
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert door.process.poll() is None and f"Stop sent to {sid}." not in said
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")  # y stops: the session's process ends
        assert await asyncio.to_thread(door.process.wait, 30) is not None
        await wait_until(pilot, lambda: f"Stop sent to {sid}." in said)
        # the footer says both ask (the ellipsis), S and q included at 80 columns
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "x Cancel… S Stop… q Quit" in screen_lines(app)[-1],
                         what=lambda: screen_lines(app)[-1])


async def test_a_question_is_told_once_however_often_the_stream_reports_it(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(ask_capsule(make_capsule, "asker"))
    served.append(door)
    # a question asked and answered before the fleet opens: its stream replays it
    answered = door.send("ask me")
    await until_state(door, answered["id"], "TASK_STATE_INPUT_REQUIRED")
    await answer(door, answered, "main")
    waiting = door.send("ask me again")
    await until_state(door, waiting["id"], "TASK_STATE_INPUT_REQUIRED")
    first = FleetApp(murmur_home)
    said = keep_notes(first)
    async with first.run_test(size=(100, 30)) as pilot:
        # the replay's last frame is the open question: every question is noticed by then
        await wait_until(pilot, lambda: door.session_id in first.sessions and
                         row(first, door).task_id == waiting["id"] and
                         row(first, door).group == "needs")
        await wait_until(pilot, lambda: bool(asks_notes(said, door)) and all_told(first))
        assert asks_notes(said, door) == [
            f"asker ({door.session_id}) asks: " + PROMPT]
    # the fleet screen opened again (Enter, then q on the attached screen): the same open
    # question is not told again; a new one is, once
    second = FleetApp(murmur_home, kept=first.ended(), launched=first.launched,
                      told=first.told_questions)
    said_again = keep_notes(second)
    async with second.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: door.session_id in second.sessions and
                         row(second, door).task_id == waiting["id"] and
                         row(second, door).group == "needs" and all_told(second))
        assert asks_notes(said_again, door) == []
        await answer(door, waiting, "main")
        await wait_until(pilot, lambda: row(second, door).group == "done")
        third = door.send("and again")
        await wait_until(pilot, lambda: row(second, door).task_id == third["id"] and
                         row(second, door).group == "needs")
        await wait_until(pilot, lambda: bool(asks_notes(said_again, door)) and
                         all_told(second))
        assert asks_notes(said_again, door) == [
            f"asker ({door.session_id}) asks: " + PROMPT]


def counted(app: FleetApp) -> list[int]:
    """How many times the running records were read and checked, from now on."""
    count = [0]
    found = app._discovered

    def discovered(*args: Any) -> None:
        found(*args)
        count[0] += 1

    app._discovered = discovered  # type: ignore[method-assign]
    return count


def groups_drawn(app: FleetApp, session_id: str) -> list[str]:
    """The group the session's row is drawn in, at every redraw from now on."""
    seen: list[str] = []
    draw: Callable[[], None] = app.fleet.redraw

    def redraw() -> None:
        draw()
        if session_id in app.sessions:
            seen.append(app.sessions[session_id].group)

    app.fleet.redraw = redraw  # type: ignore[method-assign]
    return seen


async def test_a_killed_session_is_gone_under_needs_you_until_r_resumes_it_then_stays_done(
        tmp_path: Path, murmur_home: Path, served: list[Served]) -> None:
    from tests.fleet.test_fleet_resume import capsule, journaled_ask

    root = capsule(tmp_path)
    door = serve(root)
    served.append(door)
    door.send("pick one")
    app = FleetApp(murmur_home)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: door.session_id in app.sessions and
                             row(app, door).group == "needs", within=60)
            await wait_until(pilot, lambda: bool(journaled_ask(root)))
            dead = row(app, door)
            drawn = groups_drawn(app, door.session_id)
            door.process.kill()
            await asyncio.to_thread(door.process.wait, 30)
            await wait_until(pilot, lambda: dead.connection == "gone")
            assert dead.status == f"gone: no process holds pid {door.process.pid}"
            # gone, where its question was: the row says so, and `a` finds nothing to answer
            status = HEADING_80.index("status")
            await wait_until(pilot, lambda: line_of(app, "1  ")[status:].startswith("gone · 0:"),
                             what=lambda: screen_lines(app)[:6])
            assert dead.group == "needs" and line_of(app, "   Needs you").startswith(
                "   Needs you (1)")
            await pilot.press("a")
            assert not app.fleet.input.display
            left = len(drawn)
            # r resumes it in a new session; the dead row falls to Done, and stays there
            app.fleet.rows.select_key(dead.session_id)
            await pilot.press("r")
            await wait_until(pilot, lambda: dead.group == "done")
            await wait_until(pilot, lambda: any(
                s.resumes == dead.session_id and s.group == "needs"
                for s in app.sessions.values()), within=60)
            await wait_until(pilot, lambda: line_of(app, "   Needs you").startswith(
                "   Needs you (1)"))
            passes = counted(app)
            await wait_until(pilot, lambda: passes[0] >= 2)  # the records read again, twice
            assert "needs" not in drawn[drawn.index("done"):], drawn
            assert len(drawn) > left and dead.group == "done"
            assert line_of(app, "   Needs you").startswith("   Needs you (1)")
    finally:
        kill_launched(app)


async def test_a_session_with_no_door_is_running_and_gone_once_its_record_is(
        tmp_path: Path, murmur_home: Path) -> None:
    """A headless launch without --serve (a formation's entry, say) writes a record with no
    url: its row says so instead of connecting forever, and says it went when its launcher
    removed the record at its end."""
    from tui.core import ids
    from tui.core.running import records as running
    from tui.core.running.records import RunningRecord

    session_id = ids.session_id()
    running.write_record(murmur_home, RunningRecord.for_this_process(
        session_id, None, "headless", "1.0.0", tmp_path))
    app = FleetApp(murmur_home)
    async with app.run_test(size=(100, 24)) as pilot:
        shown = f"1  ses_…{session_id[-9:]} headless       "
        await wait_until(pilot, lambda: line_of(app, shown).startswith(
            shown + "running · no door "), what=lambda: screen_lines(app))
        assert app.sessions[session_id].group == "done"
        (running.running_dir(murmur_home) / f"{session_id}.json").unlink()
        await wait_until(pilot, lambda: line_of(app, shown).startswith(
            shown + "gone: no record "), what=lambda: screen_lines(app))
