"""The command palette's Quit and Ctrl+Q are `q`: while a task runs they ask before canceling
it, with the same words, and "n" leaves the session running."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Static

from tests.app.test_control import sleeping_capsule
from tests.fakes import start_session as start
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.screens.confirm import ConfirmScreen

QUESTION = "A session is running. Cancel it and quit? Its files stay complete."


def asked(app: SupervisorApp) -> str | None:
    if not isinstance(app.screen, ConfirmScreen):
        return None
    return str(app.screen.query_one(Static).render())


def first_command(app: SupervisorApp) -> str | None:
    """The highlighted match's name, once the palette has searched."""
    found = app.screen.query(CommandList)
    if not found or found.first().highlighted is None:
        return None
    commands = found.first()
    option = commands.get_option_at_index(commands.highlighted or 0)
    return str(option.prompt).split("\n", 1)[0]


async def test_the_palettes_quit_asks_before_canceling_a_running_task(
        tmp_path: Path, murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Quit")
        await wait_until(pilot, lambda: first_command(app) == "Quit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: asked(app) is not None)
        assert asked(app) == QUESTION
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert app.running and not app.cancel.is_set() and app.return_code is None


@pytest.mark.parametrize("key", ["q", "ctrl+q"])
async def test_q_and_ctrl_q_ask_the_same_question(tmp_path: Path, murmur_home: Path,
                                                  key: str) -> None:
    app = SupervisorApp(murmur_home)
    start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        # Ctrl+Q from the prompt, which has the keys; q out of it (in the prompt it is text)
        await pilot.press(*(("tab", key) if key == "q" else (key,)))
        await wait_until(pilot, lambda: asked(app) is not None)
        assert asked(app) == QUESTION
        await pilot.press("y")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 1
