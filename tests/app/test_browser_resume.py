"""The browser and the session index: each conversation's outcome, tasks, duration and capsule
in the list; `r` / `R` continue a conversation in a follow-up session resumed from its newest
session — from `murmur-tui browse` and from the browser over the supervisor. Real capsules,
real sessions, real record and index files, the real apps driven by Pilot."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from tests.app.conftest import leave_prompt
from tests.conftest import CapsuleFactory
from tests.fakes import start_session
from tests.fakes import write_conversation as make
from tests.responses import text_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.browser.app import BrowserApp
from tui.app.browser.conversation import ConversationScreen
from tui.app.browser.conversations import ConversationsScreen
from tui.app.browser.requests import ResumeConversation
from tui.app.browser.resume import capsule as resumable_capsule
from tui.commands import browse, launch
from tui.core.chat import user_message
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule
from tui.core.record.backward import BackwardReader
from tui.core.record.indexed import human_duration
from tui.core.session_index import Entry, Resume, entries, write

APP_CAPSULE = Path(__file__).resolve().parent / "capsule"  # it binds a hook


def run_session(root: Path, home: Path, task: str) -> Session:
    session = Session(load_capsule(root), LaunchOptions(task=task, home=home))
    assert session.run().ok
    return session


def toasts(app: BrowserApp | SupervisorApp) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def row(screen: ConversationsScreen, context: str) -> list[str]:
    return next(r.shown() for r in screen.rows.rows if r.shown()[2] == context)


async def test_the_list_shows_what_the_index_knows_and_blanks_for_the_rest(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("done")], name="cats")
    session = run_session(root, murmur_home, "count the cats")
    make(murmur_home, "mur-store", "ctx_from_mur", [user_message("written by mur")], mtime=1000)
    # a conversation two sessions wrote: tasks add up, the newest one's outcome and duration
    write(murmur_home, Entry("ses_a", "dogs", "/gone/murmur.yaml", "pets", "ctx_two", "/w",
                             started_ms=1_000, ended_ms=2_000, exit_status="ok", tasks=2))
    write(murmur_home, Entry("ses_b", "dogs", "/gone/murmur.yaml", "pets", "ctx_two", "/w",
                             started_ms=10_000, ended_ms=135_000, exit_status="max_turns",
                             tasks=3))
    make(murmur_home, "pets", "ctx_two", [user_message("walk the dogs")], mtime=2000)
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(220, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 3 and screen.sessions is not None)
        header = str(screen.rows.header())
        for title in ("outcome", "tasks", "duration", "capsule"):
            assert title in header
        ours = row(screen, session.context_id)
        assert ours[4:6] == ["ok", "1"] and ours[6].endswith(" s") and ours[7] == "cats"
        assert row(screen, "ctx_two")[4:8] == ["max_turns", "5", "2 min 5 s", "dogs"]
        assert row(screen, "ctx_from_mur")[4:8] == ["", "", "", ""]
        assert row(screen, "ctx_from_mur")[8] == "written by mur"


def test_durations_read_as_a_person_says_them() -> None:
    assert [human_duration(ms) for ms in (400, 9_960, 45_000, 125_000, 3_600_000, 4_380_000,
                                          93_600_000)] == \
        ["0.4 s", "10.0 s", "45 s", "2 min 5 s", "1 h", "1 h 13 min", "1 d 2 h"]


async def test_r_in_the_standalone_browser_continues_into_a_resumed_session(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("noted")])
    first = run_session(root, murmur_home, "remember 42")
    make(murmur_home, "other", "ctx_newer", [user_message("newer, unindexed")])
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(200, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 2 and screen.sessions is not None)
        # the newest row was written by mur: nothing to resume, and the browser says why
        assert screen.rows.highlighted == "other/ctx_newer"
        await pilot.press("tab", "r")  # the filter has the focus; `r` is the list's
        await wait_until(pilot, lambda: "no murmur-tui session" in toasts(app))
        assert app.is_running
        await pilot.press("down", "r")
        await wait_until(pilot, lambda: not app.is_running)
    chosen = app.return_value
    assert isinstance(chosen, ResumeConversation) and chosen.mode == "full"
    assert chosen.entry.session_id == first.session_id
    # `murmur-tui browse` then launches what `launch --resume ID` launches
    launch_args = browse.resumed_launch(chosen.entry.session_id, chosen.mode,
                                        argparse.Namespace(theme="murmur-light"))
    assert launch_args.command == "launch" and launch_args.theme == "murmur-light"
    assert launch.resume_of(launch_args) == Resume(chosen.entry, "full")
    follow = Session(resumable_capsule(chosen.entry, "full"),
                     LaunchOptions(task="which number?", resume=launch.resume_of(launch_args),
                                   home=murmur_home))
    assert follow.run().ok
    assert follow.context_id == first.context_id
    assert first.record_path is not None
    texts = [m.message["content"][0]["text"] for m in BackwardReader(first.record_path).page(10)]
    assert texts[::-1] == ["remember 42", "noted", "which number?", "noted"]
    assert entries(murmur_home)[0].resumed_from == first.session_id


async def test_capital_r_asks_for_compact_and_a_capsule_without_hooks_is_refused(
        make_capsule: CapsuleFactory, murmur_home: Path, tmp_path: Path) -> None:
    plain = make_capsule([text_response("x")], name="plain")
    run_session(plain, murmur_home, "t")
    hooked = load_capsule(APP_CAPSULE)
    write(murmur_home, Entry("ses_hooked", hooked.name, str(hooked.manifest_path),
                             hooked.record_store, "ctx_hooked", str(tmp_path),
                             started_ms=5, ended_ms=9, exit_status="ok", tasks=1))
    make(murmur_home, hooked.record_store, "ctx_hooked", [user_message("hello")], mtime=1)
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(200, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 2 and screen.sessions is not None)
        await pilot.press("tab", "R")  # the plain capsule's conversation: it has no hook
        await wait_until(pilot, lambda: "has no hook" in toasts(app))
        assert app.is_running
        await pilot.press("down", "R")
        await wait_until(pilot, lambda: not app.is_running)
    chosen = app.return_value
    assert isinstance(chosen, ResumeConversation)
    assert (chosen.entry.session_id, chosen.mode) == ("ses_hooked", "compact")


async def test_a_capsule_that_is_gone_is_refused_in_the_conversation_view(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("x")], name="fleeting", folder="fleeting")
    session = run_session(root, murmur_home, "t")
    shutil.rmtree(root)
    app = BrowserApp(murmur_home, record=session.capsule.record_store, context=session.context_id)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationScreen))
        await pilot.press("r")
        await wait_until(pilot, lambda: "is gone" in toasts(app))
        assert str(root) in toasts(app)
        await pilot.pause()  # whatever the refusal would do next is done
        assert app.is_running and isinstance(app.screen, ConversationScreen)
    assert app.return_value is None


async def test_r_over_the_supervisor_resumes_in_a_follow_up_session(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("noted")])
    app = SupervisorApp(murmur_home)
    first = start_session(app, root)
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_until(pilot, lambda: app.result is not None)
        await leave_prompt(pilot)  # out of the prompt, where b is text
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationsScreen))
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 1 and screen.sessions is not None)
        await pilot.press("tab", "r")
        await wait_until(pilot, lambda: app.session is not first and app.result is not None,
                       within=60)
        assert app.screen is app.supervisor
        assert app.session is not None and app.session.context_id == first.context_id
        assert app.state.session_id == app.session.session_id
        assert app.result.ok
    known = entries(murmur_home)
    assert known[0].resumed_from == first.session_id and known[0].context_id == first.context_id
