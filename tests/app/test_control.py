"""Cancel, quit, copy: the keys that control a running session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.conftest import keep_notes, key_clock, leave_prompt, settle
from tests.capsules import write_capsule
from tests.conftest import read_jsonl
from tests.fakes import start_session as start
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.keys import CTRL_C_WINDOW, ESC_WINDOW
from tui.app.screens.confirm import ConfirmScreen


def sleeping_capsule(root: Path) -> Path:
    return write_capsule(root, [tool_response("sleep 600", "s1"), text_response("never")],
                         name="sleeper", max_turns=None,
                         # the command stays the call's, however slow
                         lifecycle={"shell_grace_secs": 600})


async def test_escape_twice_cancels_and_the_files_stay_complete(tmp_path: Path,
                                                                murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    key_clock(app)
    session = start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        await pilot.press("escape")
        assert not app.cancel.is_set()  # one Esc only warns
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        assert app.result is not None and app.result.exit_status == "canceled"
        assert str(app.supervisor.status.render()).startswith("finished canceled")
        assert app.return_status == 1
    trace = read_jsonl(session.paths.trace)
    assert trace[-1]["event_type"] == "session_end" and trace[-1]["exit_status"] == "canceled"
    assert session.paths.result.read_text() == "error: canceled by the user"


async def test_an_esc_after_the_window_only_warns_again(tmp_path: Path,
                                                         murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    said = keep_notes(app)
    clock = key_clock(app)
    start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        await pilot.press("escape")
        clock.advance(ESC_WINDOW + 0.1)
        await pilot.press("escape")  # too late to be the second: a first again
        await wait_until(pilot, lambda: said.count(
            "Press Esc again to cancel the running turn.") == 2)
        assert not app.cancel.is_set() and app.running
        clock.advance(ESC_WINDOW - 0.1)  # within the window: the second
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.result is not None)
        assert app.result is not None and app.result.exit_status == "canceled"


async def test_q_asks_before_quitting_a_running_session(tmp_path: Path,
                                                        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    session = start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        await leave_prompt(pilot)  # out of the prompt (where q is text)
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert app.running and not app.cancel.is_set()
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 1
    assert read_jsonl(session.paths.trace)[-1]["exit_status"] == "canceled"


async def test_after_the_session_the_screen_stays_and_q_quits(murmur_home: Path,
                                                              make_capsule: object) -> None:
    root = make_capsule([text_response("The answer is 42.")])  # type: ignore[operator]
    app = SupervisorApp(murmur_home)
    start(app, root)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        assert app.is_running and str(app.supervisor.status.render()).startswith("finished ok")
        await leave_prompt(pilot)  # out of the prompt: copy the result
        await pilot.press("y")
        assert app.clipboard == "The answer is 42."
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0


async def test_copy_says_copied_only_when_something_was(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    said = keep_notes(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await leave_prompt(pilot)
        await pilot.press("y")
        await wait_until(pilot, lambda: any("nothing was copied" in note for note in said))
        assert app.clipboard == ""
        await pilot.press("ctrl+c")  # nothing selected, nothing running: Ctrl+C means quit
        await wait_until(pilot, lambda: any("Press Ctrl+C again to quit" in note
                                          for note in said))
        assert not any(note.startswith("Copied") for note in said)


async def test_ctrl_c_cancels_the_task_and_a_second_one_quits(tmp_path: Path,
                                                              murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    key_clock(app)  # the second comes within the window however long the cancel takes
    start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        await pilot.press("ctrl+c")  # one cancels the running task, at once
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        assert app.result is not None and app.result.exit_status == "canceled"
        assert app.is_running
        await pilot.press("ctrl+c")  # a second, soon after: quit without asking
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_code == 1  # the session ended canceled


async def test_ctrl_c_twice_on_a_running_session_cancels_it_and_quits(
        tmp_path: Path, murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    key_clock(app)
    session = start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_until(pilot, lambda: not app.is_running)
    trace = read_jsonl(session.paths.trace)
    assert trace[-1]["event_type"] == "session_end" and trace[-1]["exit_status"] == "canceled"


async def test_a_ctrl_c_after_the_window_asks_again_instead_of_quitting(
        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    said = keep_notes(app)
    clock = key_clock(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+c")
        clock.advance(CTRL_C_WINDOW + 0.1)
        await pilot.press("ctrl+c")  # too late to be the second: a first again
        await wait_until(pilot, lambda: said.count("Press Ctrl+C again to quit.") == 2)
        assert app.is_running
        clock.advance(CTRL_C_WINDOW - 0.1)  # within the window: the second
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_code == 1  # nothing ran to an ok end


async def test_the_footer_offers_cancel_only_while_a_task_runs(tmp_path: Path,
                                                               murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    start(app, sleeping_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        assert app.check_action("cancel_turn", ()) is True
        assert app.check_action("answer", ()) is False  # no question waits
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        assert app.check_action("cancel_turn", ()) is False
        shown = {binding.action for (_, binding, enabled, _) in app.active_bindings.values()
                 if enabled}
        assert "cancel_turn" not in shown and "quit" in shown


async def test_a_screenshot_goes_where_it_can_and_says_where(
        tmp_path: Path, murmur_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "user"  # a home without a Downloads folder
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "here"
    work.mkdir()
    monkeypatch.chdir(work)
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(100, 30)) as pilot:
        app.action_screenshot()
        await wait_until(pilot, lambda: any(work.glob("*.svg")) and bool(app._notifications))
        saved = list(work.glob("*.svg"))
        assert len(saved) == 1 and saved[0].read_text().startswith("<svg")
        notes = [n.message for n in app._notifications]
        assert any(str(saved[0]) in note for note in notes)
        (home / "Downloads").mkdir()
        app.action_screenshot()
        await wait_until(pilot, lambda: any((home / "Downloads").glob("*.svg")))
        assert len(list((home / "Downloads").glob("*.svg"))) == 1
