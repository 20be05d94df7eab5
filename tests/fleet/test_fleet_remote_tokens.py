"""A row of a session on another machine gets its tokens from the door: a real served session
(another MURMUR_HOME, its trace not read by the fleet) whose scripted driver reports usage shows
the sum of its trace's calls, and its cost from the provider's usage; a Murmur door, which
tells no usage, shows `–` — unknown, never a false 0 — and adds nothing to the totals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory
from tests.door_fake import FakeDoor, ack, frame, serving, silence, status
from tests.fleet.test_fleet_formations import on_screen
from tests.responses import call_response, text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tui.app.fleet.app import FleetApp
from tui.app.fleet.links import Link
from tui.app.fleet.model import FleetSession
from tui.core.hosts.status import HostStatus


def far_row(app: FleetApp, home: Path, session_id: str, url: str, host: str) -> FleetSession:
    """A session of another host, as the fleet keeps one: its row, and a link to its door that
    knows nothing of its files (no running record here)."""
    row = app.sessions[session_id] = FleetSession(session_id, url, host=host)
    app.hosts[host] = HostStatus(host, url.removeprefix("http://"), "ok")
    link = app.links[session_id] = Link(home, session_id, url, None, app.arrived, text=False)
    link.start()
    return row


def trace_sum(workdir: Path) -> tuple[int, int]:
    calls = [json.loads(line) for line in (workdir / "trace.jsonl").read_text().splitlines()]
    calls = [line for line in calls if line.get("event_type") == "inference"]
    assert len(calls) == 2
    return sum(c["input_tokens"] for c in calls), sum(c["output_tokens"] for c in calls)


async def test_a_far_sessions_row_has_its_traces_tokens_and_their_cost(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    capsule = make_capsule([
        {**call_response("bash", {"command": "echo hi"}, "call_1"),
         "usage": {"input_tokens": 1000, "output_tokens": 100}},
        {**text_response("done"), "usage": {"input_tokens": 2000, "output_tokens": 50}}],
        model="gpt-4.1", extra=SLEEP)
    monkeypatch.setenv("MURMUR_HOME", str(tmp_path / "far-home"))  # another machine's home
    door = serve(capsule)
    served.append(door)
    monkeypatch.setenv("MURMUR_HOME", str(murmur_home))
    app = FleetApp(murmur_home)
    async with app.run_test(size=(100, 30)) as pilot:
        row = far_row(app, murmur_home, door.session_id, door.url, "build-2")
        await wait_until(pilot, lambda: row.connection == "live")
        task = door.send("say hi")
        door.until(task["id"], "TASK_STATE_COMPLETED")
        tokens_in, tokens_out = trace_sum(Path(door.ready["workdir"]))
        await wait_until(pilot, lambda: row.tokens_in == tokens_in and row.tokens_out ==
                         tokens_out, what=lambda: (row.tokens_in, row.tokens_out))
        assert tokens_in and tokens_out  # murmur-tui's own counts, not 0
        total = f"{tokens_in + tokens_out:,}"
        await wait_until(pilot, lambda: any(
            line.startswith("1  ") and f" {total} " in line for line in on_screen(app.fleet)),
            what=lambda: on_screen(app.fleet))
        # priced from the provider's usage: 3000·$2 + 150·$8 per million
        heading = next(line for line in on_screen(app.fleet) if line.startswith("▪ build-2"))
        assert heading.endswith("· $0.0072"), heading
        assert "$0.0072" in str(app.fleet.totals.render())


async def test_a_murmur_door_that_tells_no_usage_shows_unknown_tokens(
        murmur_home: Path) -> None:
    task = "tsk_019f0d000000000000000000000000d1"
    script = [ack(), status(task, "working", "inference turn 1", 1),
              frame("text", {"id": task, "text": "done", "final": True}, 2),
              status(task, "completed", "session ended", 3, final=True, response="done"),
              silence(60)]
    with serving(FakeDoor("C", [script], name="murmur-capsule")) as door:
        app = FleetApp(murmur_home)
        async with app.run_test(size=(100, 30)) as pilot:
            row = far_row(app, murmur_home, door.session_id or "", door.url, "mur-host")
            await wait_until(pilot, lambda: row.last_task_status == "ok")
            assert not row.tokens_known
            await wait_until(pilot, lambda: any(
                line.startswith("1  ") and " idle · last ok " in line and line.endswith(" –")
                for line in on_screen(app.fleet)), what=lambda: on_screen(app.fleet))
            assert "tokens 0 in / 0 out" in str(app.fleet.totals.render())


def test_tokens_are_unknown_only_once_a_turn_ended_with_no_call_told() -> None:
    from tui.core.events import vocabulary as ev

    def turn_started(row: FleetSession, turn: int) -> None:
        row.apply(ev.TurnStarted(task_id="t", turn=turn, max_turns=0, input_tokens=0))

    def task_ended(row: FleetSession) -> None:
        row.apply(ev.TaskEnded(task_id="t", exit_status="ok", result="", duration_ms=1,
                               turns=1, input_tokens=0, output_tokens=0, tool_calls=0,
                               shell_calls=0, reopen_count=0))

    told, untold = FleetSession("ses_a", "u"), FleetSession("ses_b", "u")
    for row in (told, untold):
        row.apply(ev.TaskStarted(task_id="t", context_id="c", text="go"))
        turn_started(row, 0)
        assert row.tokens_known  # a call under way: nothing says yet that none is told
    told.apply(ev.TurnCompleted(task_id="t", turn=0, input_tokens=10, output_tokens=2,
                                decision="end_turn", stop_reason="end_turn", tool_name=None,
                                model=""))
    turn_started(untold, 1)  # the first turn ended, and no call was told
    assert told.tokens_known and not untold.tokens_known
    task_ended(told)
    task_ended(untold)
    assert told.tokens_known and not untold.tokens_known
