"""The prompt and the queue: what you type while a session works becomes its next tasks, in
order, in the same conversation — in the running session when its capsule takes tasks, else in
a follow-up session that goes on where the last one ended. Real sessions, the real app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual import events
from textual.pilot import Pilot

from tests.app.conftest import key_clock, leave_prompt, settle
from tests.conftest import CapsuleFactory, read_jsonl
from tests.fakes import RecordingDriver
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.keys import ESC_WINDOW
from tui.app.screens.ask import AskScreen
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done; echo went"
QUEUE = ("lifecycle:\n  task_acceptance: queue\n  queue_depth: 5\n  after_task: sleep\n"
         "  conversation: threaded\n  shell_grace_secs: 600\n")  # as FOREGROUND
# a command that waits for the test stays in the foreground, however loaded the machine
FOREGROUND = "lifecycle:\n  shell_grace_secs: 600\n"
APP_CAPSULE = Path(__file__).resolve().parent / "capsule"


def start(app: SupervisorApp, root: Path, driver: RecordingDriver | None = None,
          workdir: Path | None = None) -> Session:
    session = Session(load_capsule(root), LaunchOptions(task="first task", workdir=workdir),
                      sinks=[app.bridge],
                      responder=app.responder, cancel=app.cancel, driver=driver)
    app.attach(session)
    return session


async def type_prompt(pilot: Pilot[Any], text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")


def queued(app: SupervisorApp) -> list[str]:
    return [item.text for item in app.prompts.queue.items]


async def queue_prompt(pilot: Pilot[Any], text: str, shown: str | None = None) -> None:
    """Type `text` and Enter, and wait until the queue ends with it (`shown`, when the prompt
    held more than was typed)."""
    await type_prompt(pilot, text)
    app = pilot.app
    assert isinstance(app, SupervisorApp)
    await wait_until(pilot, lambda: queued(app)[-1:] == [shown or text])


def events_of(trace: Path, kind: str) -> list[dict[str, Any]]:
    return [line for line in read_jsonl(trace) if line["event_type"] == kind]


def record_texts(record: Path) -> str:
    return record.read_text(encoding="utf-8")


async def test_three_prompts_typed_while_a_task_runs_are_three_tasks_in_order(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    driver = RecordingDriver(tool_response(WAIT_FOR_GO), text_response("first done"),
                             text_response("one done"), text_response("two done"),
                             text_response("three done"))
    root = make_capsule([], extra=QUEUE)
    app = SupervisorApp(murmur_home)
    session = start(app, root, driver)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        assert app.supervisor.prompt.has_focus  # the prompt has the keys: no `i` needed
        for text in ("one", "two", "three"):
            await queue_prompt(pilot, text)
        assert queued(app) == ["one", "two", "three"]
        assert app.supervisor.queue_view.display
        assert [item.sent for item in app.prompts.queue.items] == [True, False, False]
        (session.paths.accessible / "go").write_text("")
        await wait_until(pilot, lambda: app.state.tasks_ended == 4)
        await settle(pilot)
        assert queued(app) == [] and not app.supervisor.queue_view.display
        assert app.state.kind == "waiting" and app.running
        await leave_prompt(pilot, "escape")  # the prompt lets Esc through; q on the transcript
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0  # the sleeping session ended as it was, not canceled
    trace = session.paths.trace
    starts = events_of(trace, "task_start")
    assert [line["source"] for line in starts] == ["task_md", "a2a", "a2a", "a2a"]
    assert len(events_of(trace, "task_end")) == 4
    assert [line["exit_status"] for line in events_of(trace, "session_end")] == ["ok"]
    # threaded: the last task's request holds the earlier tasks and answers
    last = json.dumps(driver.requests[-1])
    for earlier in ("first task", "one", "one done", "two", "two done", "three"):
        assert earlier in last
    assert session.record_path is not None
    record = record_texts(session.record_path)
    assert all(word in record for word in ("one done", "two done", "three done"))


async def test_the_queue_is_edited_kept_by_esc_and_started_again_by_enter(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response(WAIT_FOR_GO), text_response("done")],
                        extra=FOREGROUND)
    app = SupervisorApp(murmur_home)
    clock = key_clock(app)
    first = start(app, root)  # task_acceptance: single: the queue waits for a follow-up
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        for text in ("alpha", "beta", "gamma", "delta"):
            await queue_prompt(pilot, text)
        assert queued(app) == ["alpha", "beta", "gamma", "delta"]
        assert not any(item.sent for item in app.prompts.queue.items)  # single: nothing is sent
        await pilot.press("f2")  # from the prompt to the queue
        view = app.supervisor.queue_view
        assert view.has_focus
        await pilot.press("home", "down", "ctrl+down")  # beta below gamma
        assert queued(app) == ["alpha", "gamma", "beta", "delta"]
        await pilot.press("ctrl+up", "ctrl+up")  # beta to the top
        assert queued(app) == ["beta", "alpha", "gamma", "delta"]
        await pilot.press("end", "delete")  # delta removed
        assert queued(app) == ["beta", "alpha", "gamma"]
        await pilot.press("up", "e")  # alpha back into the prompt, to be changed
        assert app.supervisor.prompt.has_focus and app.supervisor.prompt.text == "alpha"
        assert queued(app) == ["beta", "gamma"]
        await type_prompt(pilot, "!")  # sent again, it keeps its place
        await wait_until(pilot, lambda: queued(app) == ["beta", "alpha!", "gamma"])
        await pilot.press("escape", "escape")  # cancel the running task
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        assert app.result is not None and app.result.exit_status == "canceled"
        assert queued(app) == ["beta", "alpha!", "gamma"]  # Esc never clears the queue
        await pilot.pause()  # a follow-up, were one started, would be on its way by now
        assert app.session is first  # a canceled session's queue waits for you
        await pilot.press("i", "enter")  # Enter on an empty prompt: go on
        await wait_until(pilot, lambda: app.session is not first)
        follow_up = app.session
        assert follow_up is not None
        await wait_until(pilot, lambda: follow_up.paths.accessible.is_dir())
        (follow_up.paths.accessible / "go").write_text("")
        await wait_until(pilot, lambda: app.session not in (first, follow_up))
        assert follow_up.paths.result.read_text() == "done"
        third = app.session
        assert third is not None
        assert queued(app) == ["gamma"]  # one task per follow-up session, in order
        assert "beta" in (follow_up.paths.accessible / "task.md").read_text()
        resumed = events_of(follow_up.paths.trace, "session_start")[0]["resumed_from"]
        assert resumed == first.session_id
        # the third session's command waits for its own `go`: Esc Esc once it is on screen
        await wait_until(pilot, lambda: app.state.in_task and app.state.exit_status is None
                       and app.supervisor.tools.total == 3)
        clock.advance(ESC_WINDOW + 1)  # a pair of its own, not the end of the first one
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: app.result is not None and
                       app.result.session_id == third.session_id and
                       app.result.exit_status == "canceled")
        assert queued(app) == ["gamma"]

async def test_a_prompt_after_the_session_ended_goes_on_in_the_same_conversation(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    root = make_capsule([text_response("The answer is 42.")])
    app = SupervisorApp(murmur_home)
    first = start(app, root)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        assert app.state.kind == "finished"
        await type_prompt(pilot, "and again")
        await wait_until(pilot, lambda: app.session is not first and app.result is not None)
        await settle(pilot)
        second = app.session
        assert second is not None and app.result is not None
        assert app.result.session_id == second.session_id
        assert app.state.session_id == second.session_id  # the status bar's session
        assert second.session_id in str(app.supervisor.header.render())
        assert app.return_status == 0
        await pilot.press("up")
        assert app.supervisor.prompt.text == "and again"  # Up recalls what was sent
    assert second.context_id == first.context_id
    start_line = events_of(second.paths.trace, "session_start")[0]
    assert start_line["resumed_from"] == first.session_id
    assert second.record_path == first.record_path and first.record_path is not None
    record = record_texts(first.record_path)
    assert record.count("The answer is 42.") == 2 and "and again" in record


async def test_the_prompt_takes_no_keys_while_a_question_waits(murmur_home: Path,
                                                               tmp_path: Path) -> None:
    app = SupervisorApp(murmur_home)
    start(app, APP_CAPSULE, workdir=tmp_path / "workdir")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("i")  # typed in the prompt, which has the keys
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        dialog = app.desk.dialog
        assert isinstance(dialog, AskScreen)
        prompt = app.supervisor.prompt
        before = prompt.text
        await wait_until(pilot, lambda: dialog.armed)
        dialog.answer.clear()  # an `i` the machine was slow to take may have landed here
        await pilot.press(*"yes")
        assert dialog.answer.text == "yes"
        assert prompt.text == before  # nothing reached the prompt under the dialog
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.desk.dialog is None)
        assert app.prompts.queue.items == []  # the answer went to the tool, not to the queue
        app.cancel.set()
        await wait_until(pilot, lambda: app.result is not None)


async def test_a_large_paste_goes_in_whole(murmur_home: Path,
                                           make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response(WAIT_FOR_GO), text_response("done")],
                        extra=FOREGROUND)
    app = SupervisorApp(murmur_home)
    start(app, root)
    text = "\n".join(f"line {n} of the pasted text" for n in range(2000))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        await wait_until(pilot, lambda: app.supervisor.prompt.has_focus)
        app.post_message(events.Paste(text))  # as the terminal delivers a paste
        await wait_until(pilot, lambda: app.supervisor.prompt.text != "")
        assert app.supervisor.prompt.text == text  # whole, in one piece
        await pilot.press("shift+enter", "x", "enter")
        await wait_until(pilot, lambda: queued(app) == [text + "\nx"])
        # the cancel stops the waiting command: the task never reaches its end on its own, so
        # the session ends canceled and the queued prompt waits for Enter (no follow-up runs)
        app.cancel.set()
        await wait_until(pilot, lambda: app.result is not None)
        assert app.result is not None and app.result.exit_status == "canceled"
        assert queued(app) == [text + "\nx"]


async def test_two_identical_prompts_are_two_tasks_each_matched_by_the_id_it_was_queued_with(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    """The same text typed three times is three tasks: the one edited is the one chosen, the
    one that starts leaves the queue and its twin stays, and each runs under the task id minted
    when it was queued."""
    wait_again = WAIT_FOR_GO.replace("go", "go2").replace("went", "went again")
    driver = RecordingDriver(tool_response(WAIT_FOR_GO), text_response("first done"),
                             tool_response(wait_again), text_response("same done"),
                             text_response("twin done"), text_response("edited done"))
    app = SupervisorApp(murmur_home)
    session = start(app, make_capsule([], extra=QUEUE), driver)

    def rows() -> list[tuple[str, str, bool]]:
        return [(item.text, item.task_id, item.sent) for item in app.prompts.queue.items]

    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        for _ in range(3):
            await pilot.press(*"same", "enter")
        await wait_until(pilot, lambda: len(app.prompts.queue.items) == 3)
        first, second, third = [item.task_id for item in app.prompts.queue.items]
        assert len({first, second, third}) == 3
        assert rows() == [("same", first, True), ("same", second, False),
                          ("same", third, False)]
        await pilot.press("f2", "home", "down", "e")  # the second one back into the prompt
        await wait_until(pilot, lambda: app.supervisor.prompt.text == "same")
        await pilot.press("!", "enter")
        await wait_until(pilot, lambda: [item.text for item in app.prompts.queue.items] ==
                       ["same", "same!", "same"])
        # the second was changed in its place, under its own id; its twin stayed as it was
        assert rows() == [("same", first, True), ("same!", second, False),
                          ("same", third, False)]
        (session.paths.accessible / "go").write_text("")
        # the first "same" started: it leaves the queue, and the edited one is the next
        await wait_until(pilot, lambda: rows() == [("same!", second, True),
                                                 ("same", third, False)])
        assert app.state.in_task
        (session.paths.accessible / "go2").write_text("")
        await wait_until(pilot, lambda: app.state.tasks_ended == 4)
        await wait_until(pilot, lambda: rows() == [] and not app.supervisor.queue_view.display)
        await leave_prompt(pilot, "escape")
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)
    starts = events_of(session.paths.trace, "task_start")
    assert [line["task_id"] for line in starts[1:]] == [first, second, third]
    ends = events_of(session.paths.trace, "task_end")
    assert [line["task_id"] for line in ends[1:]] == [first, second, third]
    # the edited prompt ran second, with its new text: the thread's tasks, in order
    asked = [block["text"] for message in driver.requests[-1]["messages"]
             if message["role"] == "user" for block in message["content"]
             if block.get("type") == "text"]
    assert asked == ["first task", "same", "same!", "same"]
