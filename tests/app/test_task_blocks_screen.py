"""Three tasks in one real session, on the real screen: the task given at launch, a prompt
typed while it ran (queued) and one typed once the session waited (typed) — each its own block
under its own header, turns counted from 1 in each, each end line under its own turns; a
running call's line counting its seconds; `e` writing the whole transcript as Markdown."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from tests.app.conftest import keep_notes, leave_prompt, recorded, replay
from tests.app.test_prompt import QUEUE, WAIT_FOR_GO, queue_prompt, start, type_prompt
from tests.conftest import CapsuleFactory
from tests.fakes import RecordingDriver
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.models.transcript_text import text_lines

CALL = f'bash {{"command": "{WAIT_FOR_GO}"}}'
TIME = re.compile(r"\d+(\.\d)? (ms|s)\b")


def drawn(app: SupervisorApp) -> list[str]:
    """The transcript's lines as drawn, without the rules that run to the edge."""
    return [line.rstrip().rstrip("━─").rstrip() for line in app.supervisor.transcript.plain_lines]


def clock(app: SupervisorApp) -> str | None:
    """The running call's time, as its line shows it."""
    for line in drawn(app):
        found = re.match(rf"→ {re.escape(CALL)} · (\d+\.\d s)$", line)
        if found:
            return found.group(1)
    return None


async def test_three_tasks_in_one_session_are_three_blocks(
        murmur_home: Path, make_capsule: CapsuleFactory, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    driver = RecordingDriver(tool_response(WAIT_FOR_GO), text_response("First done."),
                             text_response("One done."), text_response("Two done."))
    root = make_capsule([], extra=QUEUE)
    app = SupervisorApp(murmur_home)
    session = start(app, root, driver)
    notes = keep_notes(app)
    async with app.run_test(size=(140, 40)) as pilot:
        transcript = app.supervisor.transcript
        # the running call says how long it has run, and the time goes on
        await wait_until(pilot, lambda: clock(app) is not None, what=lambda: drawn(app))
        first = clock(app)
        await wait_until(pilot, lambda: clock(app) not in (None, first))
        await queue_prompt(pilot, "one")  # typed while the first task runs: it waits
        (session.paths.accessible / "go").write_text("")
        await wait_until(pilot, lambda: app.state.tasks_ended == 2)
        await type_prompt(pilot, "two")  # the session waits for a task: it runs at once
        await wait_until(pilot, lambda: app.state.tasks_ended == 3 and transcript.drawn and
                         "✓ task ok · 1 turn · 0 tool calls" in drawn(app)[-2:])
        lines = drawn(app)
        ran = next(i for i, line in enumerate(lines) if line.startswith("✓ $ "))
        assert TIME.sub("T", lines[ran]) == f"✓ $ {WAIT_FOR_GO} · exit 0 · T"
        assert clock(app) is None  # it ended: its line shows its duration, no clock
        assert lines[:ran] + lines[ran + 1:] == [
            f"Session {session.session_id} · 3 tasks", "",
            "▌ Task 1 · given at launch", "first task", "",
            "turn 1", "",
            "turn 2", "First done.", "",
            "✓ task ok · 2 turns · 1 tool call", "",
            "▌ Task 2 · queued", "one", "",
            "turn 1", "One done.", "",
            "✓ task ok · 1 turn · 0 tool calls", "",
            "▌ Task 3 · typed", "two", "",
            "turn 1", "Two done.", "",
            "✓ task ok · 1 turn · 0 tool calls"]
        # the model says the same, in its own plain form
        assert [line for line in text_lines(transcript.model)
                if not line.startswith("✓ $ ")] == [
            f"Session {session.session_id} · 3 tasks",
            "Task 1 · given at launch", "first task", "turn 1", "turn 2", "First done.",
            "✓ task ok · 2 turns · 1 tool call",
            "Task 2 · queued", "one", "turn 1", "One done.", "✓ task ok · 1 turn · 0 tool calls",
            "Task 3 · typed", "two", "turn 1", "Two done.", "✓ task ok · 1 turn · 0 tool calls"]
        # `e`: the whole transcript as Markdown, next to where murmur-tui runs
        await leave_prompt(pilot, "escape")  # `e` acts out of the prompt
        await pilot.press("e")
        target = tmp_path / f"{session.session_id}-transcript.md"
        await wait_until(pilot, lambda: target.exists())
        assert f"Transcript (3 tasks) written to {target}." in notes
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        text = target.read_text(encoding="utf-8")
        assert text.startswith(f"# Session {session.session_id} · 3 tasks\n")
        sections = [line for line in text.splitlines() if line.startswith("#")]
        assert sections == [f"# Session {session.session_id} · 3 tasks",
                            "## Task 1 · given at launch", "### Turn 1", "### Turn 2",
                            "## Task 2 · queued", "### Turn 1",
                            "## Task 3 · typed", "### Turn 1"]
        assert "> one\n" in text and "> two\n" in text and "Two done.\n" in text
        # the palette's command writes the same
        target.unlink()
        await pilot.press("ctrl+p")
        await pilot.press(*"export the transcript")
        await wait_until(pilot, lambda: app.screen is not app.supervisor)
        await pilot.press("enter")
        await wait_until(pilot, lambda: target.exists())
        assert target.read_text(encoding="utf-8") == text
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)


async def test_a_prompt_after_the_session_ended_is_a_block_in_the_follow_up_session(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    root = make_capsule([text_response("The answer is 42.")])
    app = SupervisorApp(murmur_home)
    first = start(app, root)
    async with app.run_test(size=(200, 40)) as pilot:  # the session ids fit on one line
        await wait_until(pilot, lambda: app.result is not None)
        await type_prompt(pilot, "and again")
        await wait_until(pilot, lambda: app.session is not first and app.result is not None
                         and app.supervisor.transcript.drawn
                         and drawn(app)[-1].startswith("✓ task ok"))
        second = app.session
        assert second is not None
        assert drawn(app) == [
            f"Session {first.session_id} · 1 follow-up session · 2 tasks", "",
            "▌ Task 1 · given at launch", "first task", "",
            "turn 1", "The answer is 42.", "",
            "✓ task ok · 1 turn · 0 tool calls", "",
            "▌ Task 2 · typed",
            f"in session {second.session_id}, which goes on from {first.session_id}",
            "and again", "",
            "turn 1", "The answer is 42.", "",
            "✓ task ok · 1 turn · 0 tool calls"]


async def test_an_export_that_cannot_be_written_says_why(
        murmur_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    app = SupervisorApp(murmur_home)
    notes = keep_notes(app)
    events = recorded()
    session_id = events[0].session_id
    target = here / f"{session_id}-transcript.md"
    target.mkdir()  # something that is not a file holds the name
    async with app.run_test(size=(140, 40)) as pilot:
        await replay(pilot, events)
        await leave_prompt(pilot)  # `e` acts out of the prompt
        await pilot.press("e")
        await wait_until(pilot, lambda: any(note.startswith("Could not") for note in notes))
        assert f"Could not write {target}: Is a directory" in notes
        assert target.is_dir() and list(here.iterdir()) == [target]  # nothing left over
        target.rmdir()
        await pilot.press("e")
        await wait_until(pilot, lambda: target.is_file())
        assert target.read_text(encoding="utf-8").startswith(
            f"# Session {session_id} · 1 task\n\nCapsule screen-fixture 1.0.0 · "
            "model fixture-model\n\n## Task 1 · given at launch\n\n> Look around, carefully.\n")
