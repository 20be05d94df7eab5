"""Names in the fleet, under Pilot over real served sessions: a named session's row shows its
name where an unnamed one shows its shortened id, `R` renames it (shown at once, kept in
`$MURMUR_HOME/tui/names.json`, taken by the next read of the records), and a name that is
not printable text is refused, the row left as it was."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from tests.conftest import CapsuleFactory
from tests.fleet.test_fleet_screen import ask_capsule
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tui.app.fleet.app import FleetApp
from tui.core import names


def screen_rows(app: FleetApp) -> list[str]:
    return ["".join(segment.text for segment in strip).rstrip()
            for strip in app.screen._compositor.render_strips()]


def shown(app: FleetApp, text: str) -> bool:
    return any(text in line for line in screen_rows(app))


async def rename_to(pilot: Pilot[int], app: FleetApp, old: str, new: str) -> None:
    await pilot.press("R")
    await wait_until(pilot, lambda: app.fleet.input.display)
    assert app.fleet.input.value == old  # the name it has, to edit
    app.fleet.input.value = ""
    await pilot.press(*new, "enter")


async def test_a_session_is_shown_renamed_and_refused_a_hostile_name_in_the_fleet(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    named = serve(make_capsule([text_response("x")], extra=SLEEP, folder="plain",
                               name="plain"), "--name", "nightly")
    other = serve(make_capsule([text_response("y")], extra=SLEEP, folder="other",
                               name="other"))
    served.extend([named, other])
    app = FleetApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: len(app.sessions) == 2 and all(
            s.connection == "live" for s in app.sessions.values()))
        await wait_until(pilot, lambda: shown(app, "nightly        plain"))
        assert shown(app, f"ses_…{other.session_id[-9:]} other")  # no name: the id
        app.fleet.rows.select_key(named.session_id)
        await wait_until(pilot, lambda: shown(app, f"nightly · {named.session_id} · plain"))
        await rename_to(pilot, app, "nightly", "release 2.1")
        await wait_until(pilot, lambda: shown(app, "release 2.1    plain"))
        assert shown(app, f"release 2.1 · {named.session_id} · plain")
        assert names.read(murmur_home)[named.session_id] == "release 2.1"
        # the next read of the records keeps it (names.json wins over the record's `name`)
        app.fleet.rows.select_key(other.session_id)
        await rename_to(pilot, app, "", "scratch")
        await wait_until(pilot, lambda: shown(app, "scratch        other"))
        # a name given elsewhere (another fleet, `launch --resume --name`) comes with the
        # next read of the records
        names.give(murmur_home, other.session_id, "from elsewhere")
        await wait_until(pilot, lambda: shown(app, "from elsewhere other"))
        assert shown(app, "release 2.1    plain")
        app.fleet.rows.select_key(named.session_id)
        await pilot.press("R")
        await wait_until(pilot, lambda: app.fleet.input.display)
        app.fleet.input.value = "bad\x1b]0;pwned\x07"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(
            "Not renamed: a session's name holds only printable characters; this one holds "
            "U+001B." in str(n.message) for n in app._notifications))
        assert app.sessions[named.session_id].name == "release 2.1"
        assert names.read(murmur_home)[named.session_id] == "release 2.1"
        assert not shown(app, "pwned")


async def test_a_question_is_told_by_the_name_of_the_session_that_asks(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(ask_capsule(make_capsule, "asker"), "--name", "cat census")
    served.append(door)
    app = FleetApp(murmur_home)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: door.session_id in app.sessions and
                         app.sessions[door.session_id].connection == "live")
        door.send("ask me")
        said = f"cat census ({door.session_id}) asks: "
        await wait_until(pilot, lambda: any(str(n.message).startswith(said)
                                            for n in app._notifications))
