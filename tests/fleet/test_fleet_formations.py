"""A formation on the fleet screen under Pilot, over three real served members (sessions with a
seat on real doors, their running records naming the formation): one row under Needs you
naming the member that asks, opened into its members in roster order with the asking member
marked, answered from the fleet, closed again — at 80×24."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import CapsuleFactory
from tests.fleet.test_fleet_screen import ASK, type_in
from tests.members import Member, members, seat
from tests.responses import text_response
from tests.served import SLEEP
from tests.waits import wait_until
from tests.wasm.conftest import FIXTURES
from tui.app.fleet.app import FleetApp
from tui.app.fleet.screen import FleetScreen

__all__ = ["members"]
FRM = "frm_019f01a940ce7761854e768ecbe3d399"
ROW = f"frm:{FRM}"


def roster(project: Path, home: Path) -> None:
    """The project's roster, and the formation's `formation.json` as the launcher writes it
    (spec murmur-newest §7.3): the fleet reads the roster's order from them."""
    project.mkdir(parents=True, exist_ok=True)
    (project / "roster.yaml").write_text(
        "roster_version: 1\nmembers:\n"
        "  - name: lead\n    source: ./lead\n    entry: true\n"
        "  - name: coder\n    source: ./coder\n"
        "  - name: reviewer\n    source: ./reviewer\n"
        "reachability:\n  - from: lead\n    to: [coder]\n  - from: coder\n    to: [reviewer]\n")
    folder = home / "formations" / FRM
    folder.mkdir(parents=True, mode=0o700)
    target = folder / "formation.json"
    target.write_text(json.dumps({"project_dir": str(project), "launcher_pid": os.getpid(),
                                  "launcher_start": "0"}))
    target.chmod(0o600)


def on_screen(screen: FleetScreen) -> list[str]:
    """The list's lines as drawn, trailing blanks dropped."""
    rows = screen.rows
    return [rows.render_line(y).text.rstrip() for y in range(rows.size.height)
            if rows.render_line(y).text.strip()]


async def test_a_formation_is_one_row_that_opens_into_its_members_and_the_asker_is_marked(
        murmur_home: Path, make_capsule: CapsuleFactory, members: list[Member],
        tmp_path: Path) -> None:
    project = tmp_path / "team"
    lead = make_capsule([text_response("ok")], extra=SLEEP, folder="team/lead", name="lead")
    coder = make_capsule([text_response("ok")], extra=SLEEP, folder="team/coder", name="coder")
    reviewer = make_capsule(ASK * 2, extra=SLEEP + "  input_timeout_secs: 120\n",
                            folder="team/reviewer", name="reviewer",
                            tools={"ask": FIXTURES / "ask_tool.wasm"})
    roster(project, murmur_home)
    # started in another order than the roster's: the members come in the roster's order
    asker = Member(reviewer, murmur_home, seat(FRM, "reviewer"))
    members.append(asker)
    members.append(Member(coder, murmur_home, seat(FRM, "coder", callees=("reviewer",))))
    members.append(Member(lead, murmur_home, seat(FRM, "lead", entry=True, callees=("coder",))))
    app = FleetApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.fleet
        await wait_until(pilot, lambda: len(app.sessions) == 3 and all(
            s.connection == "live" for s in app.sessions.values()))
        asker.send("review the change")
        await wait_until(pilot, lambda: "reviewer asks" in on_screen(screen)[1],
                         what=lambda: on_screen(screen))
        shown = on_screen(screen)
        assert shown[0] == "   Needs you (1)"
        # one row naming the member that asks; the question is cut at 80 columns
        assert shown[1].startswith("   ▸ frm_…be3d399 lead           reviewer asks      ")
        assert shown[1].endswith("3 members ·…")
        assert shown[2:] == ["   Working (0)", "   Done (0)"]
        assert screen.rows.highlighted == ROW  # the top of Needs you
        assert "◆ reviewer" in str(screen.detail.render())
        # a key that acts on one session asks for a member, and ends nothing
        await pilot.press("S")
        assert isinstance(app.screen, FleetScreen)
        # (the question's own note may come in after it: it is sent from another thread)
        await wait_until(pilot, lambda: "That row is a formation: open it (→) and choose one "
                         "of its members." in [n.message for n in app._notifications],
                         what=lambda: [n.message for n in app._notifications])
        # Enter opens it: the entry, then the others in roster order, the asker marked
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(on_screen(screen)) == 7)
        shown = on_screen(screen)
        assert shown[1].startswith("   ▾ frm_…be3d399")
        assert [line[3:17].rstrip() for line in shown[2:5]] == [
            "├ lead", "├ coder", "└ reviewer"]
        assert [line[:3] for line in shown[2:5]] == ["1  ", "2  ", "3  "]
        assert shown[4].startswith("3  └ reviewer     reviewer       ◆ blocks · asks    ")
        assert "◆" not in shown[2] + shown[3]
        # ← on a member closes the formation, → opens it again
        await pilot.press("down")
        assert screen.rows.highlighted == screen.numbered[0].session_id  # the lead
        await pilot.press("left")
        await wait_until(pilot, lambda: len(on_screen(screen)) == 4)
        assert screen.rows.highlighted == ROW
        await pilot.press("right")
        await wait_until(pilot, lambda: len(on_screen(screen)) == 7)
        # answered from the fleet: `a` on the formation's row answers the member that blocks
        assert screen.rows.highlighted == ROW
        await pilot.press("a")
        assert screen.input.display
        assert str(screen.hint.render()).startswith(f"reviewer ({asker.session_id}) asks:")
        await type_in(pilot, "main")
        await wait_until(pilot, lambda: app.sessions[asker.session_id].last_task_status == "ok")
        await wait_until(pilot, lambda: on_screen(screen)[0] == "   Needs you (0)",
                         what=lambda: on_screen(screen))
        shown = on_screen(screen)
        assert not any("◆" in line for line in shown)
        assert any(line.startswith("   ▾ frm_…be3d399 lead           idle") for line in shown)
        # a click on the formation's row closes it (and opens it again)
        await pilot.click("#fleet", offset=(5, shown.index(next(
            line for line in shown if line.startswith("   ▾")))))
        await wait_until(pilot, lambda: len(on_screen(screen)) == 4)
        assert on_screen(screen)[3].startswith("   ▸ frm_…be3d399")
