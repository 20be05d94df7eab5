"""The fleet as a tree, from sessions and the events they told (tui/app/fleet/tree.py and
tree_rows.py): a formation's members in order, its edges, the member that blocks it, its
group, and delegated children under their parent."""

from __future__ import annotations

import json
from pathlib import Path

from tui.app.fleet.model import FleetSession
from tui.app.fleet.tree import FormationTree, Node, build, grouped
from tui.app.fleet.tree_rows import clock, lines
from tui.core.events import vocabulary as ev
from tui.core.formation.roster_order import roster_order

FRM = "frm_019f01a940ce7761854e768ecbe3d399"
OTHER = "frm_019f01a940ce7761854e768ecbe3d400"


def member(name: str, *, entry: bool = False, started: str = "",
           formation: str = FRM) -> FleetSession:
    session = FleetSession(f"ses_{name}", "u", capsule=f"team-{name}", formation_id=formation,
                           member=name, entry=entry, started_at=started)
    session.connection = "live"
    return session


def working(session: FleetSession, at: float = 1.0, task: str = "work") -> None:
    session.apply(ev.TaskStarted(task_id=f"t_{session.member}", context_id="c", text=task), at)


def calls(caller: FleetSession, callee: str, ts_ms: int, call_id: str = "") -> str:
    call_id = call_id or f"mcl_{caller.member}_{callee}"
    caller.apply(ev.MemberCallStarted(task_id=f"t_{caller.member}", call_id=call_id,
                                      member=callee, task="do it", callee_task_id="tsk",
                                      turn=1, ts_ms=ts_ms))
    return call_id


def answered(caller: FleetSession, callee: str, call_id: str) -> None:
    caller.apply(ev.MemberCallEnded(task_id=f"t_{caller.member}", call_id=call_id,
                                    member=callee, status="completed", duration_ms=5,
                                    answer="done"))


def asks(session: FleetSession, at: float, prompt: str = "Which branch?") -> None:
    session.apply(ev.InputRequested(task_id=f"t_{session.member}", request_id=f"r_{at}",
                                    prompt=prompt, tool_name="ask"), at)


def the_formation(sessions: list[FleetSession], roster: tuple[str, ...] | None = None
                  ) -> FormationTree:
    tops = build(sessions, (lambda _: roster) if roster is not None else None)
    formations = [top for top in tops if isinstance(top, FormationTree)]
    assert len(formations) == 1
    return formations[0]


def names(formation: FormationTree) -> list[str]:
    return [node.session.member for node in formation.members]


def test_members_come_entry_first_then_by_first_call_then_in_roster_order() -> None:
    lead, coder, reviewer, tester, docs = (member("lead", entry=True), member("coder"),
                                           member("reviewer"), member("tester"), member("docs"))
    for session in (lead, coder, reviewer):
        working(session)
    calls(lead, "reviewer", 1_000)  # reviewer called first, coder later, by someone else
    calls(reviewer, "coder", 2_000)
    calls(lead, "coder", 3_000, "mcl_again")
    formation = the_formation([docs, tester, coder, reviewer, lead],
                              roster=("lead", "coder", "reviewer", "docs", "tester"))
    assert names(formation) == ["lead", "reviewer", "coder", "docs", "tester"]
    # no roster known: members never called come in the order they started
    docs.started_at, tester.started_at = "2026-01-01T00:00:02Z", "2026-01-01T00:00:01Z"
    assert names(the_formation([docs, tester, coder, reviewer, lead])) == [
        "lead", "reviewer", "coder", "tester", "docs"]


def test_an_outstanding_call_is_an_edge_until_it_ends() -> None:
    lead, coder = member("lead", entry=True), member("coder")
    working(lead)
    call = calls(lead, "coder", 10_000)
    formation = the_formation([lead, coder])
    assert [(e.callee, e.since) for e in formation.edges["ses_lead"]] == [("coder", 10.0)]
    shown = lines(grouped([formation]), {formation.key}, now=5.0, wall=22.5)
    row = next(line for line in shown if line.key == "ses_lead")
    assert (row.cells[1], row.cells[3], row.cells[6]) == ("├ lead", "⇢ coder · 0:12", "work")
    # waiting on two: the longest wait in the status, every edge before the task
    calls(lead, "tester", 20_000)
    formation = the_formation([lead, coder])
    row = next(line for line in lines(grouped([formation]), {formation.key}, now=5.0,
                                      wall=22.5) if line.key == "ses_lead")
    assert row.cells[3] == "⇢ coder +1 · 0:12"
    assert row.cells[6] == "⇢ coder · 0:12  ⇢ tester · 0:02  work"
    lead.apply(ev.MemberCallEnded(task_id="t_lead", call_id="mcl_lead_tester", member="tester",
                                  status="unreachable", duration_ms=1))
    answered(lead, "coder", call)
    assert the_formation([lead, coder]).edges == {}
    assert (clock(5), clock(754), clock(3723)) == ("0:05", "12:34", "1:02:03")


def test_the_deepest_member_asking_blocks_and_puts_the_formation_under_needs_you() -> None:
    lead, coder, reviewer = member("lead", entry=True), member("coder"), member("reviewer")
    for session in (lead, coder, reviewer):
        working(session)
    calls(lead, "coder", 1_000)
    calls(coder, "reviewer", 2_000)
    asks(lead, 1.0, "Lead's question")  # asked first, but not as deep
    asks(reviewer, 5.0, "Which branch?")
    formation = the_formation([lead, coder, reviewer])
    assert formation.blocker is reviewer
    assert formation.group == "needs" and formation.since == 5.0
    assert formation.status == "reviewer asks +1"
    shown = lines(grouped([formation]), set(), now=6.0, wall=10.0)
    assert [line.key for line in shown] == ["group:needs", formation.key, "group:working",
                                            "group:done"]
    head = shown[1].cells
    assert head[1] == "▸ frm_…be3d399" and head[2] == "team-lead"
    assert head[3] == "reviewer asks +1" and head[6] == "3 members · ? Which branch?"
    opened = lines(grouped([formation]), {formation.key}, now=6.0, wall=10.0)
    rows = {line.key: line.cells for line in opened}
    assert opened[1].cells[1] == "▾ frm_…be3d399"
    assert [line.cells[1] for line in opened[2:5]] == ["├ lead", "├ coder", "└ reviewer"]
    assert (rows["ses_reviewer"][3], rows["ses_reviewer"][6]) == (
        "◆ blocks · asks", "? Which branch?")
    assert rows["ses_lead"][3] == "⇢ coder · 0:09" and rows["ses_coder"][3] == "⇢ reviewer · 0:08"


def test_with_no_question_the_member_all_others_wait_on_blocks() -> None:
    lead, coder, reviewer = member("lead", entry=True), member("coder"), member("reviewer")
    for session in (lead, coder, reviewer):
        working(session)
    calls(lead, "coder", 1_000)
    calls(coder, "reviewer", 2_000)
    formation = the_formation([lead, coder, reviewer])
    assert formation.blocker is reviewer and formation.group == "working"
    assert formation.status == "waits on reviewer"
    # two branches: no single member is waited on by all, so none is marked
    tester = member("tester")
    working(tester)
    calls(lead, "tester", 3_000)
    branches = the_formation([lead, coder, reviewer, tester])
    assert branches.blocker is None and branches.status == "4 working"
    # nobody waits: nothing blocks
    assert the_formation([member("a", entry=True), member("b")]).blocker is None


def test_a_delegated_child_hangs_under_its_parent_and_its_question_lifts_the_parent() -> None:
    parent = FleetSession("ses_parent", "u", capsule="boss")
    child = FleetSession("ses_child0000000000001", "u", capsule="helper",
                         spawned_by="ses_parent")
    grandchild = FleetSession("ses_grand", "u", capsule="small", spawned_by=child.session_id)
    orphan = FleetSession("ses_orphan", "u", capsule="alone", spawned_by="ses_not_listed")
    for session in (parent, child, grandchild, orphan):
        session.connection = "live"
    working(child)
    child.apply(ev.InputRequested(task_id="t_", request_id="r", prompt="ok?", tool_name="ask"),
                2.0)
    tops = build([grandchild, child, parent, orphan])
    assert sorted(top.key for top in tops) == ["ses_orphan", "ses_parent"]
    groups = dict(grouped(tops))
    assert [top.key for top in groups["needs"]] == ["ses_parent"]
    shown = [line.cells[1] for line in lines(grouped(tops), set(), now=3.0, wall=0.0)]
    assert shown[1:4] == ["ses_parent", "↳ ses_…0000001",
                          "  ↳ ses_grand"]
    # a member's child hangs under the member, inside the opened formation
    lead = member("lead", entry=True)
    helper = FleetSession("ses_help", "u", capsule="helper", spawned_by="ses_lead")
    helper.connection = "live"
    formation = the_formation([lead, helper])
    assert [node.key for node in formation.members] == ["ses_lead"]
    assert [child.key for child in formation.members[0].children] == ["ses_help"]
    opened = lines(grouped([formation]), {formation.key}, now=1.0, wall=0.0)
    assert [line.cells[1] for line in opened if line.session is not None] == [
        "└ lead", "  ↳ ses_help"]


def test_formations_are_apart_and_a_loop_of_spawned_by_is_no_tree() -> None:
    one = [member("lead", entry=True), member("coder")]
    two = [member("lead2", entry=True, formation=OTHER)]
    tops = build([*one, *two])
    assert sorted(top.key for top in tops) == [f"frm:{FRM}", f"frm:{OTHER}"]
    a = FleetSession("ses_a", "u", spawned_by="ses_b")
    b = FleetSession("ses_b", "u", spawned_by="ses_a")
    placed = build([a, b])
    # neither is under the other: both on their own rows, each shown once
    assert all(isinstance(top, Node) and not top.children for top in placed)
    assert sorted(top.key for top in placed) == ["ses_a", "ses_b"]


def test_the_roster_order_comes_from_the_launchers_formation_json(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "team"
    project.mkdir()
    folder = home / "formations" / FRM
    folder.mkdir(parents=True)
    state = folder / "formation.json"
    assert roster_order(home, FRM) is None  # not written yet
    state.write_text(json.dumps({"project_dir": str(project)}))
    state.chmod(0o600)
    assert roster_order(home, FRM) is None  # no roster there
    (project / "roster.yaml").write_text(
        "roster_version: 1\nmembers:\n  - name: lead\n    source: ./lead\n    entry: true\n"
        "  - name: zed\n    source: ./zed\n  - name: coder\n    source: ./coder\n")
    assert roster_order(home, FRM) == ("lead", "zed", "coder")
    assert roster_order(home, "frm_../../etc") is None
    for bad in ("[]", "{}", '{"project_dir": 3}', "not json"):
        state.write_text(bad)
        assert roster_order(home, FRM) is None
    state.chmod(0o644)  # readable by others: not the launcher's file
    state.write_text(json.dumps({"project_dir": str(project)}))
    assert roster_order(home, FRM) is None


def test_a_caller_that_serves_no_door_is_known_by_the_task_its_callee_runs() -> None:
    """The entry of a headless `launch --roster` has no door, so none of its events reach the
    fleet: the task coder runs for it names it, which gives lead's edge and the call order."""
    lead, coder, reviewer = member("lead", entry=True), member("coder"), member("reviewer")
    lead.connection = "connecting"  # nothing read of it
    for session, caller, ts_ms in ((coder, "lead", 2_000_000), (reviewer, "coder", 2_001_000)):
        session.apply(ev.TaskStarted(task_id=f"t_{session.member}", context_id="c",
                                     text="do it", caller_member=caller, ts_ms=ts_ms), 1.0)
    calls(coder, "reviewer", 2_001_000)
    formation = the_formation([reviewer, coder, lead], roster=("lead", "reviewer", "coder"))
    assert names(formation) == ["lead", "coder", "reviewer"]  # coder was called first
    assert [(e.callee, e.since) for e in formation.edges["ses_lead"]] == [("coder", 2_000.0)]
    # coder's own call is its edge, said once (not again from reviewer's side)
    assert [(e.callee, e.since) for e in formation.edges["ses_coder"]] == [
        ("reviewer", 2_001.0)]
    assert formation.blocker is reviewer  # where every wait ends
    # the callee's task ends: the caller's edge goes with it
    coder.apply(ev.TaskEnded(task_id="t_coder", exit_status="ok", result="done",
                             duration_ms=1, turns=1, input_tokens=0, output_tokens=0,
                             tool_calls=0, shell_calls=0), 2.0)
    after = the_formation([reviewer, coder, lead], roster=("lead", "reviewer", "coder"))
    assert "ses_lead" not in after.edges
    assert names(after) == ["lead", "coder", "reviewer"]  # the call order outlives the call
