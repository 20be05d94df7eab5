"""`murmur-tui attach`'s screen under Pilot, on a real served session: a task from the prompt
goes through the door, its question opens the dialog and the answer reaches the tool, Esc Esc
cancels the task through the door, and leaving the screen leaves the session running."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.app.conftest import answerable, key_clock
from tests.conftest import CapsuleFactory
from tests.door_fake import FakeDoor, ack, serving, silence, status
from tests.fleet.test_fleet_screen import ask_capsule
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.attach import RemoteSource
from tui.app.screens.ask import AskScreen
from tui.commands.fleet import resolve
from tui.core.running.records import read_records


def record_of(home: Path, session_id: str) -> object:
    return next(found.record for found in read_records(home)
                if found.record is not None and found.record.session_id == session_id)


async def test_the_attached_screen_asks_answers_cancels_and_leaves_the_session_running(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(ask_capsule(make_capsule, "asker"))
    served.append(door)
    remote = RemoteSource(murmur_home, door.session_id, door.url,
                          record_of(murmur_home, door.session_id))
    app = SupervisorApp(murmur_home, source=remote)
    key_clock(app)
    async with app.run_test(size=(140, 40)) as pilot:
        # the card's name, through the bridge
        await wait_until(pilot, lambda: remote.link_state == "live"
                         and app.state.capsule == "asker")
        await pilot.press(*"ask me", "enter")  # the prompt's task goes through the door
        await wait_until(pilot, lambda: isinstance(app.desk.dialog, AskScreen))
        assert "which branch?" in app.desk.questions[0].request.prompt
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press(*"main", "enter")
        await wait_until(pilot, lambda: app.state.tasks_ended == 1 and not app.desk.questions)
        assert app.state.result == "thanks"
        noted = [json.loads(line) for line in
                 (murmur_home / "tui" / "answers.jsonl").read_text().splitlines()]
        assert [(n["session_id"], n["answer"]) for n in noted] == [(door.session_id, "main")]
        assert (murmur_home / "tui" / "answers.jsonl").stat().st_mode & 0o777 == 0o600
        # a second task; its question is hidden, then Esc Esc cancels the task
        await pilot.press(*"again", "enter")
        await wait_until(pilot, lambda: isinstance(app.desk.dialog, AskScreen))
        await wait_until(pilot, lambda: answerable(app))
        await pilot.press("escape")  # the dialog steps aside
        await wait_until(pilot, lambda: app.desk.dialog is None)
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: app.state.tasks_ended == 2)
        await wait_until(pilot, lambda: not app.desk.questions)  # the canceled task's went with it
        await pilot.press("ctrl+q")
    assert door.process.poll() is None  # leaving never cancels: the session still serves
    assert (murmur_home / "running" / f"{door.session_id}.json").exists()
    card = await asyncio.to_thread(door.client.get, "/.well-known/agent-card.json")
    assert card.status_code == 200


async def test_an_older_door_is_attached_and_answered_in_its_own_shape(
        murmur_home: Path) -> None:
    """Murmur v0.2.0's door: the question's frame has no context, the answer is a plain
    `message/send`, and a new task is refused while the question waits (it would be taken as
    the answer)."""
    task = "tsk_old1"
    script = [ack(), status(task, "working", "inference turn 1", 1),
              status(task, "input-required", "Which env?", 2, context=None), silence(60)]
    with serving(FakeDoor("A", [script])) as door:
        door.wait_input(task, "Which env?")
        app = SupervisorApp(murmur_home, source=RemoteSource(murmur_home, "", door.url))
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.desk.dialog, AskScreen))
            assert app.desk.questions[0].request.prompt == "Which env?"
            await wait_until(pilot, lambda: answerable(app))
            await pilot.press("escape")  # the dialog steps aside: a new task first
            await wait_until(pilot, lambda: app.desk.dialog is None)
            await pilot.press("i", *"deploy it", "enter")
            queue = app.prompts.queue
            await wait_until(pilot, lambda: queue.items and not queue.items[0].sent)
            assert not door.rpc("message/send")  # refused before anything was sent
            await pilot.press("escape")  # out of the prompt (one Esc cancels nothing)
            await wait_until(pilot, lambda: not app.supervisor.prompt.has_focus)
            await pilot.press("a")
            await wait_until(pilot, lambda: isinstance(app.desk.dialog, AskScreen))
            await wait_until(pilot, lambda: answerable(app))
            await pilot.press(*"staging", "enter")
            await wait_until(pilot, lambda: bool(door.rpc("message/send")))
            await pilot.press("ctrl+q")
    sent = door.rpc("message/send")[0].body
    assert sent["params"]["message"]["role"] == "user"
    assert sent["params"]["message"]["parts"] == [{"text": "staging"}]
    assert "taskId" not in sent["params"]["message"]
    assert "a2a-version" not in door.rpc("message/send")[0].headers


async def test_an_authenticated_door_is_attached_with_the_token_beside_its_record(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    auth = "network:\n  authentication:\n    scheme: bearer\n"
    door = serve(make_capsule([text_response("x")], extra=SLEEP + auth))
    served.append(door)
    session_id, url, record, token = resolve(murmur_home, door.session_id[-6:], None)
    assert (session_id, url) == (door.session_id, door.url) and token
    remote = RemoteSource(murmur_home, session_id, url, record, token=token)
    app = SupervisorApp(murmur_home, source=remote)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: remote.link_state == "live" and
                       app.state.capsule == "test-capsule")
        await pilot.press("ctrl+q")
    refused = RemoteSource(murmur_home, session_id, url, None, token="not-the-token")
    async with SupervisorApp(murmur_home, source=refused).run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: refused.link_state == "gone")
        assert "invalid_token" in refused.why_gone or "token" in refused.why_gone
        assert "not-the-token" not in refused.why_gone  # never shown, even refused
        await pilot.press("ctrl+q")
