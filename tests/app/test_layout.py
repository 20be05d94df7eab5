"""Narrow and small terminals: the supervisor stacks its panes below 100 columns (live, as the
terminal is resized), and the dialogs keep their fields and hints at 60×20."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import TabbedContent

from tests.app.conftest import leave_prompt, recorded, replay
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.approver import PendingApproval
from tui.app.screens.approve import ApproveScreen
from tui.app.screens.ask import AskScreen
from tui.app.screens.confirm import ConfirmScreen
from tui.core.asking.question import Question
from tui.core.asking.request import InputRequest
from tui.core.tools.approvals import ApprovalRequest


def on_screen(app: App[object], widget: Widget) -> bool:
    """The widget is shown whole: its region (border included) inside the terminal, and not
    cut by the container it sits in."""
    screen = Region(0, 0, app.size.width, app.size.height)
    region = widget.region
    return region.area > 0 and screen.contains_region(region) and \
        widget.parent is not None and isinstance(widget.parent, Widget) and \
        widget.parent.region.contains_region(region)


def shown(app: App[object], selector: str) -> bool:
    """The screen has composed the widget and laid it out on screen."""
    found = app.screen.query(selector)
    return bool(found) and on_screen(app, found.first())


def footer_keys(app: App[object]) -> set[str]:
    return {binding.key for (_, binding, enabled, _) in app.screen.active_bindings.values()
            if enabled and binding.show}


async def test_below_100_columns_the_panes_take_turns_and_resize_live(
        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await replay(pilot, recorded())
        screen = app.supervisor
        left, panes = screen.query_one("#left"), screen.query_one("#panes")
        assert screen.narrow and left.region.width == 80 and panes.region.area == 0
        assert "p" not in footer_keys(app)  # the prompt has the keys: p is text there
        await leave_prompt(pilot)  # out of the prompt
        assert screen.transcript.has_focus and "p" in footer_keys(app)
        await pilot.press("p")
        await wait_until(pilot, lambda: panes.region.width == 80 and left.region.area == 0
                         and screen.tools.rows.has_focus)
        assert panes.region.width == 80 and left.region.area == 0
        assert screen.tools.rows.has_focus and screen.tools.rows.region.height > 2
        await pilot.press("p")
        await wait_until(pilot, lambda: left.region.width == 80 and screen.transcript.has_focus)
        assert left.region.width == 80 and screen.transcript.has_focus
        await pilot.press("3")  # a pane's key brings the panes forward
        await wait_until(pilot, lambda: panes.region.width == 80
                         and screen.faults.rows.region.area > 0)
        assert panes.region.width == 80 and screen.faults.rows.region.area > 0
        # with a pane's list focused, the keys go from pane to pane (the focus follows: it
        # is not left in the pane going out of sight, which would bring that pane back)
        tabs = screen.query_one(TabbedContent)
        for key, tab, widget in (("2", "tab-shell", screen.shell),
                                 ("1", "tab-tools", screen.tools.rows),
                                 ("3", "tab-faults", screen.faults.rows)):
            await pilot.press(key)
            await wait_until(pilot, lambda: tabs.active == tab  # noqa: B023 - awaited here
                             and widget.has_focus and widget.region.area > 0)  # noqa: B023
            assert tabs.active == tab and widget.has_focus and widget.region.area > 0
        # wider: side by side again, without a restart; `p` is no longer offered
        await pilot.resize_terminal(160, 48)
        await wait_until(pilot, lambda: not screen.narrow)
        await wait_until(pilot, lambda: left.region.area > 0 and panes.region.area > 0
                         and left.region.right <= panes.region.x)
        assert left.region.area > 0 and panes.region.area > 0
        assert left.region.right <= panes.region.x and left.region.width > panes.region.width
        assert "p" not in footer_keys(app)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: screen.narrow)
        await wait_until(pilot, lambda: panes.region.width == 80)
        assert panes.region.width == 80  # it remembers which it was showing


async def test_at_160_columns_the_panes_sit_beside_the_transcript(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(160, 48)) as pilot:
        await replay(pilot, recorded())
        screen = app.supervisor
        assert not screen.narrow
        left, panes = screen.query_one("#left"), screen.query_one("#panes")
        assert left.region.y == panes.region.y and left.region.right <= panes.region.x
        await pilot.press("p")  # not offered here: nothing changes
        await pilot.pause()  # had it done something, it would show by now
        assert left.region.area > 0 and panes.region.area > 0


class DialogApp(App[None]):
    pass


LONG = "\n\n".join(f"Paragraph {n}: a long question that needs many lines." for n in range(40))


async def test_the_question_dialog_at_60x20_keeps_its_field_and_hint() -> None:
    app = DialogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        question = Question(InputRequest("r1", LONG, "ask-user", timeout_secs=60))
        app.push_screen(AskScreen(question, 2))
        await wait_until(pilot, lambda: isinstance(app.screen, AskScreen))
        dialog = app.screen
        await wait_until(pilot, lambda: shown(app, "#answer") and shown(app, "#hint"))
        answer, hint = dialog.query_one("#answer"), dialog.query_one("#hint")
        scroll = dialog.query_one("#question-scroll")
        assert on_screen(app, answer) and on_screen(app, hint)
        assert answer.region.height >= 3  # its border and a line to type in
        assert not answer.region.overlaps(hint.region)
        assert "Esc hides" in str(hint.render())
        assert on_screen(app, scroll) and scroll.max_scroll_y > 0  # the question scrolls
        scroll.scroll_end(animate=False)  # after the next refresh
        await wait_until(pilot, lambda: scroll.scroll_y == scroll.max_scroll_y)


async def test_a_short_question_keeps_a_small_dialog_on_a_tall_terminal() -> None:
    app = DialogApp()
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(AskScreen(Question(InputRequest("r1", "Which branch?", "ask")), 0))
        await wait_until(pilot, lambda: isinstance(app.screen, AskScreen))
        await wait_until(pilot, lambda: shown(app, "#question-scroll"))  # composed, laid out
        await pilot.pause()
        scroll = app.screen.query_one("#question-scroll")
        assert scroll.region.height <= 3 and scroll.max_scroll_y == 0


async def test_the_approval_dialog_at_60x20_keeps_its_choices_reason_and_hint(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ApproveScreen, "arming_seconds", 0.0)
    request = ApprovalRequest(kind="tool", tool_name="writer", target="writer", argv=(),
                              input={f"field{n}": "value " * 8 for n in range(30)},
                              prefix=(), capsule="c")
    app = DialogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        app.push_screen(ApproveScreen(PendingApproval(request)))
        await wait_until(pilot, lambda: isinstance(app.screen, ApproveScreen))
        dialog = app.screen
        parts = ("#choices", "#hint", "#call-scroll")
        # laid out once it fits: a loaded machine takes a few frames to get there
        await wait_until(pilot, lambda: all(dialog.query(p) and on_screen(app, dialog.query_one(p))
                                          for p in parts))
        await pilot.press("d")

        def reason_shown() -> bool:
            reason = dialog.query_one("#reason")
            return on_screen(app, reason) and reason.region.height == 3 and reason.has_focus

        await wait_until(pilot, reason_shown)
        assert on_screen(app, dialog.query_one("#hint"))


async def test_the_quit_question_fits_60_columns() -> None:
    app = DialogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        app.push_screen(ConfirmScreen("A session is running. Quit anyway (it is canceled)?"))
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await wait_until(pilot, lambda: shown(app, "#yes") and shown(app, "#no"))
        for button in ("#yes", "#no"):
            assert on_screen(app, app.screen.query_one(button)), button

