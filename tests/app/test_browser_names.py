"""The browser's list calls a conversation by its session's name (`launch --name`): the name in
the context column with the context id shortened after it, matched by the filter; a resumed
session that keeps the name keeps the conversation's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import CapsuleFactory, run_cli
from tests.responses import text_response
from tests.waits import wait_until
from tui.app.browser.app import BrowserApp
from tui.app.browser.conversations import ConversationsScreen
from tui.app.models.fitting import short_id


async def test_a_named_conversation_is_listed_and_found_by_its_name(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("noted"), text_response("again")])
    named = run_cli("launch", str(root), "--headless", "--json", "--name", "cat census",
                    "--task", "count the cats")
    assert named.returncode == 0, named.stderr
    context = json.loads(named.stdout.splitlines()[0])["context_id"]
    plain = run_cli("launch", str(root), "--headless", "--json", "--task", "walk the dog")
    assert plain.returncode == 0, plain.stderr
    other = json.loads(plain.stdout.splitlines()[0])["context_id"]
    app = BrowserApp(murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)

        def contexts() -> list[str]:
            return [r.shown()[2] for r in screen.rows.rows]

        await wait_until(pilot, lambda: contexts() == [
            other, f"cat census · {short_id(context)}"], what=contexts)
        screen.filter_input.focus()
        await pilot.press(*"census")
        await wait_until(pilot, lambda: contexts() == [f"cat census · {short_id(context)}"],
                         what=contexts)
