"""The fleet's list in a section per host (tui/app/fleet/host_rows.py): each host's heading with
its totals, its own groups, an unreachable host's one row, the numbers across the sections, and
the highlight's first row — the question waiting longest on any host."""

from __future__ import annotations

from tui.app.fleet.host_rows import draw, many_hosts, sections_of, unreachable
from tui.app.fleet.model import FleetSession
from tui.app.fleet.tree_rows import Line
from tui.core.events import vocabulary as ev
from tui.core.hosts.status import HostStatus

NOW = 141.0


def row(session_id: str, host: str, *, task: str = "", asks_at: float | None = None,
        tokens: tuple[int, int] = (0, 0)) -> FleetSession:
    session = FleetSession(session_id, "u", host=host, capsule=f"cap-{session_id[-2:]}")
    session.connection = "live"
    session.since = 0.0
    if task:
        session.apply(ev.TaskStarted(task_id=f"t_{session_id}", context_id="c", text=task), 1.0)
    if tokens != (0, 0):
        session.apply(ev.TurnCompleted(task_id=f"t_{session_id}", turn=0,
                                       input_tokens=tokens[0], output_tokens=tokens[1],
                                       decision="end_turn", stop_reason="end_turn",
                                       tool_name=None, model=""), 1.0)
    if asks_at is not None:
        session.apply(ev.InputRequested(task_id=f"t_{session_id}", request_id="r",
                                        prompt="Which branch?", tool_name="ask"), asks_at)
    return session


def shown(lines: list[Line]) -> list[tuple[str, list[str]]]:
    return [(line.key, line.cells) for line in lines]


def fleet() -> tuple[list[FleetSession], list[HostStatus]]:
    sessions = [
        row("ses_local01", "", task="build the docs", tokens=(1200, 300)),
        row("ses_b2asks", "build-2", task="deploy", asks_at=100.0, tokens=(500, 20)),
        row("ses_b2idle", "build-2"),
        row("ses_b3asks", "build-3", task="migrate", asks_at=50.0),
    ]
    hosts = [HostStatus(""), HostStatus("build-2", "127.0.0.2:7401", "ok"),
             HostStatus("build-3", "ssh", "ok"),
             HostStatus("build-4", "127.0.0.4:7401", "unreachable", "connection refused",
                        retry_at=NOW + 8.4, failures=2),
             HostStatus("build-5", "127.0.0.5:7401", "connecting")]
    return sessions, hosts


def test_a_section_per_host_in_the_listed_order_each_with_its_own_groups() -> None:
    sessions, hosts = fleet()
    drawn = draw(sessions, hosts, None, set(), NOW, 1000.0)
    assert shown(drawn.lines) == [
        ("host:", ["▪ this machine · 1 session · tasks 1 (1 running) · "
                   "tokens 1,200 in / 300 out"]),
        ("group:working@", ["", "Working (1)", "", "", "", "", ""]),
        ("ses_local01", ["1", "ses_local01", "cap-01", "working", "2 min", "1,500",
                         "build the docs"]),
        ("host:build-2", ["▪ build-2 · 2 sessions · 1 question waiting 0:41 · "
                          "tasks 1 (1 running) · tokens 500 in / 20 out"]),
        ("group:needs@build-2", ["", "Needs you (1)", "", "", "", "", ""]),
        ("ses_b2asks", ["2", "ses_b2asks", "cap-ks", "asks", "41 s", "520",
                        "? Which branch?"]),
        ("group:done@build-2", ["", "Done (1)", "", "", "", "", ""]),
        ("ses_b2idle", ["3", "ses_b2idle", "cap-le", "idle", "2 min", "0", ""]),
        ("host:build-3", ["▪ build-3 · 1 session · 1 question waiting 1:31 · "
                          "tasks 1 (1 running) · tokens 0 in / 0 out"]),
        ("group:needs@build-3", ["", "Needs you (1)", "", "", "", "", ""]),
        ("ses_b3asks", ["4", "ses_b3asks", "cap-ks", "asks", "1 min", "0",
                        "? Which branch?"]),
        ("host:build-4", ["▪ build-4 · 127.0.0.4:7401"]),
        ("hostwhy:build-4", ["   unreachable: connection refused · retry in 0:08"]),
        ("host:build-5", ["▪ build-5 · 0 sessions · tasks 0 (0 running) · "
                          "tokens 0 in / 0 out"]),
        ("hostwhy:build-5", ["   connecting…"]),
    ]
    assert [line.span for line in drawn.lines if line.key.startswith("host")] == [True] * 7
    # the highlight starts on the question waiting longest, whatever its host's place
    assert drawn.first == "ses_b3asks"
    assert [top.key for group, tops in drawn.groups if group == "needs" for top in tops] == \
        ["ses_b3asks", "ses_b2asks"]
    assert drawn.lines[0].detail == "this machine · connecting\n" + drawn.lines[0].cells[0]
    assert drawn.lines[3].detail.startswith("build-2 · 127.0.0.2:7401 · ok\n▪ build-2 ·")


def test_the_headings_are_fitted_to_the_width() -> None:
    sessions, hosts = fleet()
    drawn = draw(sessions, hosts, None, set(), NOW, 1000.0, width=60)
    headings = [line.cells[0] for line in drawn.lines if line.key.startswith("host:")]
    # every heading says the same parts: the widest (build-2's) leaves out its tasks and
    # tokens to fit, so the others do too
    assert headings == [
        "▪ this machine · 1 session",
        "▪ build-2 · 2 sessions · 1 question waiting 0:41",
        "▪ build-3 · 1 session · 1 question waiting 1:31",
        "▪ build-4 · 127.0.0.4:7401",
        "▪ build-5 · 0 sessions",
    ]
    wide = [line.cells[0] for line in draw(sessions, hosts, None, set(), NOW, 1000.0,
                                           width=70).lines if line.key.startswith("host:")]
    assert wide[:3] == ["▪ this machine · 1 session · 1 task · 1.5k tokens",
                        "▪ build-2 · 2 sessions · 1 question waiting 0:41 · 1 task · 520 tokens",
                        "▪ build-3 · 1 session · 1 question waiting 1:31 · 1 task · 0 tokens"]
    assert all(len(text) <= 60 for text in headings)
    # the whole say is under the list when the heading is highlighted
    assert drawn.lines[3].detail.endswith("tokens 500 in / 20 out")


def test_an_unreachable_hosts_sessions_are_not_listed_nor_counted() -> None:
    sessions, hosts = fleet()
    stale = row("ses_b4old", "build-4", task="old", asks_at=10.0)
    drawn = draw([*sessions, stale], hosts, None, set(), NOW, 1000.0)
    assert "ses_b4old" not in {line.key for line in drawn.lines}
    assert stale not in drawn.sessions and len(drawn.sessions) == 4
    assert drawn.first == "ses_b3asks"


def test_one_machine_alone_is_the_one_host_list() -> None:
    local = [row("ses_local01", "", task="build the docs"), row("ses_local02", "", asks_at=9.0)]
    drawn = draw(local, [HostStatus("")], None, set(), NOW, 1000.0)
    assert not many_hosts(local, [HostStatus("")])
    assert [line.key for line in drawn.lines] == [
        "group:needs", "ses_local02", "group:working", "ses_local01", "group:done"]
    assert drawn.first == "ses_local02"
    assert draw(local, [], None, set(), NOW, 1000.0).lines == drawn.lines  # hosts not told yet


def test_a_session_on_a_host_not_listed_gets_a_section_of_its_own() -> None:
    local, other = row("ses_local01", ""), row("ses_far0001", "far")
    assert many_hosts([local, other], [])
    assert [h.name for h in sections_of([other, local], [])] == ["", "far"]
    drawn = draw([local, other], [], None, set(), NOW, 1000.0)
    assert [line.key for line in drawn.lines] == [
        "host:", "group:done@", "ses_local01", "host:far", "group:done@far", "ses_far0001"]


def test_an_unreachable_host_says_why_and_when_it_is_tried_again() -> None:
    host = HostStatus("b", state="unreachable", why="connection refused\nmore", retry_at=100.0)
    assert unreachable(host, 30.0) == "unreachable: connection refused · retry in 1:10"
    assert unreachable(host, 99.5) == "unreachable: connection refused · retrying…"
    assert unreachable(HostStatus("b", state="unreachable"), 0.0) == "unreachable"
    hostile = HostStatus("b", state="unreachable", why="\x1b]0;owned\x07refused")
    assert "\x1b" not in unreachable(hostile, 0.0)


def test_a_formation_stays_a_tree_inside_its_host() -> None:
    frm = "frm_019f01a940ce7761854e768ecbe3d399"
    lead = FleetSession("ses_lead0001", "u", host="build-2", capsule="lead", formation_id=frm,
                        member="lead", entry=True)
    coder = FleetSession("ses_coder001", "u", host="build-2", capsule="coder",
                         formation_id=frm, member="coder")
    child = FleetSession("ses_child001", "u", host="build-2", capsule="helper",
                         spawned_by="ses_coder001")
    for session in (lead, coder, child):
        session.connection = "live"
    local = row("ses_local01", "")
    hosts = [HostStatus(""), HostStatus("build-2", state="ok")]
    drawn = draw([local, lead, coder, child], hosts, None, {f"frm:{frm}"}, NOW, 1000.0)
    assert [(line.key, line.cells[1] if len(line.cells) > 1 else "") for line in drawn.lines] \
        == [("host:", ""), ("group:done@", "Done (1)"), ("ses_local01", "ses_local01"),
            ("host:build-2", ""), ("group:done@build-2", "Done (1)"),
            (f"frm:{frm}", "▾ frm_…be3d399"), ("ses_lead0001", "├ lead"),
            ("ses_coder001", "└ coder"), ("ses_child001", "  ↳ ses_…ld001")]
    assert [line.cells[0] for line in drawn.lines if line.session is not None] == ["1", "2",
                                                                                   "3", "4"]
