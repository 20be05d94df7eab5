"""`roster.yaml` read as Murmur reads it (spec murmur-newest §7.1): the members, the entry,
the rules, `source:`; and every shape problem refused with `E-ROS-001` naming the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rosters import ROSTERS, write_roster
from tui.core.formation.roster import Member, ReachRule, Roster, RosterRefusal, read_roster

HEAD = "roster_version: 1\nmembers:\n  - name: lead\n    capsule: lead\n    version: 1.0.0\n"


def refusal(tmp_path: Path, text: str) -> str:
    found = read_roster(write_roster(tmp_path, text))
    assert isinstance(found, RosterRefusal), found
    assert found.code == "E-ROS-001"
    return found.short


def test_the_fixture_roster_reads_into_members_and_rules() -> None:
    roster = read_roster(ROSTERS / "ok" / "roster.yaml")
    assert roster == Roster(ROSTERS / "ok" / "roster.yaml", (
        Member("lead", 3, source="../members/lead", entry=True),
        Member("coder", 6, source="../members/coder"),
        Member("reviewer", 8, source="../members/reviewer")),
        (ReachRule("lead", ("coder",), 11, (12,)), ReachRule("coder", ("reviewer",), 13, (14,))))


def test_installed_members_carry_capsule_and_version_and_entry_with_no_value_is_absent(
        tmp_path: Path) -> None:
    roster = read_roster(write_roster(tmp_path, HEAD + "    entry:\n"
                                      "reachability: []\n"))
    assert isinstance(roster, Roster)
    assert roster.members == (Member("lead", 3, "lead", "1.0.0"),)
    assert (roster.rules, roster.reach_all) == ((), False)


def test_reachability_all_is_read_as_the_word() -> None:
    roster = read_roster(ROSTERS / "all" / "roster.yaml")
    assert isinstance(roster, Roster) and roster.reach_all and roster.rules == ()


@pytest.mark.parametrize(("text", "message"), [
    (HEAD + "    image: x\n",
     "roster.yaml:6: members[0].image: unknown key (a roster has only name, capsule, version, "
     "entry, source here)"),
    (HEAD + "labels: {}\n",
     "roster.yaml:6: labels: unknown key (a roster has only roster_version, members, "
     "reachability)"),
    (HEAD + "reachability:\n  - from: lead\n    to: [lead]\n    via: x\n",
     "roster.yaml:9: reachability[0].via: unknown key (a roster has only from, to here)"),
    ("roster_version: 2\nmembers: []\n", "roster.yaml:1: roster_version: expected 1, got 2"),
    ("members: []\n", "roster.yaml:1: roster_version: is required but missing "
     "(roster_version: 1)"),
    ("roster_version: 1\nmembers: []\n",
     "roster.yaml:2: members: expected a list of at least one member, got an empty list"),
    (HEAD.replace("name: lead", "name: Lead"),
     "roster.yaml:3: members[0].name: 'Lead' is not a member name (a lowercase letter, then up "
     "to 31 lowercase letters, digits or '-')"),
    (HEAD.replace("1.0.0", "latest"),
     "roster.yaml:5: members[0] (lead).version: 'latest' is not an exact version (latest, "
     "stable, edge and ranges are not allowed)"),
    (HEAD.replace("1.0.0", "^1.0"),
     "roster.yaml:5: members[0] (lead).version: '^1.0' is not an exact version (latest, stable, "
     "edge and ranges are not allowed)"),
    (HEAD.replace("1.0.0", "1.0"),
     "roster.yaml:5: members[0].version: expected text, got 1.0 (quote it)"),
    (HEAD.replace("    version: 1.0.0\n", ""),
     "roster.yaml:3: members[0] (lead).version: is required but missing (or give source: a "
     "capsule folder)"),
    (HEAD + "    source: ./lead\n",
     "roster.yaml:6: members[0] (lead): give capsule and version, or source, not both"),
    (HEAD + "    entry: yes please\n",
     "roster.yaml:6: members[0] (lead).entry: expected true or false, got 'yes please'"),
    (HEAD + "reachability: some\n",
     "roster.yaml:6: reachability: expected the word all or a list of rules (from, to), got "
     "'some'"),
    (HEAD + "reachability:\n  - from: lead\n    to: []\n",
     "roster.yaml:8: reachability[0].to: expected a list of at least one member's name, got an "
     "empty list"),
    (HEAD + "reachability:\n  - from: lead\n    to: coder\n",
     "roster.yaml:8: reachability[0].to: expected a list of at least one member's name, got "
     "'coder'"),
    (HEAD + "reachability:\n  - from: lead\n    to: [lead]\n",
     "roster.yaml:8: reachability[0].to: 'lead' may not call itself"),
])
def test_a_shape_problem_is_refused_with_e_ros_001_on_its_line(tmp_path: Path, text: str,
                                                                message: str) -> None:
    assert refusal(tmp_path, text) == f"{message} [E-ROS-001]"


def test_broken_yaml_is_refused_naming_its_line_never_a_traceback() -> None:
    found = read_roster(ROSTERS / "e-ros-001-broken-yaml" / "roster.yaml")
    assert isinstance(found, RosterRefusal) and (found.code, found.line) == ("E-ROS-001", 7)
    assert found.short.startswith("roster.yaml:7: members: not valid YAML: ")
    assert str(found).startswith(f"{ROSTERS / 'e-ros-001-broken-yaml' / 'roster.yaml'}:7: ")


def test_a_missing_or_empty_roster_is_refused(tmp_path: Path) -> None:
    missing = read_roster(tmp_path / "roster.yaml")
    assert isinstance(missing, RosterRefusal) and missing.code == "E-ROS-001"
    assert "no such file" in missing.text
    assert refusal(tmp_path, "") == ("roster.yaml:1: is empty (a roster has roster_version: 1 "
                                     "and members) [E-ROS-001]")
