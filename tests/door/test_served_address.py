"""`launch --serve` on the screen: the door's address is drawn in the header, at 80 columns
too (the session id shortened to its end before it gives way), and goes when the session ends
(the door closes with it)."""

from __future__ import annotations

from pathlib import Path

from tests.capsules import write_capsule
from tests.door.test_screen_serve import served_app
from tests.responses import text_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.models.fitting import fit_header, short_id


def header(app: SupervisorApp) -> str:
    return str(app.supervisor.header.render())


async def test_the_served_address_shows_in_the_header_at_80_columns(
        tmp_path: Path, murmur_home: Path) -> None:
    root = write_capsule(tmp_path / "c", [text_response("done")], name="served",
                         version="2.0.1", max_turns=None,
                         lifecycle={"task_acceptance": "queue", "after_task": "sleep"})
    app, session = served_app(root, murmur_home)
    assert app.local is not None and app.local.serving is not None
    address = f"serving {app.local.serving.url}"
    async with app.run_test(size=(80, 24)) as pilot:
        narrow = f"served 2.0.1  ·  {short_id(session.session_id)}  ·  {address}"
        await wait_until(pilot, lambda: header(app) == narrow, what=lambda: header(app))
        await pilot.resize_terminal(160, 30)
        wide = f"served 2.0.1  ·  model test-model  ·  {session.session_id}  ·  {address}"
        await wait_until(pilot, lambda: header(app) == wide, what=lambda: header(app))


async def test_the_address_goes_when_the_door_closes_with_the_session(
        tmp_path: Path, murmur_home: Path) -> None:
    root = write_capsule(tmp_path / "c", [text_response("done")], name="served",
                         max_turns=None)
    app, session = served_app(root, murmur_home)
    async with app.run_test(size=(160, 30)) as pilot:
        assert app.sub_title.startswith("serving http://127.0.0.1:")
        await wait_until(pilot, lambda: app.state.exit_status is not None)
        ended = f"served 1.0.0  ·  model test-model  ·  {session.session_id}"
        await wait_until(pilot, lambda: header(app) == ended, what=lambda: header(app))


def test_what_gives_way_first_in_a_narrow_header() -> None:
    sid = "ses_0123456789abcdef0123456789abcdef"
    door = "serving http://127.0.0.1:40123"

    def line(width: int | None, served: str = door) -> str:
        return fit_header("coder", "1.2.0", "claude-sonnet-4-5", sid, width, served)

    assert line(120, "") == f"coder 1.2.0  ·  model claude-sonnet-4-5  ·  {sid}"
    assert line(112) == f"coder 1.2.0 · model claude-sonnet-4-5 · {sid} · {door}"
    assert line(90) == f"coder 1.2.0 · model claude-sonnet-4-5 · ses_…789abcdef · {door}"
    assert line(78) == f"coder 1.2.0  ·  ses_…789abcdef  ·  {door}"
    assert line(50) == f"ses_…789abcdef  ·  {door}"
    assert fit_header("murmur-tui", "", "", "", 78, door) == f"murmur-tui  ·  {door}"
    assert fit_header("murmur-tui", "", "", "", None, "") == "murmur-tui"
