"""An answer typed (or pasted) on the screen that holds a lone surrogate reaches the tool and
the record as whole text: each one is U+FFFD."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import answerable, settle
from tests.app.test_dialog import asking_capsule
from tests.conftest import read_jsonl
from tests.fakes import start_session
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.screens.ask import AskScreen


async def test_an_answer_typed_on_the_screen_holding_a_lone_surrogate_is_made_whole(
        tmp_path: Path, murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    session = start_session(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.desk.dialog, AskScreen))
        dialog = app.desk.dialog
        assert isinstance(dialog, AskScreen)
        dialog.arming_seconds = 0  # no type-ahead guard: the test types after it opened
        # pushed is not yet mounted: the answer field takes keys once the dialog is on screen
        await wait_until(pilot, lambda: answerable(app) and dialog.answer.has_focus)
        dialog.answer.insert("ma\udcffin")  # what a paste of bytes that are not UTF-8 gives
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
    assert app.result is not None and app.result.exit_status == "ok"
    assert session.record_path is not None
    assert "ma\ufffdin" in json.dumps(read_jsonl(session.record_path), ensure_ascii=False)
