"""Notifications, the bell and the terminal title: what the real app writes to its terminal
when a question waits or a task ends, captured where it leaves the app (the driver)."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual import events
from textual.drivers.headless_driver import HeadlessDriver

from tests.app.conftest import answerable, leave_prompt, recorded, replay, settle
from tests.app.test_dialog import asking_capsule
from tests.fakes import start_session as start
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.attention import RESTORE_TITLE, SAVE_TITLE, load_settings, osc_flavour
from tui.app.sources import LocalSource
from tui.core.events import vocabulary as ev
from tui.core.loop.session import SessionResult


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Everything the app sends to its terminal (the headless driver otherwise drops it)."""
    out: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: out.append(data))
    yield out


@pytest.fixture(autouse=True)
def plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal murmur-tui knows nothing about, unless a test says otherwise."""
    for name in ("TERM_PROGRAM", "KITTY_WINDOW_ID", "TMUX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def configure(home: Path, text: str) -> None:
    (home / "tui").mkdir(parents=True, exist_ok=True)
    (home / "tui" / "config.yaml").write_text(text)


def output(written: list[str]) -> str:
    """What the app wrote, less Textual's own mouse-pointer shape (OSC 22)."""
    return re.sub("\x1b]22;[a-z-]*\x07", "", "".join(written))


async def blur(pilot: object, app: SupervisorApp) -> None:
    app.post_message(events.AppBlur())
    await wait_until(pilot, lambda: not app.app_focus)  # type: ignore[arg-type]


class WaitsForBlur(LocalSource):
    """A local session that begins once `focused` says the app has taken the blur in."""

    def __init__(self, focused: Callable[[], bool]) -> None:
        super().__init__()
        self.focused = focused

    def run(self) -> SessionResult | None:
        deadline = time.monotonic() + 20
        while self.focused() and time.monotonic() < deadline:
            time.sleep(0.01)
        return super().run()


class StartsBlurred(SupervisorApp):
    """The terminal reports focus lost as the app starts; the session begins once the app has
    taken that in (a question from the session's thread does not queue behind messages)."""

    def __init__(self, home: Path) -> None:
        super().__init__(home, source=WaitsForBlur(lambda: self.app_focus))

    def on_mount(self) -> None:
        self.post_message(events.AppBlur())


async def test_a_question_while_blurred_sends_a_desktop_notification_and_sets_the_title(
        tmp_path: Path, murmur_home: Path, written: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")  # known to show OSC 9
    app = StartsBlurred(murmur_home)
    start(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        assert not app.app_focus
        text = output(written)
        assert '\x1b]9;? asking — question: ask asks: {"p":"Which branch?"}\x07' in text
        assert SAVE_TITLE + "\x1b]2;? asking — question\x07" in text
        await wait_until(pilot, lambda: answerable(app))
        written.clear()
        await pilot.press(*"main", "enter")  # a key: the user is back
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        # answered: the title is the terminal's own again, and the end needs no notice
        assert output(written) == "\x1b]2;asking — murmur-tui\x07" + RESTORE_TITLE


async def test_the_same_question_while_focused_rings_the_bell_and_sends_no_notification(
        tmp_path: Path, murmur_home: Path, written: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    app = SupervisorApp(murmur_home)
    start(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        text = output(written)
        assert "\x1b]9;" not in text and "\x1b]777;" not in text
        assert "\x07" in text.replace("\x1b]2;? asking — question\x07", "")  # the bell
        assert "\x1b]2;? asking — question\x07" in text  # the title, as the docs promise
        await wait_until(pilot, lambda: answerable(app))
        written.clear()
        await pilot.press(*"main", "enter")
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        # answered, and the task ended in front of the user: the title back, nothing announced
        assert output(written) == "\x1b]2;asking — murmur-tui\x07" + RESTORE_TITLE


async def test_a_task_ending_behind_the_browser_notifies_and_coming_back_restores_the_title(
        murmur_home: Path, written: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "foot")  # foot shows OSC 777 (title and body)
    app = SupervisorApp(murmur_home)
    stream = recorded()
    async with app.run_test(size=(120, 40)) as pilot:
        await leave_prompt(pilot)  # out of the prompt, where b is text
        await pilot.press("b")
        await wait_until(pilot, lambda: app.screen is not app.supervisor)
        assert app.app_focus and not app.present()
        await replay(pilot, stream)
        text = output(written)
        assert "\x1b]777;notify;✓ screen-fixture — done;" in text
        assert "\x1b]2;✓ screen-fixture — done\x07" in text
        written.clear()
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.supervisor)
        await wait_until(pilot, lambda: RESTORE_TITLE in output(written))
        assert output(written) == "\x1b]2;screen-fixture — murmur-tui\x07" + RESTORE_TITLE


async def test_focus_returning_restores_the_title_of_a_task_that_ended_meanwhile(
        murmur_home: Path, written: list[str]) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await blur(pilot, app)
        await replay(pilot, recorded())
        text = output(written)
        # an unknown terminal gets the bell, not a sequence it might print
        assert "\x1b]9;" not in text and "\x1b]777;" not in text
        assert "\x07" + SAVE_TITLE in text
        assert "\x1b]2;✓ screen-fixture — done\x07" in text
        written.clear()
        app.post_message(events.AppFocus())
        await wait_until(pilot, lambda: RESTORE_TITLE in output(written))
        assert app.attention.title is None


async def test_notify_bell_rings_instead_of_a_notification(
        murmur_home: Path, written: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")
    configure(murmur_home, "notify: bell\n")
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await blur(pilot, app)
        await replay(pilot, recorded())
        assert output(written) == "\x07" + SAVE_TITLE + "\x1b]2;✓ screen-fixture — done\x07"


async def test_notify_off_writes_nothing(
        tmp_path: Path, murmur_home: Path, written: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    configure(murmur_home, "# mine\nnotify: off\napprove: shell\n")
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await blur(pilot, app)
        await replay(pilot, recorded())
        app.attention.notify("question", "anyone?")
        app.attention.notify("approval", "run rm?")
        await pilot.pause()  # had they written anything, it would be out by now
        text = output(written)
        assert "\x07" not in text and "\x1b]" not in text and SAVE_TITLE not in text


async def test_an_approval_waits_with_its_own_title_until_settled(
        murmur_home: Path, written: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-kitty")
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await blur(pilot, app)
        app.attention.capsule = "demo"
        app.attention.notify("approval", "bash wants to run: git push")
        assert output(written) == (SAVE_TITLE.join(["\x1b]99;i=murmur:d=0:p=title;? demo — "
                                                    "approval\x1b\\\x1b]99;i=murmur:d=1:p=body;"
                                                    "bash wants to run: git push\x1b\\", ""]) +
                                   "\x1b]2;? demo — approval\x07")
        written.clear()
        app.post_message(events.AppFocus())  # back, but the approval still waits
        await wait_until(pilot, lambda: app.app_focus)
        await pilot.pause()
        assert output(written) == ""
        app.attention.settled("approval")
        assert output(written) == "\x1b]2;demo — murmur-tui\x07" + RESTORE_TITLE


async def test_a_capsule_name_and_result_carrying_escape_sequences_are_neutralised(
        murmur_home: Path, written: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "ghostty")
    hostile = "x\x1b]2;pwned\x07\x1b]52;c;ZXZpbA==\x07\x9b2J"
    stream = []
    for event in recorded():
        if isinstance(event, ev.SessionStarted):
            event = dataclasses.replace(event, capsule_name=hostile)
        elif isinstance(event, ev.TaskEnded):
            event = dataclasses.replace(event, result="done\x1b]777;notify;fake;fake\x07\n!")
        stream.append(event)
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await blur(pilot, app)
        await replay(pilot, stream)
        text = output(written)
        assert "pwned\x07" not in text and "\x1b]52" not in text and "\x9b" not in text
        assert "fake\x07" not in text
        shown = "x␛]2;pwned␇␛]52;c;ZXZpbA==␇<U+009B>2J"
        # OSC 777 separates title and body with ';': the title's own are shown as ','
        body = "done␛]777;notify;fake;fake␇␤!"
        assert f"\x1b]777;notify;✓ {shown.replace(';', ',')} — done;{body}\x07" in text
        assert f"\x1b]2;✓ {shown} — done\x07" in text


async def test_the_title_is_given_back_when_the_app_closes(
        murmur_home: Path, written: list[str]) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await blur(pilot, app)
        app.attention.notify("question", "still there?")
        assert SAVE_TITLE in output(written)
        written.clear()
    assert RESTORE_TITLE in output(written)


@pytest.mark.parametrize(("env", "expected"), [
    ({"TERM_PROGRAM": "iTerm.app", "TERM": "xterm-256color"}, "osc9"),
    ({"TERM_PROGRAM": "WezTerm"}, "osc777"),
    ({"TERM_PROGRAM": "ghostty", "TERM": "xterm-ghostty"}, "osc777"),
    ({"TERM": "xterm-kitty"}, "osc99"),
    ({"TERM": "foot-extra"}, "osc777"),
    ({"TERM": "rxvt-unicode-256color"}, "osc777"),
    ({"TERM_PROGRAM": "Apple_Terminal", "TERM": "xterm-256color"}, None),
    ({"TERM_PROGRAM": "iTerm.app", "TMUX": "/tmp/tmux-1/default,1,0"}, None),
    ({"TERM": "screen-256color"}, None),
    ({"TERM": "xterm-256color"}, None),
])
def test_which_terminals_get_a_notification_sequence(env: dict[str, str],
                                                     expected: str | None) -> None:
    assert osc_flavour(env) == expected


def test_a_bad_notify_setting_is_named_and_the_default_kept(murmur_home: Path) -> None:
    configure(murmur_home, "approve: shell\nnotify: loud\n")
    settings = load_settings(murmur_home)
    assert settings.mode == "auto"
    [problem] = settings.problems
    assert f"{murmur_home / 'tui' / 'config.yaml'}:2: notify:" in problem
    assert "auto, osc, bell, off" in problem and "'loud'" in problem


def test_a_config_that_is_not_yaml_is_named_and_the_default_kept(murmur_home: Path) -> None:
    configure(murmur_home, "notify: [osc\n")
    settings = load_settings(murmur_home)
    assert settings.mode == "auto" and "config.yaml" in settings.problems[0]
    assert load_settings(murmur_home / "elsewhere").mode == "auto"  # no file: the default
