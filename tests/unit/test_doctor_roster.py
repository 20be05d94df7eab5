"""`murmur-tui doctor` beside a `roster.yaml`: the `Roster` block as `mur doctor` prints it
(spec murmur-newest §7.2), run as a user runs it (a real subprocess), exact text and exit code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.capsules import write_capsule
from tests.conftest import run_cli
from tests.rosters import MEMBERS, ROSTERS, install_capsule, write_roster


def doctor(*args: str, home: Path, cwd: Path | None = None) -> tuple[int, str, str]:
    done = run_cli("doctor", *args, env={"MURMUR_HOME": str(home)}, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def test_an_admitted_roster_prints_its_members_and_who_calls_whom(tmp_path: Path) -> None:
    code, out, err = doctor(str(ROSTERS / "ok"), home=tmp_path)
    assert (code, err) == (0, "")
    assert out == (
        "Roster\n"
        f"  file: {ROSTERS / 'ok' / 'roster.yaml'}\n"
        "  lead       team-lead@0.1.0 (source ../members/lead)           entry   "
        "refuses peers   authenticated door\n"
        "  coder      team-coder@0.1.0 (source ../members/coder)                 "
        "serves peers    authenticated door\n"
        "  reviewer   team-reviewer@0.1.0 (source ../members/reviewer)           "
        "serves peers    authenticated door\n"
        "  reachability: lead → coder, coder → reviewer\n")


def test_installed_members_and_all_with_no_pair_in_the_current_folder(
        tmp_path: Path) -> None:
    home, team = tmp_path / "home", tmp_path / "team"
    install_capsule(home / "artifacts", "team-lead", "0.1.0", MEMBERS / "loner")
    install_capsule(home / "artifacts", "team-coder", "1.2.0", MEMBERS / "public-coder")
    write_roster(team, "roster_version: 1\nmembers:\n  - name: lead\n    capsule: team-lead\n"
                 "    version: 0.1.0\n    entry: true\n  - name: coder\n"
                 "    capsule: team-coder\n    version: 1.2.0\nreachability: all\n")
    code, out, _ = doctor(home=home, cwd=team)
    assert code == 0
    assert out == ("Roster\n"
                   f"  file: {team / 'roster.yaml'}\n"
                   "  lead    team-lead@0.1.0    entry   refuses peers   authenticated door\n"
                   "  coder   team-coder@1.2.0           serves peers    public door\n"
                   "  reachability: (all): none\n")


def test_a_refused_roster_prints_the_first_failure_and_exits_1(tmp_path: Path) -> None:
    code, out, err = doctor(str(ROSTERS / "e-ros-008-entry-called"), home=tmp_path)
    assert (code, err) == (1, "")
    assert out == ("Roster\n"
                   f"  file: {ROSTERS / 'e-ros-008-entry-called' / 'roster.yaml'}\n"
                   "  ✗  roster.yaml:10: reachability[0].to: 'lead' is the entry member, which "
                   "no member may call [E-ROS-008]\n")


def test_broken_yaml_names_its_line_and_no_traceback(tmp_path: Path) -> None:
    code, out, err = doctor(str(ROSTERS / "e-ros-001-broken-yaml" / "roster.yaml"),
                            home=tmp_path)
    assert (code, err) == (1, "")
    assert "  ✗  roster.yaml:7: members: not valid YAML: " in out
    assert out.rstrip().endswith("[E-ROS-001]") and "Traceback" not in out


def test_a_folder_with_a_capsule_and_a_roster_shows_both(tmp_path: Path) -> None:
    team = write_capsule(tmp_path / "team", [])
    shutil.copy(ROSTERS / "e-ros-005-callee-refuses-peers" / "roster.yaml", team)
    (team / "roster.yaml").write_text((team / "roster.yaml").read_text().replace(
        "../members", str(MEMBERS)))
    code, out, _ = doctor(str(team), home=tmp_path / "home")
    assert code == 1
    capsule, roster = out.split("\n\nRoster\n")
    assert capsule.startswith(f"test-capsule 1.0.0 ({team / 'murmur.yaml'})")
    assert roster.endswith("does not set exports.peer_tasks.accept: true) [E-ROS-005]\n")


def test_json_carries_the_roster(tmp_path: Path) -> None:
    code, out, _ = doctor(str(ROSTERS / "all"), "--json", home=tmp_path)
    report = json.loads(out)
    assert code == 0 and report["ok"] is True
    assert report["roster"]["edges"] == [["coder", "reviewer"], ["reviewer", "coder"]]
    assert [m["name"] for m in report["roster"]["members"]] == ["lead", "coder", "reviewer"]
    code, out, _ = doctor(str(ROSTERS / "e-ros-006-public-door"), "--json", home=tmp_path)
    refusal = json.loads(out)["roster"]["refusal"]
    assert code == 1 and (refusal["code"], refusal["line"], refusal["member"]) == (
        "E-ROS-006", 6, "coder")
