"""A session's name on the supervisor screen: the header leads with it (the id shortened after
it, fitted at 80 columns), and the terminal's title names the session by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.conftest import answerable, recorded, replay
from tests.app.test_attention import output, plain_terminal, written  # noqa: F401 - fixtures
from tests.app.test_dialog import asking_capsule
from tests.app.test_small_terminal import screen_rows
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.models.fitting import fit_header
from tui.core import names
from tui.core.events import vocabulary as ev
from tui.core.loop.build import SessionSpec, build_session
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

SESSION = "ses_019e0f65f47b7d13a03fc432b46826b6"


def recorded_id() -> str:
    return next(e.session_id for e in recorded() if isinstance(e, ev.SessionStarted))


@pytest.mark.parametrize(("name", "header"), [
    ("nightly build",
     "nightly build · ses_…2b46826b6 · screen-fixture 1.0.0 · model fixture-model"),
    ("the long migration of the billing tables to the new cluster, p2.",  # 64 characters
     "the long migration of the billing tables to the new cluster… · ses_…2b46826b6"),
])
async def test_the_header_leads_with_the_name_and_keeps_the_id_after_it(
        murmur_home: Path, name: str, header: str) -> None:
    names.give(murmur_home, recorded_id(), name)
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await replay(pilot, recorded())
        await wait_until(pilot, lambda: screen_rows(app)[0].strip() == header)


def test_a_named_header_gives_way_in_order() -> None:
    def fitted(width: int | None, served: str = "") -> str:
        return fit_header("coder", "1.2.0", "sonnet", SESSION, width, served,
                          session_name="nightly build")

    assert fitted(None) == "nightly build  ·  ses_…2b46826b6  ·  coder 1.2.0  ·  model sonnet"
    assert fitted(60) == "nightly build · ses_…2b46826b6 · coder 1.2.0 · model sonnet"
    assert fitted(48) == "nightly build  ·  ses_…2b46826b6  ·  coder 1.2.0"
    assert fitted(36) == "nightly build  ·  ses_…2b46826b6"
    assert fitted(24) == "nightl… · ses_…2b46826b6"  # the id stays whole, the name gives
    assert fitted(14) == "ses_…2b46826b6"
    assert fitted(80, "serving http://127.0.0.1:7401") == \
        "nightly build · ses_…2b46826b6 · coder 1.2.0 · serving http://127.0.0.1:7401"


async def test_the_terminals_title_names_the_session_by_its_name(
        tmp_path: Path, murmur_home: Path, written: list[str]) -> None:  # noqa: F811
    app = SupervisorApp(murmur_home)
    session = nightly(app, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        assert "\x1b]2;? nightly — question\x07" in output(written)
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press(*"main", "enter")
        await wait_until(pilot, lambda: "\x1b]2;nightly — murmur-tui\x07" in output(written))
        rows = screen_rows(app)
        assert rows[0].strip().startswith(f"nightly  ·  ses_…{session.session_id[-9:]}")


def nightly(app: SupervisorApp, tmp_path: Path) -> Session:
    """A session named nightly whose tool asks a question, attached to `app`."""
    session = build_session(SessionSpec(
        load_capsule(asking_capsule(tmp_path / "c")), LaunchOptions(task="t", name="nightly"),
        sinks=[app.bridge], responder=app.responder, cancel=app.cancel))
    app.attach(session)
    return session
