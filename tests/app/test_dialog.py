"""The request-input dialog end to end: a real session, a real WebAssembly tool asking."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from textual.widgets import Markdown, Static

from tests.app.conftest import answerable, settle
from tests.capsules import write_capsule
from tests.conftest import read_jsonl
from tests.fakes import start_session as start
from tests.responses import call_response, text_response
from tests.waits import wait_until
from tests.wasm.conftest import FIXTURES
from tui.app.app import SupervisorApp
from tui.app.screens.ask import AskScreen
from tui.core.asking.request import InputRequest
from tui.core.errors import StopOnInputTimeout


class BellCountingApp(SupervisorApp):
    rang = 0

    def bell(self) -> None:
        self.rang += 1
        super().bell()


def asking_capsule(root: Path, prompt: str = "Which branch?", extra: str = "") -> Path:
    return write_capsule(
        root, [call_response("ask", {"p": prompt}, "q1", text="Let me ask."),
               text_response("Thanks.")],
        name="asking", max_turns=None, shell=(), tools={"ask": FIXTURES / "ask_tool.wasm"},
        extra=extra)


async def test_the_question_appears_and_the_answer_reaches_the_tool(
        tmp_path: Path, murmur_home: Path) -> None:
    app = BellCountingApp(murmur_home)
    session = start(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        # the dialog is pushed at once; its parts are composed and filled a moment later
        def shown() -> bool:
            found = app.desk.dialog.query("#question") if app.desk.dialog is not None else []
            return bool(found) and '{"p":"Which branch?"}' in found[0].source

        await wait_until(pilot, shown)
        dialog = app.desk.dialog
        assert isinstance(dialog, AskScreen)
        assert str(dialog.query_one("#asker", Static).render()) == "ask asks:"
        assert '{"p":"Which branch?"}' in dialog.query_one("#question", Markdown).source
        assert app.rang == 1 and app.title.startswith("? ask asks")
        assert "asking" in str(app.supervisor.status.render())
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press(*"main", "shift+enter", *"dev", "enter")
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        assert app.result is not None and app.result.exit_status == "ok"
        assert app.desk.dialog is None and app.title == "murmur-tui"
        assert session.record_path is not None
        tool = read_jsonl(session.record_path)[2]
        assert "main\ndev" in tool["content"][0]["text"]
        lines = [line for t in app.supervisor.transcript.window_turns
                 for line in t.lines.values()]
        # the answer keeps its line break: two lines on the screen, the second beneath the
        # first
        assert "  you answered: main\n" + " " * 16 + "dev" in lines
        drawn = [text.plain.rstrip() for text in app.supervisor.transcript._lines]
        at = drawn.index("  you answered: main")
        assert drawn[at + 1] == " " * 16 + "dev"
        assert app.return_status == 0


async def test_keys_right_after_it_opens_are_ignored(tmp_path: Path, murmur_home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # the guard is half a second; here it lasts until the test ends it, so that every key
    # lands inside it however slowly a loaded machine delivers them
    monkeypatch.setattr(AskScreen, "arming_seconds", 3600.0)
    app = SupervisorApp(murmur_home)
    start(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        dialog = app.desk.dialog
        assert dialog is not None
        await pilot.press(*"oops", "enter")  # type-ahead meant for the main screen
        assert app.desk.dialog is dialog and dialog.answer.text == ""
        assert not dialog.armed
        dialog.arming_seconds = 0.0  # the guard's time is up
        assert dialog.armed
        await pilot.press(*"yes", "enter")
        await wait_until(pilot, lambda: app.result is not None)
        assert app.result is not None and app.result.exit_status == "ok"


async def test_escape_hides_the_question_and_a_brings_it_back(tmp_path: Path,
                                                              murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    start(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.desk.dialog is None
                         and "asking (1 question)" in str(app.supervisor.status.render()))
        assert app.desk.dialog is None and len(app.desk.questions) == 1
        assert "asking (1 question)" in str(app.supervisor.status.render())
        await pilot.press("a")
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press(*"later", "enter")
        await wait_until(pilot, lambda: app.result is not None)
        assert app.result is not None and app.result.exit_status == "ok"


async def test_further_questions_wait_in_a_visible_queue(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    answers: dict[str, str] = {}

    def asker(name: str) -> None:
        answers[name] = app.responder.ask(InputRequest(name, f"question {name}", "tool"))

    async with app.run_test(size=(120, 40)) as pilot:
        threads = [threading.Thread(target=asker, args=(n,)) for n in ("one", "two")]
        for thread in threads:
            thread.start()
        await wait_until(pilot, lambda: len(app.desk.questions) == 2 and app.desk.dialog is not None
                       and bool(app.desk.dialog.query("#waiting")))
        dialog = app.desk.dialog
        assert dialog is not None
        assert "1 more question waiting" in str(dialog.query_one("#waiting", Static).render())
        first = dialog.question.request.request_id
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press(*"A", "enter")
        await wait_until(pilot, lambda: app.desk.dialog is not None
                         and app.desk.dialog is not dialog)
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press(*"B", "enter")
        for thread in threads:
            thread.join(timeout=5)
        second = "two" if first == "one" else "one"
        assert answers == {first: "A", second: "B"}
        assert app.desk.questions == []


async def test_a_question_asked_before_a_restart_says_so(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    answers: list[str] = []

    def asker() -> None:
        answers.append(app.responder.ask(InputRequest("q_1", "which branch?", "ask",
                                                      before_restart=True)))

    async with app.run_test(size=(120, 40)) as pilot:
        thread = threading.Thread(target=asker)
        thread.start()
        await wait_until(pilot, lambda: app.desk.dialog is not None
                       and bool(app.desk.dialog.query("#asker")))
        dialog = app.desk.dialog
        assert dialog is not None
        assert str(dialog.query_one("#asker", Static).render()) == \
            "ask asks (asked before the restart):"
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press(*"main", "enter")
        thread.join(timeout=5)
        assert answers == ["main"]


async def test_an_unanswered_question_times_out_and_the_task_fails(
        tmp_path: Path, murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    start(app, asking_capsule(tmp_path / "c", extra="lifecycle:\n  input_timeout_secs: 600\n"))
    async with app.run_test(size=(120, 40)) as pilot:
        # the countdown shows while the question waits (however long a loaded machine takes
        # to get there: the question has ten minutes)
        await wait_until(pilot, lambda: app.desk.dialog is not None
                       and app.desk.dialog.is_mounted and str(
            app.desk.dialog.countdown.render()).startswith("answer within"))
        app.desk.questions[0].asked_at -= 600  # then its time is up
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        assert app.result is not None and app.result.exit_status == "failed"
        assert app.desk.dialog is None and app.desk.questions == []
        assert "input-timeout" in app.result.result
        assert app.return_status == 1


async def test_the_responder_times_out_without_the_app_answering(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    outcome: list[BaseException] = []

    def asker() -> None:
        try:
            app.responder.ask(InputRequest("r", "q", "tool", timeout_secs=0.3))
        except StopOnInputTimeout as exc:
            outcome.append(exc)

    async with app.run_test(size=(100, 30)) as pilot:
        thread = threading.Thread(target=asker)
        thread.start()
        await wait_until(pilot, lambda: bool(outcome))
        thread.join(timeout=2)
        await wait_until(pilot, lambda: app.desk.questions == [] and app.desk.dialog is None)
        assert app.desk.questions == [] and app.desk.dialog is None


async def test_the_demo_capsule_end_to_end(murmur_home: Path) -> None:
    """What `murmur-tui launch` does on a fresh clone: the demo streams, asks, finishes."""
    from tui.core.fs.paths import demo_capsule

    app = SupervisorApp(murmur_home)
    start(app, demo_capsule())
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        assert app.desk.dialog is not None
        assert app.desk.dialog.question.request.tool_name == "ask-user"
        assert "thinking" not in app.supervisor.transcript.window_turns[0].lines
        assert app.supervisor.transcript.window_turns[0].thinking  # streamed before asking
        await wait_until(pilot, lambda: app.desk.dialog is not None and app.desk.dialog.armed)
        await pilot.press(*"yes", "enter")
        await wait_until(pilot, lambda: app.result is not None, within=60)
        await settle(pilot)
        assert app.result is not None and app.result.exit_status == "ok"
        drawn = "\n".join(app.supervisor.transcript.plain_lines)
        assert "you answered: yes" in drawn and "Here is what the workdir holds" in drawn
        assert app.supervisor.faults.count == 2



async def test_closing_the_screen_with_a_question_open_cancels_the_session(
        tmp_path: Path, murmur_home: Path) -> None:
    # nobody can answer once the screen is gone: the waiting tool must not hang the process
    app = SupervisorApp(murmur_home)
    session = start(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
    trace = session.paths.trace

    def ended() -> bool:
        return trace.exists() and any(line["event_type"] == "session_end"
                                      for line in read_jsonl(trace))

    for _ in range(300):  # the session's thread outlives the app; it must end on its own
        if ended():
            break
        await asyncio.sleep(0.05)
    assert ended(), "the session never ended after the screen closed"
    kinds = [line["event_type"] for line in read_jsonl(trace)]
    assert "task_failed" in kinds or "task_end" in kinds
