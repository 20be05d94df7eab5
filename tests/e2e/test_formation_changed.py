"""An installed member whose archive changed between admission and its start refuses the launch
(`E-RUN-047`, spec murmur-newest §7.3): the roster is admitted, the member's `.mur.zip` is
rewritten in its store, then the launcher's API starts the formation. Real member processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.capsules import write_capsule
from tests.responses import text_response
from tests.rosters import install_capsule, write_roster
from tui.core.errors import FormationError
from tui.core.formation import launcher
from tui.core.formation.admission import Admitted, admit

SLEEP = {"task_acceptance": "queue", "after_task": "sleep", "queue_depth": 4}
ROSTER = """roster_version: 1
members:
  - name: lead
    {lead}
    entry: true
  - name: alpha
    source: alpha
  - name: coder
    capsule: coder
    version: 0.1.0
"""


def team(folder: Path, lead_installed: bool) -> Path:
    """lead (entry), alpha (a `source:` folder, started first), coder (installed in the
    project store); with `lead_installed` the entry is installed too."""
    for name in ("alpha", "coder"):
        write_capsule(folder / name if name == "alpha" else folder / "build" / name,
                      [text_response(f"{name} did it")], name=name, version="0.1.0",
                      shell=(), lifecycle=SLEEP)
    store = folder / ".murmur" / "artifacts"
    install_capsule(store, "coder", "0.1.0", folder / "build" / "coder")
    if lead_installed:
        write_capsule(folder / "build" / "lead", [text_response("done")], name="lead",
                      version="0.1.0", shell=())
        install_capsule(store, "lead", "0.1.0", folder / "build" / "lead")
        lead = "capsule: lead\n    version: 0.1.0"
    else:
        write_capsule(folder / "lead", [text_response("done")], name="lead", shell=())
        lead = "source: lead"
    return write_roster(folder, ROSTER.format(lead=lead))


def admitted(roster: Path, home: Path) -> Admitted:
    found = admit(roster, home)
    assert isinstance(found, Admitted), found
    return found


def rewrite(archive: Path) -> None:
    """Another capsule's bytes where the admitted archive was (its sidecar untouched)."""
    data = archive.read_bytes()
    archive.write_bytes(data + b"\0")


def formation_processes(home: Path) -> list[int]:
    """Processes whose command line names a folder under `$MURMUR_HOME/formations`."""
    where = str(home / "formations")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8",
                                                                                 "replace")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if where in line and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def test_a_member_whose_archive_changed_since_admission_does_not_start(
        tmp_path: Path, murmur_home: Path) -> None:
    roster = team(tmp_path / "team", lead_installed=False)
    formation = admitted(roster, murmur_home)
    coder = next(member for member in formation.members if member.name == "coder")
    assert coder.archive is not None
    rewrite(coder.archive)
    said: list[str] = []
    with pytest.raises(FormationError) as refused:
        launcher.launch(formation, murmur_home, said.append)
    assert refused.value.code == "E-RUN-047"
    assert refused.value.text.startswith(
        f"member coder: coder@0.1.0's archive {coder.archive} changed since admission: "
        f"admitted at sha256 {coder.sha256}, it is now ")
    folders = list((murmur_home / "formations").iterdir())
    assert len(folders) == 1
    assert (folders[0] / "alpha").is_dir()  # alpha, before it in the roster, was started
    assert not (folders[0] / "coder").exists()  # coder never was
    assert formation_processes(murmur_home) == []  # and alpha was ended


def test_a_rewritten_sidecar_is_a_change_too(tmp_path: Path, murmur_home: Path) -> None:
    roster = team(tmp_path / "team", lead_installed=False)
    formation = admitted(roster, murmur_home)
    coder = next(member for member in formation.members if member.name == "coder")
    assert coder.archive is not None
    sidecar = coder.archive.with_name("coder-0.1.0.sha256")
    sidecar.write_text("0" * 64)
    said: list[str] = []
    with pytest.raises(FormationError) as refused:
        launcher.launch(formation, murmur_home, said.append)
    assert refused.value.code == "E-RUN-047"
    assert refused.value.text.endswith(
        f"its sidecar now says {'0' * 64}, admission read {coder.sha256}; the formation does "
        "not start with bytes admission did not check")


def test_an_entry_changed_while_its_peers_started_ends_them(
        tmp_path: Path, murmur_home: Path) -> None:
    roster = team(tmp_path / "team", lead_installed=True)
    formation = admitted(roster, murmur_home)
    lead = formation.entry
    assert lead.archive is not None
    running: list[list[int]] = []
    said: list[str] = []

    def stopped() -> bool:
        """Asked between probes of the peers' doors: the peers run; the entry is changed."""
        if not running:
            running.append(formation_processes(murmur_home))
            assert lead.archive is not None
            rewrite(lead.archive)
        return False

    with pytest.raises(FormationError) as refused:
        launcher.launch(formation, murmur_home, said.append, stopped=stopped)
    assert len(running[0]) == 2  # alpha and coder had started
    assert refused.value.code == "E-RUN-047"
    assert refused.value.text.startswith(f"member lead: lead@0.1.0's archive {lead.archive} "
                                         "changed since admission")
    assert formation_processes(murmur_home) == []
