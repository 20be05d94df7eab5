"""`r` in the browser on a session that died while its tool waited for an answer: the real
headless launch is SIGKILLed with the question journaled, then `b`, `r` over the supervisor
starts the follow-up session — the question dialog opens marked "asked before the restart",
and the answer typed there reaches the tool once."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from tests.app.conftest import leave_prompt
from tests.conftest import read_jsonl
from tests.responses import text_response
from tests.waits import wait_until
from tests.wasm.test_durable_questions import asking_capsule, killed_while_asking
from tui.app.app import SupervisorApp
from tui.app.browser.conversations import ConversationsScreen
from tui.core.loop.journal import JOURNAL


def capsule(tmp_path: Path) -> Path:
    return asking_capsule(tmp_path, "durable-screen")


async def test_r_on_a_killed_session_asks_again_and_the_answer_reaches_the_tool(
        tmp_path: Path, murmur_home: Path) -> None:
    root = capsule(tmp_path)
    dead = killed_while_asking(root, murmur_home)
    asked = [x for x in read_jsonl(dead / JOURNAL) if x["event"] == "asked"]
    assert len(asked) == 1
    # after the resume the rebuilt turn runs the call again (its replay is safe) and the
    # model, called next, ends the task
    (root / "script.json").write_text(json.dumps([text_response("done")]), encoding="utf-8")
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await leave_prompt(pilot)  # out of the prompt, where b is text
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationsScreen))
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        await wait_until(pilot, lambda: screen.rows.row_count == 1 and screen.sessions is not None)
        await pilot.press("tab", "r")
        await wait_until(pilot, lambda: app.desk.dialog is not None
                       and bool(app.desk.dialog.query("#asker")),
                       within=60)
        dialog = app.desk.dialog
        assert dialog is not None
        assert str(dialog.query_one("#asker", Static).render()) == \
            "ask asks (asked before the restart):"
        await wait_until(pilot, lambda: dialog.armed)
        await pilot.press(*"main", "enter")
        await wait_until(pilot, lambda: app.result is not None, within=60)
        assert app.desk.dialog is None  # asked once
        result = app.result
        record = app.session.record_path if app.session is not None else None
        assert result is not None and result.ok
    later = result.paths.trace.parent
    assert later != dead
    journal = read_jsonl(later / JOURNAL)
    assert [q["id"] for q in journal if q["event"] == "asked"] == [asked[0]["id"]]
    assert [a["answer"] for a in journal if a["event"] == "answered"] == ["main"]
    # the tool had the answer: the rebuilt turn's one tool message holds it; no task was
    # given, so the dead task went on (no new user message)
    assert record is not None
    messages = read_jsonl(record)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert "main" in json.dumps(messages[2])
    assert (later / "out" / "result.txt").read_text() == "done"
