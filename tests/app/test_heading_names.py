"""The supervisor screen's header and a session's name: a served session waiting for its first
task is headed by its name and id (not `murmur-tui` alone), and an open screen takes a rename
done elsewhere (names.json changed) — header and terminal title — without being reopened."""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import answerable
from tests.app.test_attention import output, plain_terminal, written  # noqa: F401 - fixtures
from tests.app.test_names_screen import nightly
from tests.app.test_small_terminal import screen_rows
from tests.capsules import write_capsule
from tests.responses import text_response
from tests.served import SLEEP
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.core import names
from tui.core.asking.questions import QuestionBoard
from tui.core.door import Door
from tui.core.door.serving import Serving
from tui.core.loop.build import SessionSpec, build_session
from tui.core.loop.launch import LaunchOptions
from tui.core.manifest.reader import load_capsule


async def test_a_served_session_waiting_for_its_first_task_is_headed_by_its_name(
        tmp_path: Path, murmur_home: Path) -> None:
    root = write_capsule(tmp_path / "c", [text_response("done")], name="coder", extra=SLEEP)
    app = SupervisorApp(murmur_home)
    capsule = load_capsule(root)
    board = QuestionBoard()
    door = Door(capsule, board)
    session = build_session(SessionSpec(
        capsule, LaunchOptions(name="nightly"), sinks=[app.bridge, door.sink],
        responder=app.responder, cancel=app.cancel))
    app.attach(session)
    serving = Serving.start(door, session)
    assert serving.waits  # no task: the door brings the first
    app.serve(serving, board)
    async with app.run_test(size=(80, 24)) as pilot:
        header = f"nightly  ·  ses_…{session.session_id[-9:]}  ·  coder 1.0.0  ·  " \
                 f"serving {serving.url}"
        await wait_until(pilot, lambda: screen_rows(app)[0].strip() == header,
                         what=lambda: screen_rows(app)[0])
        assert app.state.tasks_ended == 0 and not app.state.session_id  # nothing started
        # renamed while it waits: the header follows
        names.give(murmur_home, session.session_id, "release 2.1")
        header = f"release 2.1 · ses_…{session.session_id[-9:]} · coder 1.0.0 · " \
                 f"serving {serving.url}"  # a longer name: the narrower separator
        await wait_until(pilot, lambda: screen_rows(app)[0].strip() == header,
                         what=lambda: screen_rows(app)[0])
        await pilot.press("ctrl+q")


async def test_an_open_screen_takes_a_rename_done_elsewhere(
        tmp_path: Path, murmur_home: Path, written: list[str]) -> None:  # noqa: F811
    app = SupervisorApp(murmur_home)
    session = nightly(app, tmp_path)
    short = f"ses_…{session.session_id[-9:]}"
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        await wait_until(pilot, lambda: "\x1b]2;? nightly — question\x07" in output(written))
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press("escape")  # the dialog steps aside; the question still waits
        await wait_until(pilot, lambda: app.screen is app.supervisor)
        await wait_until(pilot, lambda: screen_rows(app)[0].strip().startswith(
            f"nightly  ·  {short}"), what=lambda: screen_rows(app)[0])
        names.give(murmur_home, session.session_id, "release 2.1")  # `R` in the fleet
        await wait_until(pilot, lambda: screen_rows(app)[0].strip().startswith(
            f"release 2.1  ·  {short}"), what=lambda: screen_rows(app)[0])
        await wait_until(pilot, lambda: "\x1b]2;? release 2.1 — question\x07"
                         in output(written))
        await pilot.press("ctrl+q")
