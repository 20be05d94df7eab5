"""The fleet screen with sessions on three hosts and a fourth that cannot be reached, under
Pilot at 80×24: a section per host with its totals, the unreachable host's one row, the numbers
across the sections, the highlight on the question that has waited longest on any host, and
the totals line over them. The clocks stand still so the picture is the same whenever it is
taken (update with `--snapshot-update` and look at the SVG before committing it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot

from tests.fleet.test_fleet_formations import on_screen
from tests.waits import wait_until
from tui.app.fleet import screen as fleet_screen
from tui.app.fleet.model import FleetSession
from tui.app.fleet.screen import FleetScreen
from tui.core.events import vocabulary as ev
from tui.core.hosts.status import HostStatus

NOW = 1000.0


class StoppedClock:
    """The screen's clocks, standing still."""

    @staticmethod
    def monotonic() -> float:
        return NOW

    @staticmethod
    def time() -> float:
        return 1_796_000_000.0


def session(session_id: str, host: str, capsule: str, *, task: str = "",
            asks: str = "", waited: float = 75.0, tokens: tuple[int, int] = (0, 0),
            model: str = "gpt-4.1") -> FleetSession:
    row = FleetSession(session_id, f"http://{host or '127.0.0.1'}:7401", host=host)
    row.connection = "live"
    row.apply(ev.SessionStarted(capsule_name=capsule, capsule_version="1.0", model=model,
                                workdir="", trace_path="", context_id="", record_path=None,
                                max_turns=8, tools=()), NOW - 600)
    if task:
        row.apply(ev.TaskStarted(task_id=f"tsk_{session_id[-4:]}", context_id="c", text=task),
                  NOW - waited)
    if tokens != (0, 0):
        row.apply(ev.TurnCompleted(task_id=f"tsk_{session_id[-4:]}", turn=0,
                                   input_tokens=tokens[0], output_tokens=tokens[1],
                                   decision="end_turn", stop_reason="end_turn",
                                   tool_name=None, model=""), NOW - waited)
    if asks:
        row.apply(ev.InputRequested(task_id=f"tsk_{session_id[-4:]}", request_id="r",
                                    prompt=asks, tool_name="ask"), NOW - waited)
    row.since = NOW - waited  # in its group that long
    return row


def three_hosts() -> tuple[list[FleetSession], list[HostStatus]]:
    sessions = [
        session("ses_019f0a0000000000000000000000a001", "", "docs-writer",
                task="Rewrite the install guide", tokens=(12_000, 3_400)),
        session("ses_019f0a0000000000000000000000a002", "", "linter", waited=300.0),
        session("ses_019f0b0000000000000000000000b001", "build-2", "deployer",
                task="Ship 2.4", asks="Deploy to staging or prod?", waited=41.0,
                tokens=(8_100, 900)),
        session("ses_019f0b0000000000000000000000b002", "build-2", "tester",
                task="Run the nightly suite", waited=130.0, tokens=(2_000, 150)),
        session("ses_019f0c0000000000000000000000c001", "build-3", "migrator",
                task="Migrate the orders table", asks="Which branch?", waited=95.0,
                tokens=(5_000, 700), model="claude-haiku-4-5"),
    ]
    hosts = [HostStatus(""), HostStatus("build-2", "127.0.0.2:7401", "ok"),
             HostStatus("build-3", "ssh", "ok"),
             HostStatus("build-4", "127.0.0.4:7401", "unreachable", "connection refused",
                         retry_at=NOW + 8.5, failures=3)]
    return sessions, hosts


class HostsApp(App[None]):
    """The fleet screen alone, given its sessions and hosts."""

    def __init__(self, sessions: list[FleetSession], hosts: list[HostStatus]) -> None:
        super().__init__()
        self.fleet = FleetScreen(lambda: sessions, None, lambda: hosts)

    def on_mount(self) -> None:
        self.push_screen(self.fleet)


@pytest.fixture
def stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet_screen, "time", StoppedClock)


LINES = [
    "▪ this machine · 2 sessions · 15.4k tokens · $0.0512",
    "   Working (1)",
    "1  ses_…00000a001 docs-writer    working            1 min  15,400   Rewrite the…",
    "   Done (1)",
    "2  ses_…00000a002 linter         idle               5 min  0",
    "▪ build-2 · 2 sessions · 1 question waiting 0:41 · 11.2k tokens · $0.0286",
    "   Needs you (1)",
    "3  ses_…00000b001 deployer       asks               41 s   9,000    ? Deploy to…",
    "   Working (1)",
    "4  ses_…00000b002 tester         working            2 min  2,150    Run the nig…",
    "▪ build-3 · 1 session · 1 question waiting 1:35 · 5.7k tokens · $0.0085",
    "   Needs you (1)",
    "5  ses_…00000c001 migrator       asks               1 min  5,700    ? Which bra…",
    "▪ build-4 · 127.0.0.4:7401",
    "   unreachable: connection refused · retry in 0:08",
]


async def test_three_hosts_and_an_unreachable_one_at_80x24(murmur_home: Path,
                                                           stopped: None) -> None:
    sessions, hosts = three_hosts()
    app = HostsApp(sessions, hosts)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.fleet
        await wait_until(pilot, lambda: len(on_screen(screen)) == 15,
                         what=lambda: on_screen(screen))
        assert on_screen(screen) == LINES
        assert str(screen.totals.render()) == \
            "5 sessions · 2 need you, longest 1:35 · 2 working · 32.2k tokens · $0.0883"
        # the highlight starts on the question waiting longest, on the last host listed
        assert screen.rows.highlighted == sessions[4].session_id
        assert "migrator" in str(screen.detail.render())
        # the numbers count the sessions as they show, across the hosts
        await pilot.press("3")
        assert screen.rows.highlighted == sessions[2].session_id
        # a host's heading, highlighted, says the whole of it under the list
        screen.rows.select_key("host:build-2")
        await wait_until(pilot, lambda: str(screen.detail.render()).startswith(
            "build-2 · 127.0.0.2:7401 · ok\n"))
        assert str(screen.detail.render()).endswith(
            "tasks 2 (2 running) · tokens 10,100 in / 1,050 out · $0.0286")


def test_three_hosts_snapshot_at_80x24(snap_compare: Any, murmur_home: Path,
                                       stopped: None) -> None:
    sessions, hosts = three_hosts()

    async def drawn(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, HostsApp)
        await wait_until(pilot, lambda: on_screen(app.fleet) == LINES)
        await pilot.pause()

    assert snap_compare(HostsApp(sessions, hosts), terminal_size=(80, 24), run_before=drawn)
