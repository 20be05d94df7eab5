"""Once the screen closes, `launch` prints one line for each session the screen ran — the
first and each follow-up a prompt started — in the order they ran. Real sessions, the real
app under Pilot, and the lines `launch` prints (tui/commands/launch_screen.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.app.conftest import settle
from tests.app.test_prompt import start, type_prompt
from tests.conftest import CapsuleFactory
from tests.responses import text_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.commands.launch_screen import quit_lines


async def test_quitting_after_follow_ups_tells_every_session(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    root = make_capsule([text_response("The answer is 42.")])
    app = SupervisorApp(murmur_home)
    first = start(app, root)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        sessions = [first]
        for text in ("and again", "once more"):
            await type_prompt(pilot, text)
            await wait_until(pilot, lambda: app.session not in sessions
                             and app.result is not None)
            assert app.session is not None
            sessions.append(app.session)
            await settle(pilot)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: app.return_code is not None)
    record = first.record_path
    assert record is not None
    lines = quit_lines(app, first)
    assert len(lines) == 3
    for line, session in zip(lines, sessions, strict=True):  # each with what it spent
        assert re.fullmatch(
            rf"murmur-tui: session {session.session_id} ended ok · [1-9]\d* in / [1-9]\d* out "
            rf"tokens · workdir {re.escape(str(session.paths.accessible))} · "
            rf"record {re.escape(str(record))}", line), line
    assert len({session.session_id for session in sessions}) == 3
