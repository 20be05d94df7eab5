"""The read-only link's fleet under Pilot, over real served sessions: it offers nothing that
acts on this machine (launch, resume, rename), and writes nothing to a public door — a door
with no `network.authentication` would take an answer from anyone, so the link holds back."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory
from tests.responses import call_response, text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tests.wasm.conftest import FIXTURES
from tui.web.watching import WatchingFleetApp

ASK = [call_response("ask", {"q": "which branch?"}), text_response("thanks")]


async def test_the_read_only_fleet_offers_nothing_local_and_does_not_answer_a_public_door(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule(ASK, extra=SLEEP + "  input_timeout_secs: 120\n",
                              folder="public", name="public",
                              tools={"ask": FIXTURES / "ask_tool.wasm"}))
    served.append(door)
    task = door.send("ask me")
    app = WatchingFleetApp(murmur_home)
    notes: list[str] = []
    async with app.run_test(size=(160, 30), notifications=True) as pilot:
        app.notify = lambda message, **_: notes.append(str(message))  # type: ignore[method-assign]
        await wait_until(pilot, lambda: any(s.group == "needs" for s in app.sessions.values()),
                         within=30)
        offered = {key for key, active in app.active_bindings.items() if active.enabled}
        assert {"a", "t", "x", "S", "enter"} <= offered  # the door says no to these
        assert not {"n", "r", "R"} & offered  # nothing that acts on this machine
        await pilot.press("n")
        assert not app.fleet.input.display  # no capsule is asked for
        await pilot.press("a")
        await pilot.press(*"main", "enter")
        await wait_until(pilot, lambda: any("does not write to it" in note for note in notes))
        said = next(note for note in notes if "does not write to it" in note)
        assert said.startswith(f"{door.session_id}: its door is public")
        state = await asyncio.to_thread(door.rpc, "GetTask", {"id": task["id"]})
        assert state.json()["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


async def test_the_read_only_fleet_writes_no_screenshot_on_the_serving_machine(
        murmur_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    app = WatchingFleetApp(murmur_home)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        app.action_screenshot()  # what the palette's Screenshot runs
        await pilot.pause()
        said = [str(note.message) for note in app._notifications]
    assert any("writes no file on the machine that serves it" in note for note in said), said
    assert not [path for path in os.listdir(tmp_path) if path.endswith(".svg")]


async def test_the_read_only_fleet_shows_no_other_host(murmur_home: Path) -> None:
    """A host's token is the operator's: the read-only link would answer with it."""
    fleet_yaml = murmur_home / "tui" / "fleet.yaml"
    fleet_yaml.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fleet_yaml.write_text("hosts:\n  - name: build-3\n    doors: [http://127.0.0.2:7401]\n"
                          "    token_env: MURMUR_BUILD_TOKEN\n")
    fleet_yaml.chmod(0o600)
    app = WatchingFleetApp(murmur_home)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await pilot.pause()
        said = [str(note.message) for note in app._notifications]
        assert list(app.hosts) == [""]  # this machine only
        assert not app.remote.watchers
    assert any(note.startswith("Other hosts are not shown on the read-only link") for note in said)
