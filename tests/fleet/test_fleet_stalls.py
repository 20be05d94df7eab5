"""Stalls and deaths in the fleet (docs/fleet.md, "Stalls and deaths"): a working session whose
door sends no frame and no heartbeat for three heartbeat periods is *stalled?* under Needs you
until it is heard again; a session whose process is gone without saying its end is *gone*
under Needs you until it is put aside (`d`) or resumed (`r`); each is told once.

The rule at the model, with explicit clocks; then the real FleetApp under Pilot over fake doors
on loopback (one silent, one heartbeating) and a real served session SIGKILLed."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from textual.drivers.headless_driver import HeadlessDriver

from tests.app.conftest import keep_notes
from tests.conftest import CapsuleFactory
from tests.door_fake import FakeDoor, ack, heartbeats, serving, silence, status, until
from tests.fleet.test_fleet_edges import HEADING_80, groups_drawn, line_of, screen_lines
from tests.fleet.test_fleet_notify import Hook, output
from tests.fleet.test_ps import record
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import block_until, wait_until
from tui.app.fleet.app import FleetApp
from tui.app.fleet.lifeline import alarms, detail
from tui.app.fleet.model import FleetSession, records_gone
from tui.app.fleet.tree import FormationTree, build
from tui.app.fleet.tree_rows import alarm_cell
from tui.core import ids
from tui.core.a2a.client import DoorClient
from tui.core.events import vocabulary as ev
from tui.core.notify.outbound import Notice, Outbound
from tui.core.notify.settings import NotifySettings
from tui.core.remote.heartbeat import load_heartbeat
from tui.core.remote.watch import StreamFrame, Watcher, WatchState

STATUS = HEADING_80.index("status")
BEAT = 1.0  # the doors' heartbeat period the tests' fleet is told: a stall after 3 s
STALLED = re.compile(r"stalled\? · 0:(\d\d) ")  # the status cell, and its seconds
ENDED = ev.SessionEnded(exit_status="ok", duration_ms=1, total_turns=1, total_input_tokens=1,
                        total_output_tokens=1, total_tool_calls=0, total_shell_calls=0)


def working(at: float = 100.0, heartbeat: float = 15.0) -> FleetSession:
    """A session in a task, its door last heard at `at`."""
    session = FleetSession("ses_w", "http://127.0.0.1:1", capsule="builder", name="build-bot")
    session.connect("live", now=at)
    session.apply(ev.TaskStarted(task_id="t1", context_id="c1", text="build it"), at)
    session.hear(at, at, heartbeat)
    assert session.group == "working"
    return session


# -- the rule, at the model ---------------------------------------------------------------------
def test_a_working_session_silent_past_three_heartbeats_is_stalled_from_the_last_thing_heard(
        ) -> None:
    session = working(at=100.0)
    assert not session.hear(None, 145.0)  # 45 s: three periods, not past them
    assert session.group == "working" and not session.stalled
    assert session.hear(None, 145.5)
    assert session.group == "needs" and session.status == "stalled?"
    assert session.since == 100.0  # how long: since the last thing heard
    assert alarm_cell(session, 162.0) == "stalled? · 1:02"
    assert detail(session, 147.9).startswith(
        "stalled? no frame or heartbeat for 47 s (the door's heartbeat is every 15 s)")
    # a heartbeat heard: working again, the clock from then
    assert session.hear(150.0, 150.2)
    assert session.group == "working" and alarm_cell(session, 150.2) is None
    assert not session.hear(None, 195.0) and session.hear(None, 195.1)  # silent again


def test_a_frame_clears_a_stall_and_reconnects_that_hear_nothing_do_not() -> None:
    session = working(at=10.0, heartbeat=1.0)
    assert session.hear(10.0, 13.5, 1.0) and session.stalled
    for state in ("reconnecting", "live", "reconnecting", "live"):  # the watcher retrying
        session.connect(state, "no heartbeat for 2 s", now=14.0)
        session.hear(10.0, 14.0, 1.0)  # a replay repeats old frames: heard stays
        assert session.group == "needs" and session.status == "stalled?"
    assert session.apply(ev.TurnStarted(task_id="t1", turn=1, max_turns=9, input_tokens=1),
                         15.0)
    assert session.group == "working" and session.heard == 15.0


def test_a_watcher_that_gave_up_on_a_working_session_leaves_it_stalled_not_done() -> None:
    session = working(at=0.0, heartbeat=1.0)
    session.connect("gone", "cannot reach 127.0.0.1:1: connection refused, for 60 s", now=60.0)
    session.hear(None, 60.0, 1.0)
    assert session.group == "needs" and session.status == "stalled?"
    assert "the stream: cannot reach 127.0.0.1:1" in detail(session, 60.0)


@pytest.mark.parametrize("how", ["asks", "idle", "ended", "closed", "no door"])
def test_only_a_session_in_a_task_with_no_question_open_can_stall(how: str) -> None:
    session = working(at=0.0)
    if how == "asks":
        session.apply(ev.InputRequested(task_id="t1", request_id="r", prompt="Which?",
                                        tool_name="ask"), 1.0)
    elif how == "idle":
        session.apply(ev.TaskEnded(task_id="t1", exit_status="ok", result="", duration_ms=1,
                                   turns=1, input_tokens=1, output_tokens=1, tool_calls=0,
                                   shell_calls=0), 1.0)
    elif how == "ended":
        session.apply(ENDED, 1.0)
    elif how == "closed":
        session.connect("closed", now=1.0)
    else:
        session = FleetSession("ses_n", "")
        session.connect("no door", now=0.0)
        session.in_task = True
    session.hear(None, 1000.0)
    assert not session.stalled and session.status != "stalled?"


def test_d_puts_a_stall_aside_until_the_door_is_heard_and_falls_silent_again() -> None:
    session = working(at=0.0, heartbeat=1.0)
    session.hear(None, 4.0, 1.0)
    assert session.put_aside(4.0)
    assert session.group == "working" and session.status == "stalled?"
    assert "put aside" in detail(session, 5.0)
    session.hear(None, 30.0, 1.0)
    assert session.group == "working"  # the same silence: still put aside
    session.hear(31.0, 31.0, 1.0)
    assert session.hear(None, 34.5, 1.0) and session.group == "needs"  # a new one


def test_a_death_with_no_end_said_is_gone_under_needs_you_until_put_aside() -> None:
    session = working(at=0.0)
    assert session.connect("gone", "no process holds pid 4242", dead=True, now=20.0)
    assert session.lost and session.group == "needs" and session.since == 20.0
    assert alarm_cell(session, 35.0) == "gone · 0:15"
    assert detail(session, 35.0) == ("gone: no process holds pid 4242 · d puts it aside, r "
                                     "resumes a murmur-tui session")
    assert not session.connect("live", now=21.0)  # a watcher still retrying: gone stays
    session.hear(None, 500.0)
    assert not session.stalled  # a dead session is gone, never stalled
    assert session.put_aside(40.0)
    assert session.group == "done" and session.status == "gone: no process holds pid 4242"
    assert alarm_cell(session, 41.0) is None and not session.put_aside(41.0)


@pytest.mark.parametrize("how", ["closed", "ended", "stopped", "record removed"])
def test_a_death_after_its_end_was_said_is_done(how: str) -> None:
    session = working(at=0.0)
    if how == "closed":
        session.connect("closed", now=1.0)  # capsule-closed
    elif how == "ended":
        session.apply(ENDED, 1.0)
    elif how == "stopped":
        session.stopping = True  # S from the fleet
    if how == "record removed":
        session = FleetSession("ses_h", "")
        session.connect("no door", now=0.0)
        assert records_gone({"ses_h": session}, set())  # its launcher removed it at its end
    else:
        session.connect("gone", "no process holds pid 1", dead=True, now=2.0)
    assert not session.lost and session.group == "done"


def test_each_stall_and_each_death_seen_is_told_once() -> None:
    stalled = working(at=0.0, heartbeat=1.0)
    dying = working(at=0.0)
    stale = FleetSession("ses_s", "u")  # found dead: never seen running
    stalled.hear(None, 3.5, 1.0)
    dying.connect("gone", "no process holds pid 9", dead=True, now=3.5)
    stale.connect("gone", "no process holds pid 8", dead=True, now=3.5)
    told = alarms([stalled, dying, stale])
    assert [(s.session_id, what) for s, what in told] == [("ses_w", "stalled"), ("ses_w", "gone")]
    assert told[1][0] is dying and stale.group == "needs"
    assert alarms([stalled, dying, stale]) == []  # once
    stalled.hear(5.0, 5.0, 1.0)
    stalled.hear(None, 8.5, 1.0)
    assert [what for _, what in alarms([stalled])] == ["stalled"]  # a new silence


def test_a_stall_or_death_notice_names_the_session_and_says_why() -> None:
    notice = Notice("ses_1", "builder", "no frame or heartbeat for 47 s (the door's heartbeat "
                    "is every 15 s)", "2026-12-02T18:00:00Z", "build-bot", "stalled")
    assert notice.headline() == "build-bot (ses_1) stalled?"
    assert notice.body() == {"session": "ses_1", "name": "build-bot", "capsule": "builder",
                             "event": "stalled", "why": notice.question,
                             "at": "2026-12-02T18:00:00Z"}
    asks = Notice("ses_1", "builder", "Which?", "2026-12-02T18:00:00Z")
    assert set(asks.body()) == {"session", "capsule", "question", "asked_at"}  # as it was


@pytest.mark.parametrize(("text", "period", "problem"), [
    (None, 15.0, None), ("notify:\n  desktop: false\n", 15.0, None),
    ("heartbeat_secs: 0.5\n", 0.5, None), ("heartbeat_secs: 30\n", 30.0, None),
    ("heartbeat_secs: fast\n", 15.0, "heartbeat_secs: expected a number of seconds"),
    ("heartbeat_secs: 0\n", 15.0, "from 0.05 to 3600; using 15"),
    ("heartbeat_secs: true\n", 15.0, "expected a number")])
def test_the_heartbeat_period_is_read_from_fleet_yaml(murmur_home: Path, text: str | None,
                                                      period: float, problem: str | None
                                                      ) -> None:
    if text is not None:
        (murmur_home / "tui").mkdir(parents=True, exist_ok=True)
        (murmur_home / "tui" / "fleet.yaml").write_text(text)
    found, problems = load_heartbeat(murmur_home)
    assert found == period
    assert (problem is None and not problems) or (len(problems) == 1 and
                                                  problem in problems[0])


def test_a_formation_counts_its_stalled_members() -> None:
    lead, coder = working(at=0.0, heartbeat=1.0), working(at=0.0, heartbeat=1.0)
    lead.session_id, coder.session_id = "ses_lead", "ses_coder"
    for session, member in ((lead, "lead"), (coder, "coder")):
        session.formation_id, session.member = "frm_1", member
    lead.entry = True
    coder.hear(None, 3.5, 1.0)
    [formation] = build([lead, coder])
    assert isinstance(formation, FormationTree) and formation.group == "needs"
    assert formation.status == "1 working · 1 stalled?"


# -- what the watcher hears ----------------------------------------------------------------------
def test_the_watcher_hears_frames_and_heartbeats_but_not_a_reconnects_replay() -> None:
    """Connection 1: a frame, three heartbeats, then cut; connection 2: the door's ack and
    the same frame replayed, then silence. `heard` moves with the heartbeats (after the
    frame) and stays there through the second connection."""
    frames: list[tuple[StreamFrame, float | None]] = []
    lives: list[float] = []
    first = [ack(), status("tsk_1", "working", "inference turn 1", 1), heartbeats(3)]
    second = [ack(), status("tsk_1", "working", "inference turn 1", 1), silence(30)]
    with serving(FakeDoor("C", [first, second])) as door:
        watcher: Watcher

        def on_state(state: WatchState) -> None:
            if state.kind == "live":
                lives.append(time.monotonic())

        watcher = Watcher(DoorClient(door.url, timeout=2),
                          lambda frame: frames.append((frame, watcher.heard)), on_state,
                          heartbeat=5.0, backoff_first=0.02)
        watcher.start()
        try:
            block_until(lambda: len(lives) >= 2 and door.watches >= 2)
            told = [when for frame, when in frames if frame.event == "status"]
            assert len(told) == 1  # the replay: dropped
            at_frame = told[0]
            assert at_frame is not None
            heard = watcher.heard
            assert heard is not None and at_frame < heard < lives[1]  # the heartbeats
            block_until(lambda: watcher.dedup.repeats >= 1)  # the replay has been read
            assert watcher.heard == heard
        finally:
            watcher.close()


def test_a_stall_told_as_plain_text_names_the_session_and_why(webhook: Hook) -> None:
    notice = Notice("ses_1", "builder", "no frame or heartbeat for 47 s (the door's heartbeat "
                    "is every 15 s)", "2026-12-02T18:00:00Z", "build-bot", "stalled")
    for thread in Outbound(NotifySettings(webhook=webhook.url, body="text",
                                          desktop=False)).send(notice):
        thread.join(10)
    _, headers, body = webhook.next()
    assert body.decode() == ("build-bot (ses_1) stalled?: no frame or heartbeat for 47 s (the "
                             "door's heartbeat is every 15 s)")
    assert headers["Title"] == "murmur-tui: build-bot (ses_1) needs you"


# -- the real fleet -------------------------------------------------------------------------------
def fleet_yaml(home: Path, webhook: str) -> None:
    (home / "tui").mkdir(parents=True, exist_ok=True)
    (home / "tui" / "fleet.yaml").write_text(
        f"heartbeat_secs: {BEAT}\nnotify:\n  webhook: {webhook}\n  desktop: false\n")


def posted(webhook: Hook) -> list[dict[str, str]]:
    """The JSON bodies the webhook received so far."""
    out = []
    while not webhook.received.empty():
        out.append(json.loads(webhook.received.get()[2]))
    return out


@pytest.fixture
def webhook() -> Iterator[Hook]:
    """A webhook receiver on loopback (tests/fleet/test_fleet_notify.py)."""
    receiver = Hook()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


def seconds(line: str) -> int:
    """How long a stalled row's status says it has been silent (-1: not stalled)."""
    shown = STALLED.match(line[STATUS:])
    return int(shown.group(1)) if shown else -1


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Everything the app writes to a WezTerm (OSC 777) terminal, kept."""
    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")
    monkeypatch.delenv("TMUX", raising=False)
    out: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: out.append(data))
    yield out


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """What the silent door waits on before it speaks again (set at the end whatever
    happened, so none of its connections is left waiting)."""
    event = threading.Event()
    yield event
    event.set()


async def test_a_silent_door_is_stalled_under_needs_you_and_a_heartbeating_one_is_not(
        murmur_home: Path, tmp_path: Path, webhook: Hook, gate: threading.Event) -> None:
    """Two fake doors on loopback, each with a running task: one opens the stream, shows
    its task and then sends nothing — no frame, no heartbeat — until the test lets it; the
    other sends heartbeats only. With a 1 s heartbeat in fleet.yaml the first is shown
    `stalled?` under Needs you with its age, stays so over the watcher's reconnects, is told
    once, and is Working again at its next frame; the second is never stalled."""
    fleet_yaml(murmur_home, webhook.url)
    stuck_id, beating_id = ids.session_id(), ids.session_id()
    with ExitStack() as stack:
        stuck = stack.enter_context(serving(FakeDoor("C", [[
            ack(), status("tsk_1", "working", "inference turn 1", 1), until(gate),
            status("tsk_1", "working", "inference turn 2", 2), heartbeats(100_000)]],
            session_id=stuck_id, name="stuck")))
        stuck.working("tsk_1", text="count the stars")
        beating = stack.enter_context(serving(FakeDoor("C", [[
            ack(), status("tsk_2", "working", "inference turn 1", 1), heartbeats(100_000)]],
            session_id=beating_id, name="beating")))
        beating.working("tsk_2", text="count the sheep")
        record(murmur_home, stuck_id, stuck.url, tmp_path / "stuck", capsule_name="stuck")
        record(murmur_home, beating_id, beating.url, tmp_path / "beating",
               capsule_name="beating")
        app = FleetApp(murmur_home)
        said = keep_notes(app)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: len(app.sessions) == 2)
            quiet, busy = app.sessions[stuck_id], app.sessions[beating_id]
            drawn = groups_drawn(app, beating_id)
            await wait_until(pilot, lambda: busy.group == "working")
            entered = busy.since
            await wait_until(pilot, lambda: quiet.group == "needs",
                             what=lambda: screen_lines(app)[:8])
            lines = screen_lines(app)
            row = next(i for i, line in enumerate(lines) if line.startswith("1  "))
            assert lines[row - 1].startswith("   Needs you (1)")
            assert lines[row][3:17] == f"ses_…{stuck_id[-9:]}" and \
                lines[row][18:23] == "stuck"
            assert STALLED.match(lines[row][STATUS:]), lines[row]
            assert lines[row].endswith("count the s…")  # cut at 80 columns
            assert [line for line in lines if line.startswith("   Working (1)")]
            assert quiet.heartbeat == BEAT and quiet.since == quiet.heard
            app.fleet.rows.select_key(stuck_id)
            await wait_until(pilot, lambda: "no frame or heartbeat for" in str(
                app.fleet.detail.render()))
            assert f"(the door's heartbeat is every {BEAT:g} s)" in str(
                app.fleet.detail.render())
            # told once, naming it: on the screen and to the webhook
            await wait_until(pilot, lambda: any("stalled?" in note for note in said))
            assert next(note for note in said if "stalled?" in note).startswith(
                f"stuck ({stuck_id}) stalled?: no frame or heartbeat for ")
            body = await asyncio.to_thread(webhook.next)
            assert json.loads(body[2])["event"] == "stalled"
            assert json.loads(body[2])["session"] == stuck_id
            # the watcher drops the silent stream (two periods) and reconnects: still stalled,
            # counted from the last thing heard
            heard = quiet.heard
            link = app.links[stuck_id]
            assert link.watcher is not None
            first = link.watcher.connections
            await wait_until(pilot, lambda: link.watcher is not None and
                             link.watcher.connections >= first + 2)
            assert quiet.group == "needs" and quiet.heard == heard
            await wait_until(pilot, lambda: seconds(line_of(app, "1  ")) >= 3 * BEAT + 2,
                             what=lambda: screen_lines(app)[:8])
            # the heartbeating door, all that time: never stalled
            assert busy.group == "working" and busy.since == entered and "needs" not in drawn
            assert not busy.stalled and busy.heard is not None
            # the silent door speaks: Working again
            gate.set()
            await wait_until(pilot, lambda: quiet.group == "working",
                             what=lambda: screen_lines(app)[:8])
            await wait_until(pilot, lambda: "   Needs you (0)" in screen_lines(app)[2])
            assert len([note for note in said if "stalled?" in note]) == 1
            assert [b for b in posted(webhook) if b.get("event") == "stalled"] == []  # once


async def test_a_killed_served_session_is_gone_under_needs_you_then_put_aside_with_d(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served],
        webhook: Hook, terminal: list[str]) -> None:
    """A real served session, named, SIGKILLed while the fleet watches it: `gone` under
    Needs you at once with how long, the reason under the list, told once (screen, terminal
    and webhook) naming it; `d` puts it under Done, where it stays."""
    fleet_yaml(murmur_home, webhook.url)
    door = serve(make_capsule([text_response("x")], extra=SLEEP, folder="plain",
                              name="plain"), "--name", "build-bot")
    served.append(door)
    app = FleetApp(murmur_home)
    said = keep_notes(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: door.session_id in app.sessions and
                         app.sessions[door.session_id].connection == "live")
        dead = app.sessions[door.session_id]
        await wait_until(pilot, lambda: dead.name == "build-bot")
        assert dead.group == "done"  # idle
        pid = door.process.pid
        door.process.kill()
        await asyncio.to_thread(door.process.wait, 30)
        await wait_until(pilot, lambda: dead.group == "needs",
                         what=lambda: screen_lines(app)[:6])
        await wait_until(pilot, lambda: line_of(app, "1  ")[STATUS:].startswith("gone · 0:"),
                         what=lambda: screen_lines(app)[:6])
        assert screen_lines(app)[2].startswith("   Needs you (1)")
        assert line_of(app, "1  ")[3:12] == "build-bot"
        app.fleet.rows.select_key(dead.session_id)
        await wait_until(pilot, lambda: f"gone: no process holds pid {pid} · d puts it aside"
                         in str(app.fleet.detail.render()))
        await wait_until(pilot, lambda: any("is gone" in note for note in said))
        assert [note for note in said if "is gone" in note] == [
            f"build-bot ({door.session_id}) is gone: no process holds pid {pid}"]
        told = f"\x1b]777;notify;build-bot ({door.session_id}) is gone;no process holds pid " \
               f"{pid}\x07"
        await wait_until(pilot, lambda: told in output(terminal))
        assert told + "\a" in output(terminal)  # the notification, the bell, and the title
        assert "\x1b]2;murmur-tui · 1 needs you\x07" in output(terminal)
        body = json.loads((await asyncio.to_thread(webhook.next))[2])
        assert body == {"session": door.session_id, "name": "build-bot", "capsule": "plain",
                        "event": "gone", "why": f"no process holds pid {pid}",
                        "at": body["at"]}
        await pilot.press("d")
        await wait_until(pilot, lambda: dead.group == "done")
        await wait_until(pilot, lambda: screen_lines(app)[2].startswith("   Needs you (0)"))
        assert line_of(app, "1  ")[STATUS:].startswith("gone: no process")
        drawn = groups_drawn(app, dead.session_id)
        await wait_until(pilot, lambda: len(drawn) >= 12)  # three seconds of redraws
        assert set(drawn) == {"done"}
        await pilot.press("d")  # nothing more to put aside: it says so
        await wait_until(pilot, lambda: any("only a stalled? or gone session" in note
                                            for note in said))
        assert posted(webhook) == []  # told once
        assert output(terminal).count("is gone;") == 1
