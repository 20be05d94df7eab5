"""The prompt has the keys (docs/screen.md, "Keys and the prompt"): typing goes to it from the
start, letters are text there and act only out of it, the footer offers what works where the
focus is, a pane's key gives its list the keys, the prompt's border shows in 256 colours, and
the palette's Quit speaks for murmur-tui. The real app under Pilot, at 80×24."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem
from textual import events
from textual.command import CommandList, CommandPalette
from textual.widgets import TabbedContent
from textual.widgets._footer import FooterKey

from tests.app.conftest import key_clock, leave_prompt, recorded, replay
from tests.app.test_control import sleeping_capsule
from tests.fakes import start_session as start
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.palette import QUIT_HELP
from tui.app.screens.confirm import ConfirmScreen
from tui.app.screens.supervisor import SupervisorScreen
from tui.app.widgets.prompt import LETTER_KEYS


def _key_name(character: str) -> str:
    return {" ": "space", "?": "question_mark"}.get(character, character)


def footer(app: SupervisorApp) -> list[str]:
    """The footer as drawn: each key and what it does."""
    return [f"{key.key_display} {key.description}".strip()
            for key in app.screen.query(FooterKey) if key.display]


async def test_typing_goes_to_the_prompt_and_letters_act_only_out_of_it(
        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await replay(pilot, recorded())
        screen = app.supervisor
        prompt = screen.prompt
        assert prompt.has_focus  # no `i` needed
        await wait_until(pilot, lambda: footer(app) == ["F2 Queue", "^q Quit", "F1 Help",
                                                        "^p palette"])
        await pilot.press(*"quit, browse and copy 1 2 3 4 5 yes")
        assert prompt.text == "quit, browse and copy 1 2 3 4 5 yes"
        assert app.return_code is None and app.screen is screen
        assert app.clipboard == ""  # `y` copied nothing: it was text
        # a click in the transcript (a selection, say) leaves the keys in the prompt
        await pilot.click(screen.transcript, offset=(5, 2))
        assert prompt.has_focus
        # out of the prompt the letters act, and the footer offers them
        await leave_prompt(pilot, "escape")
        assert screen.transcript.has_focus
        # (at 80 columns the footer leaves out F2 Queue and b Browse whole: docs/screen.md)
        await wait_until(pilot, lambda: footer(app) == [
            "p Panes / transcript", "i Prompt", "^q Quit", "y Copy result", "F1 Help",
            "^p palette"], what=lambda: footer(app))
        # a key with no action here starts the prompt with it, and what follows goes there
        # too, in order — even arriving all at once, as a fast typist's or tmux's keys do
        # (`t` and `i` have actions out of the prompt: they are text once it has the keys)
        prompt.clear()
        for character in "What is it?":
            app.post_message(events.Key(_key_name(character), character))
        await wait_until(pilot, lambda: prompt.text == "What is it?")
        assert prompt.has_focus and screen.transcript.show_thinking
        await leave_prompt(pilot, "escape")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.clipboard == app.state.result != "")
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0


async def test_from_the_prompt_esc_esc_cancels_and_ctrl_q_asks(tmp_path: Path,
                                                              murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    key_clock(app)  # the two Escs are one pair, however slow the machine
    start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        prompt = app.supervisor.prompt
        assert prompt.has_focus
        await wait_until(pilot, lambda: footer(app) == [
            "F2 Queue", "^q Quit", "esc Cancel (Esc Esc)", "F1 Help", "^p palette"])
        await pilot.press("ctrl+q")  # from the prompt: asks, as q does out of it
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is app.supervisor and prompt.has_focus)
        await pilot.press(*"later")
        await pilot.press("escape")  # leaves the prompt: the first Esc of the pair
        assert not app.cancel.is_set() and prompt.text == "later"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.result is not None)
        assert app.result is not None and app.result.exit_status == "canceled"


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_a_panes_key_gives_its_list_the_keys(murmur_home: Path,
                                                   size: tuple[int, int]) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=size) as pilot:
        await replay(pilot, recorded())
        screen = app.supervisor
        tabs = screen.query_one(TabbedContent)
        await leave_prompt(pilot)  # out of the prompt, where the digits are text
        for key, tab, label, widget in (
                ("4", "tab-background", "Background", screen.work_pane.rows),
                ("1", "tab-tools", "Calls", screen.tools.rows),
                ("2", "tab-shell", "Shell", screen.shell),
                ("3", "tab-faults", "Hook faults", screen.faults.rows),
                ("5", "tab-contracts", "Tools", screen.tool_list.rows)):
            if key != "4":
                screen.transcript.focus()  # from the transcript, not from another pane
            await pilot.press(key)
            await wait_until(pilot, lambda: tabs.active == tab  # noqa: B023 - awaited here
                             and widget.has_focus and widget.region.area > 0)  # noqa: B023
            assert str(tabs.get_tab(tab).label).startswith(label)
            assert app.focused is widget


def eight_bit(colour: RichColor | None) -> int | None:
    """The colour a 256-colour terminal is sent (Textual leaves the downgrade to Rich)."""
    assert colour is not None
    number = colour.downgrade(ColorSystem.EIGHT_BIT).number
    assert number is not None
    return number


def luminance(number: int) -> float:
    triplet = RichColor.from_ansi(number).get_truecolor()
    return 0.2126 * triplet.red + 0.7152 * triplet.green + 0.0722 * triplet.blue


@pytest.mark.parametrize("theme", ["murmur-dark", "murmur-light", "murmur-high-contrast"])
async def test_the_prompts_border_shows_in_256_colours_dimmer_unfocused(
        murmur_home: Path, theme: str) -> None:
    app = SupervisorApp(murmur_home, theme=theme)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        prompt = app.supervisor.prompt
        assert prompt.styles.border_top[0] == "round"

        def corner() -> tuple[int | None, int | None]:
            style = app.screen.get_style_at(prompt.region.x, prompt.region.y)
            return eight_bit(style.color), eight_bit(style.bgcolor)

        await wait_until(pilot, lambda: prompt.has_focus and corner()[0] is not None)
        focused, background = corner()
        await leave_prompt(pilot)  # the prompt loses the focus
        await wait_until(pilot, lambda: corner()[0] != focused)
        unfocused, under = corner()
        assert focused is not None and unfocused is not None and background is not None
        assert unfocused != under and unfocused != background  # visible
        assert focused != unfocused
        # dimmer: nearer the background than the focused border is
        assert abs(luminance(unfocused) - luminance(background)) < \
            abs(luminance(focused) - luminance(background))


async def test_the_palettes_quit_says_what_murmur_tuis_quit_does(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Quit")

        def shown() -> list[str]:
            found = app.screen.query(CommandList)
            if not found or found.first().option_count == 0:
                return []
            commands = found.first()
            return [str(commands.get_option_at_index(n).prompt)
                    for n in range(commands.option_count)]

        await wait_until(pilot, lambda: any(row.startswith("Quit\n") for row in shown()))
        quit_row = next(row for row in shown() if row.startswith("Quit\n"))
        assert quit_row == f"Quit\n{QUIT_HELP}"
        assert QUIT_HELP == "Quit murmur-tui (asks first while a task runs)"
        assert not any("as soon as possible" in row for row in shown())


def test_every_printable_key_of_the_screen_is_text_in_the_prompt() -> None:
    """A printable key bound on the app or the screen is one the prompt keeps as text and
    hides from the footer while it has the keys (LETTER_KEYS): none is forgotten."""
    bound = {key.strip() for binding in (*SupervisorApp.BINDINGS, *SupervisorScreen.BINDINGS)
             if not isinstance(binding, tuple)
             for key in binding.key.split(",") if len(key.strip()) == 1}
    assert bound == set(LETTER_KEYS)
