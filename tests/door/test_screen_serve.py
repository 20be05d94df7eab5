"""`launch CAPSULE --serve` on the screen: the real app under Pilot serving the real door, spoken
to with httpx over loopback — a question open on the screen and through the door at once (the
door's answer closes the dialog), and a task sent through the door joining the session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.app.conftest import settle
from tests.app.test_dialog import asking_capsule
from tests.conftest import read_jsonl
from tests.served import V1
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.core.asking.questions import QuestionBoard
from tui.core.door import Door
from tui.core.door.serving import Serving
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

SLEEP = "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  input_timeout_secs: 120\n"


def served_app(root: Path, home: Path) -> tuple[SupervisorApp, Session]:
    """The app and its session wired as `launch --serve` wires them."""
    app = SupervisorApp(home)
    capsule = load_capsule(root)
    board = QuestionBoard()
    door = Door(capsule, board)
    session = Session(capsule, LaunchOptions(task="t"), sinks=[app.bridge, door.sink],
                      responder=app.responder, cancel=app.cancel)
    app.attach(session)
    app.serve(Serving.start(door, session), board)
    return app, session


async def rpc(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    reply = await client.post("/", headers=V1, json={"jsonrpc": "2.0", "id": 1,
                                                      "method": method, "params": params})
    return reply.json()


async def test_a_question_on_the_screen_is_answered_through_the_door_and_a_door_task_joins(
        tmp_path: Path, murmur_home: Path) -> None:
    root = asking_capsule(tmp_path / "c", extra=SLEEP)
    steps = json.loads((root / "script.json").read_text())
    steps.append({"stop_reason": "end_turn", "content": [{"type": "text", "text": "second"}]})
    (root / "script.json").write_text(json.dumps(steps))
    app, session = served_app(root, murmur_home)
    serving = app.local.serving
    assert serving is not None and serving.url.startswith("http://127.0.0.1:")
    record = murmur_home / "running" / f"{session.session_id}.json"
    assert json.loads(record.read_text())["session_id"] == session.session_id
    async with app.run_test(size=(120, 40)) as pilot, \
            httpx.AsyncClient(base_url=serving.url, timeout=30) as client:
        assert app.sub_title == f"serving {serving.url}"
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        waiting: list[Any] = []

        def door_sees_it() -> bool:
            found = [t for t in session_tasks(app) if t.state == "input-required"]
            waiting[:] = found
            return bool(found)

        await wait_until(pilot, door_sees_it)
        task = waiting[0]
        got = await rpc(client, "GetTask", {"id": task.task_id})
        assert got["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        answered = await rpc(client, "SendMessage", {"message": {
            "messageId": "a1", "role": "ROLE_USER", "taskId": task.task_id,
            "contextId": task.context_id, "parts": [{"text": "from the door"}]}})
        assert answered["result"]["task"]["status"]["state"] == "TASK_STATE_WORKING"
        await wait_until(pilot, lambda: app.desk.dialog is None and not app.desk.questions)
        await wait_until(pilot, lambda: app.state.tasks_ended == 1)
        assert session.record_path is not None
        tool = read_jsonl(session.record_path)[2]
        assert "from the door" in tool["content"][0]["text"]

        sent = await rpc(client, "SendMessage", {"message": {
            "messageId": "t2", "role": "ROLE_USER", "parts": [{"text": "one more"}]}})
        second = sent["result"]["task"]["id"]
        await wait_until(pilot, lambda: app.state.tasks_ended == 2)
        got = await rpc(client, "GetTask", {"id": second})
        assert got["result"]["artifacts"][0]["parts"][0]["text"] == "second"
        await settle(pilot)
        assert app.supervisor.transcript.task_text == "one more"  # it joined the screen
        stop = await rpc(client, "session/stop", {})
        assert stop["result"] == {"session_id": session.session_id, "canceled": [],
                                  "residue": []}
        await wait_until(pilot, lambda: app.result is not None)
    assert not record.exists()  # the served session ended: its record went with it


def session_tasks(app: SupervisorApp) -> list[Any]:
    assert app.local.serving is not None
    return app.local.serving.door.table.live()
