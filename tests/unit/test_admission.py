"""Roster admission as `mur run --roster` admits (spec murmur-newest §7.2): Murmur's order
(the first failure wins, members in roster order), its codes, the members resolved from the
stores and the lock as a session resolves artifacts, `reachability: all` expanded, and
murmur-tui's `source:` members."""

from __future__ import annotations

import hashlib
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.rosters import MEMBERS, ROSTERS, install_capsule, write_roster
from tui.core.formation.admission import Admitted, admit
from tui.core.formation.roster import RosterRefusal


def refused(path: Path, home: Path) -> RosterRefusal:
    found = admit(path, home)
    assert isinstance(found, RosterRefusal), found
    return found


@pytest.mark.parametrize(("case", "code", "line", "member"), [
    ("e-ros-001-unknown-key", "E-ROS-001", 8, None),
    ("e-ros-001-broken-yaml", "E-ROS-001", 7, None),
    ("e-ros-002-no-entry", "E-ROS-002", 3, None),
    ("e-ros-002-two-entries", "E-ROS-002", 6, "coder"),
    ("e-ros-003-duplicate-name", "E-ROS-003", 8, "coder"),
    ("e-ros-004-unknown-member", "E-ROS-004", 10, None),
    ("e-ros-005-callee-refuses-peers", "E-ROS-005", 6, "loner"),
    ("e-ros-006-public-door", "E-ROS-006", 6, "coder"),
    ("e-ros-007-not-installed", "E-ROS-007", 6, "coder"),
    ("e-ros-008-entry-called", "E-ROS-008", 10, "lead"),
])
def test_each_fixture_roster_is_refused_with_murmurs_code(tmp_path: Path, case: str, code: str,
                                                          line: int, member: str | None) -> None:
    found = refused(ROSTERS / case / "roster.yaml", tmp_path)
    assert (found.code, found.line, found.member) == (code, line, member)


def test_the_messages_name_the_member_and_what_is_wrong(tmp_path: Path) -> None:
    def short(case: str) -> str:
        return refused(ROSTERS / case / "roster.yaml", tmp_path).short

    assert short("e-ros-005-callee-refuses-peers") == (
        "roster.yaml:6: member 'loner' is called by 'lead' but does not serve peers "
        "(../members/loner/murmur.yaml does not set exports.peer_tasks.accept: true) "
        "[E-ROS-005]")
    assert short("e-ros-006-public-door") == (
        "roster.yaml:6: member 'coder' has a public door, and a formation with calls needs every "
        "member's door to authenticate (../members/public-coder/murmur.yaml does not declare "
        "network.authentication) [E-ROS-006]")
    assert short("e-ros-008-entry-called") == (
        "roster.yaml:10: reachability[0].to: 'lead' is the entry member, which no member may "
        "call [E-ROS-008]")
    assert short("e-ros-004-unknown-member") == (
        "roster.yaml:10: reachability[0].to: 'tester' is not a member (members: lead, coder) "
        "[E-ROS-004]")
    folder = ROSTERS / "e-ros-007-not-installed"
    assert short("e-ros-007-not-installed") == (
        f"roster.yaml:6: member 'coder': capsule ghost@1.0.0 is not installed (looked in: "
        f"{folder}/.murmur/artifacts/ghost/1.0.0, {tmp_path}/artifacts/ghost/1.0.0); install "
        "it with `mur install ghost@1.0.0` [E-ROS-007]")


def test_with_two_faults_the_first_in_murmurs_order_wins(tmp_path: Path) -> None:
    # two entries (E-ROS-002) and a name used twice (E-ROS-003): names are checked first
    found = refused(ROSTERS / "two-faults" / "roster.yaml", tmp_path)
    assert found.short == ("roster.yaml:9: member name 'coder' is used twice (lines 6 and 9); "
                           "names are unique [E-ROS-003]")


def test_members_are_checked_in_roster_order(tmp_path: Path) -> None:
    # both callees are at fault; the first in the roster is the one named
    path = write_roster(tmp_path / "team", f"""roster_version: 1
members:
  - name: lead
    source: {MEMBERS / 'lead'}
    entry: true
  - name: quiet
    source: {MEMBERS / 'loner'}
  - name: open
    source: {MEMBERS / 'public-coder'}
  - name: ghost
    capsule: ghost
    version: 1.0.0
reachability:
  - from: lead
    to: [open, quiet]
""")
    assert refused(path, tmp_path).code == "E-ROS-007"  # step 6 before steps 7 and 8
    path.write_text(path.read_text().replace("  - name: ghost\n    capsule: ghost\n"
                                             "    version: 1.0.0\n", ""))
    found = refused(path, tmp_path)
    assert (found.code, found.member) == ("E-ROS-005", "quiet")


def test_source_members_are_admitted_with_their_manifests_facts(tmp_path: Path) -> None:
    admitted = admit(ROSTERS / "ok" / "roster.yaml", tmp_path)
    assert isinstance(admitted, Admitted)
    assert [(m.name, m.label, m.entry, m.serves_peers, m.authenticated, m.where)
            for m in admitted.members] == [
        ("lead", "team-lead@0.1.0 (source ../members/lead)", True, False, True, "source"),
        ("coder", "team-coder@0.1.0 (source ../members/coder)", False, True, True, "source"),
        ("reviewer", "team-reviewer@0.1.0 (source ../members/reviewer)", False, True, True,
         "source")]
    assert admitted.edges == (("lead", "coder"), ("coder", "reviewer"))
    assert admitted.entry.name == "lead" and admitted.callees("coder") == ("reviewer",)
    assert admitted.members[1].folder == (MEMBERS / "coder").resolve()


def test_all_is_every_pair_of_members_serving_peers_never_into_the_entry(
        tmp_path: Path) -> None:
    admitted = admit(ROSTERS / "all" / "roster.yaml", tmp_path)
    assert isinstance(admitted, Admitted)
    # the entry refuses peers, so it calls no one either: both ends must serve peers
    assert admitted.edges == (("coder", "reviewer"), ("reviewer", "coder"))
    entry_serves = write_roster(tmp_path / "team", f"""roster_version: 1
members:
  - name: lead
    source: {MEMBERS / 'coder'}
    entry: true
  - name: coder
    source: {MEMBERS / 'coder'}
  - name: quiet
    source: {MEMBERS / 'loner'}
reachability: all
""")
    admitted = admit(entry_serves, tmp_path)
    assert isinstance(admitted, Admitted) and admitted.edges == (("lead", "coder"),)


def test_no_edges_means_no_door_needs_to_authenticate(tmp_path: Path) -> None:
    path = write_roster(tmp_path / "team", f"""roster_version: 1
members:
  - name: lead
    source: {MEMBERS / 'public-coder'}
    entry: true
  - name: helper
    source: {MEMBERS / 'loner'}
""")
    admitted = admit(path, tmp_path)
    assert isinstance(admitted, Admitted) and admitted.edges == ()


def test_a_source_folder_without_a_manifest_is_not_installed(tmp_path: Path) -> None:
    path = write_roster(tmp_path / "team", "roster_version: 1\nmembers:\n  - name: lead\n"
                        "    source: ./nowhere\n    entry: true\n")
    found = refused(path, tmp_path)
    assert found.code == "E-ROS-007" and found.member == "lead"
    assert found.text == (f"member 'lead': source ./nowhere is not a capsule folder (no "
                          f"murmur.yaml in {tmp_path / 'team' / 'nowhere'})")


# -- members installed in a store ----------------------------------------------------------
INSTALLED = """roster_version: 1
members:
  - name: lead
    capsule: team-lead
    version: 0.1.0
    entry: true
  - name: coder
    capsule: team-coder
    version: 0.1.0
reachability:
  - from: lead
    to: [coder]
"""


def test_installed_members_resolve_project_store_first_then_global(tmp_path: Path) -> None:
    home, team = tmp_path / "home", tmp_path / "team"
    install_capsule(home / "artifacts", "team-lead", "0.1.0", MEMBERS / "lead")
    archive = install_capsule(team / ".murmur" / "artifacts", "team-coder", "0.1.0",
                              MEMBERS / "coder")
    install_capsule(home / "artifacts", "team-coder", "0.1.0", MEMBERS / "reviewer")
    admitted = admit(write_roster(team, INSTALLED), home)
    assert isinstance(admitted, Admitted)
    lead, coder = admitted.members
    assert (lead.label, lead.where, coder.label, coder.where) == (
        "team-lead@0.1.0", "global", "team-coder@0.1.0", "project")
    assert coder.archive == archive
    assert coder.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert coder.capsule.name == "team-coder" and coder.serves_peers  # the project's copy
    assert (coder.folder / "script.json").is_file()  # unpacked beside its manifest


def lock_text(entries: dict[str, tuple[str, str]]) -> str:
    lines = ["lock_version: 2", "artifacts:"]
    for name, (version, digest) in entries.items():
        lines += [f"  - name: {name}", f"    resolved_version: {version}", "    sha256:",
                  f"      any: {digest}", "    origin: operator"]
    return "\n".join(lines) + "\n"


def test_a_lock_that_pins_a_member_differently_is_e_reg_005(tmp_path: Path) -> None:
    home, team = tmp_path / "home", tmp_path / "team"
    lead = install_capsule(home / "artifacts", "team-lead", "0.1.0", MEMBERS / "lead")
    install_capsule(home / "artifacts", "team-coder", "0.1.0", MEMBERS / "coder")
    path = write_roster(team, INSTALLED)
    lock = team / "murmur.lock"
    good = hashlib.sha256(lead.read_bytes()).hexdigest()
    lock.write_text(lock_text({"team-lead": ("0.1.0", good)}))  # coder is not pinned: fine
    assert isinstance(admit(path, home), Admitted)
    lock.write_text(lock_text({"team-lead": ("0.1.0", good), "team-coder": ("0.1.0", "ab" * 32)}))
    found = refused(path, home)
    assert (found.code, found.member) == ("E-REG-005", "coder")
    assert found.text == (f"member 'coder': {lock}: 'team-coder' is pinned at sha256 "
                          f"{'ab' * 32}, but "
                          f"{hashlib.sha256(capsule_bytes(home, 'team-coder')).hexdigest()} "
                          "was resolved")
    lock.write_text(lock_text({"team-lead": ("0.0.9", good)}))
    found = refused(path, home)
    assert (found.code, found.member) == ("E-REG-005", "lead")
    assert found.text == (f"member 'lead': {lock}: pinned team-lead@0.0.9, but team-lead@0.1.0 "
                          "was resolved")


def capsule_bytes(home: Path, name: str) -> bytes:
    return (home / "artifacts" / name / "0.1.0" / f"{name}-0.1.0.mur.zip").read_bytes()


def test_an_archive_that_does_not_match_its_sidecar_is_not_installed(tmp_path: Path) -> None:
    home, team = tmp_path / "home", tmp_path / "team"
    install_capsule(home / "artifacts", "team-lead", "0.1.0", MEMBERS / "lead")
    archive = install_capsule(home / "artifacts", "team-coder", "0.1.0", MEMBERS / "coder")
    archive.write_bytes(archive.read_bytes() + b"tampered")
    found = refused(write_roster(team, INSTALLED), home)
    assert (found.code, found.member) == ("E-ROS-007", "coder")
    assert found.text.startswith("member 'coder': artifact integrity mismatch for "
                                 "team-coder@0.1.0: expected ")


def test_a_packed_manifest_that_does_not_parse_is_e_ros_007(tmp_path: Path) -> None:
    home, team = tmp_path / "home", tmp_path / "team"
    broken = tmp_path / "broken"
    shutil.copytree(MEMBERS / "coder", broken)
    (broken / "murmur.yaml").write_text("name: team-coder\nversion: [\n")
    install_capsule(home / "artifacts", "team-lead", "0.1.0", MEMBERS / "lead")
    install_capsule(home / "artifacts", "team-coder", "0.1.0", broken)
    found = refused(write_roster(team, INSTALLED), home)
    assert (found.code, found.member) == ("E-ROS-007", "coder")
    assert found.text.startswith("member 'coder': the packed murmur.yaml of team-coder@0.1.0 "
                                 "does not parse: ")


def test_an_archive_entry_that_climbs_out_is_never_unpacked(tmp_path: Path) -> None:
    home, team = tmp_path / "home", tmp_path / "team"
    install_capsule(home / "artifacts", "team-lead", "0.1.0", MEMBERS / "lead")
    archive = install_capsule(home / "artifacts", "team-coder", "0.1.0", MEMBERS / "coder")
    with zipfile.ZipFile(archive, "a") as packed:
        packed.writestr("../../escaped.txt", "out")
        packed.writestr("prompts/system.md", "in")
    (archive.parent / "team-coder-0.1.0.sha256").write_text(
        hashlib.sha256(archive.read_bytes()).hexdigest())
    admitted = admit(write_roster(team, INSTALLED), home)
    assert isinstance(admitted, Admitted)
    folder = admitted.members[1].folder
    assert (folder / "prompts" / "system.md").read_text() == "in"
    assert not list(home.rglob("escaped.txt")) and not list(tmp_path.rglob("escaped.txt"))
