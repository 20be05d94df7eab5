"""The fleet's "Needs you" toast and the answer box, at 80×24 under Pilot over a real served
session: `a` opens the input line at the bottom, where Textual stacks toasts, so the toasts
step up over the hint while it is open — the input and the question it answers stay clear —
and go back down once it closes."""

from __future__ import annotations

from pathlib import Path

from textual.geometry import Region
from textual.widgets._toast import Toast

from tests.conftest import CapsuleFactory
from tests.fleet.test_fleet_names import screen_rows, shown
from tests.fleet.test_fleet_screen import ask_capsule
from tests.served import Served, serve
from tests.waits import wait_until
from tui.app.fleet.app import FleetApp


def toast_regions(app: FleetApp) -> list[Region]:
    return [toast.region for toast in app.screen.query(Toast) if toast.region]


def toast_text(app: FleetApp) -> str:
    """What the toasts on screen say, title and message, as the rows show them."""
    return " ".join(" ".join(line.strip() for line in screen_rows(app)[r.y:r.bottom])
                    for r in toast_regions(app))


async def test_the_needs_you_toast_never_covers_the_answer_box(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(ask_capsule(make_capsule, "asker"), "--name", "cat census")
    served.append(door)
    app = FleetApp(murmur_home)
    # toasts drawn, as on a terminal (Pilot leaves them out unless asked)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: door.session_id in app.sessions and
                         app.sessions[door.session_id].connection == "live")
        door.send("ask me")
        await wait_until(pilot, lambda: toast_regions(app) and "cat census" in toast_text(app),
                         what=lambda: (toast_text(app), screen_rows(app)))
        (bottom,) = toast_regions(app)  # where Textual puts it: over the bottom rows
        await pilot.press("a")
        await wait_until(pilot, lambda: app.fleet.input.display and app.fleet.input.region)
        box, hint = app.fleet.input.region, app.fleet.hint.region
        assert box.overlaps(bottom)  # left where it was, the toast would cover the box
        await wait_until(pilot, lambda: toast_regions(app) != [bottom],
                         what=lambda: (toast_regions(app), box, hint))
        (lifted,) = toast_regions(app)
        assert not lifted.overlaps(box) and not lifted.overlaps(hint)
        assert lifted.bottom <= hint.y and lifted.right == bottom.right
        assert "Needs you" in toast_text(app)  # still there to read
        # the hint over the box: what is being answered, the session called by its name
        assert str(app.fleet.hint.render()) == \
            f'cat census ({door.session_id}) asks: {{"q":"which branch?"}}'
        assert shown(app, "cat census (ses_")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.fleet.input.display)
        await wait_until(pilot, lambda: toast_regions(app) == [bottom],
                         what=lambda: toast_regions(app))
