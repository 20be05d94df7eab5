"""The supervisor at 80×24 and 60×20: the header keeps the session id, the status line its
state, the footer Help (F1) and Quit (Ctrl+Q, which works wherever the focus is) — in the
prompt and out of it; what does not fit is left out whole, never cut inside a word — and
refitted live as the terminal is resized."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.app.conftest import answerable, leave_prompt, recorded, replay
from tests.fakes import write_conversation as make
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.browser.app import BrowserApp
from tui.app.browser.conversation import ConversationScreen
from tui.app.widgets.fitted_footer import FittedFooter
from tui.core.asking.request import InputRequest
from tui.core.chat import user_message

SHORT_ID = "ses_…2b46826b6"  # the recorded session's id, shortened to its end


def screen_rows(app: SupervisorApp) -> list[str]:
    """The terminal's rows as a person reads them."""
    return ["".join(segment.text for segment in strip).rstrip()
            for strip in app.screen._compositor.render_strips()]


def footer_text(app: SupervisorApp) -> str:
    return " ".join(screen_rows(app)[-1].split())


async def replayed(pilot: Pilot[Any]) -> None:
    await replay(pilot, recorded())
    app = pilot.app
    assert isinstance(app, SupervisorApp)
    await wait_until(pilot, lambda: "finished ok" in screen_rows(app)[-2])


# in the prompt (where the screen opens) the footer offers only the keys that work there
IN_THE_PROMPT = "F2 Queue ^q Quit F1 Help ▏^p palette"
EXPECTED = {  # header, status line, footer out of the prompt
    (80, 24): ("screen-fixture 1.0.0  ·  model fixture-model  ·  " + SHORT_ID,
               # the hook faults (the Faults tab counts them) leave: the line would pass 78
               r"finished ok · turn 4/8 · 11\.4k in / 213 out · context 51% · \d:\d\d",
               "p Panes / transcript i Prompt ^q Quit y Copy result F1 Help ▏^p palette"),
    (60, 20): ("screen-fixture 1.0.0  ·  " + SHORT_ID,
               r"finished ok · turn 4/8 · 11\.4k in / 213 out · context 51%",
               "i Prompt ^q Quit y Copy result F1 Help ▏^p palette"),
}


@pytest.mark.parametrize("size", list(EXPECTED))
async def test_header_status_and_footer_keep_what_matters(murmur_home: Path,
                                                          size: tuple[int, int]) -> None:
    header, status, footer = EXPECTED[size]
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=size) as pilot:
        await replayed(pilot)
        await wait_until(pilot, lambda: footer_text(app) == IN_THE_PROMPT)
        rows = screen_rows(app)
        assert rows[0].strip() == header
        assert re.fullmatch(status, rows[-2].strip())
        await leave_prompt(pilot)
        await wait_until(pilot, lambda: footer_text(app) == footer)
        assert footer_text(app).count("Quit") == 1
        # each key shown whole, inside the terminal
        for key in app.screen.query_one(FittedFooter).query("FooterKey"):
            if key.display:
                assert key.region.x >= 0 and key.region.right <= size[0]


async def test_the_line_is_fitted_again_as_the_terminal_is_resized(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(160, 48)) as pilot:
        await replayed(pilot)
        full = "ses_01a22a87acf972798d61cf52b46826b6"
        await wait_until(pilot, lambda: screen_rows(app)[0].strip().endswith(full))
        assert "4 hook faults" in screen_rows(app)[-2]
        await leave_prompt(pilot)
        await wait_until(pilot, lambda: "b Browse" in footer_text(app))
        assert "^q Quit" in footer_text(app)
        await pilot.resize_terminal(60, 20)
        await wait_until(pilot, lambda: screen_rows(app)[0].strip()
                         == "screen-fixture 1.0.0  ·  " + SHORT_ID
                         and footer_text(app) == EXPECTED[(60, 20)][2])
        assert "context 51%" in screen_rows(app)[-2] and "hook" not in screen_rows(app)[-2]
        await pilot.resize_terminal(160, 48)
        await wait_until(pilot, lambda: screen_rows(app)[0].strip().endswith(full)
                         and "b Browse" in footer_text(app))
        assert "4 hook faults" in screen_rows(app)[-2]


async def test_while_a_question_waits_the_footer_keeps_answer(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    answers: list[str] = []

    def asker() -> None:
        answers.append(app.responder.ask(InputRequest("r1", "Shall it list?", "ask-user")))

    async with app.run_test(size=(60, 20)) as pilot:
        await replayed(pilot)
        thread = threading.Thread(target=asker)
        thread.start()
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press("escape")  # the dialog steps aside; the question stays open
        await wait_until(pilot, lambda: app.desk.dialog is None
                         and "a Answer" in footer_text(app))
        # y Copy result leaves to make room for Answer; Browse is short enough to stay
        assert footer_text(app) == "i Prompt ^q Quit a Answer b Browse F1 Help ▏^p palette"
        assert screen_rows(app)[-2].strip().startswith("finished ok (1 question)")
        await pilot.press("a")
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press(*"yes", "enter")
        thread.join(timeout=10)
        assert answers == ["yes"]


async def test_the_browsers_footer_leaves_out_whole_keys_at_60_columns(
        murmur_home: Path) -> None:
    make(murmur_home, "r", "c", [user_message("hello")])
    app = BrowserApp(murmur_home, record="r", context="c")
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))

        def footer() -> str:
            rows = ["".join(segment.text for segment in strip).rstrip()
                    for strip in app.screen._compositor.render_strips()]
            return " ".join(rows[-1].split())

        # "n Newer (from a search hit)" does not fit: it is left out, not cut
        narrow = "esc Back / Search e Export ^q Quit ▏^p palette"
        await wait_until(pilot, lambda: footer() == narrow)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "n Newer (from a search hit)" in footer())
        assert footer() == \
            "esc Back / Search e Export n Newer (from a search hit) ^q Quit ▏^p palette"
