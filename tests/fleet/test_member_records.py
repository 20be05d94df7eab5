"""A formation member's running record and a delegated child's, as Murmur v0.11.0 writes them
(spec murmur-newest §4.1, §7.6, §9.1): the formation keys from the member's seat, the lifeline
and its launcher, `spawned_by` from `MURMUR_SPAWNER` — written by real served sessions and
read back as every reader reads a record."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory
from tests.members import Member, members, seat
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tui.core import ids
from tui.core.formation.membership import member_keys
from tui.core.running.liveness import process_start_token
from tui.core.running.records import read_records

__all__ = ["members"]
FORMATION = "frm_019f01a940ce7761854e768ecbe3d399"


def on_disk(home: Path, session_id: str) -> dict[str, object]:
    return dict(json.loads((home / "running" / f"{session_id}.json").read_text()))


def test_a_member_records_its_formation_member_and_entry_and_ps_reads_them(
        murmur_home: Path, make_capsule: CapsuleFactory, members: list[Member]) -> None:
    root = make_capsule([text_response("x")], extra=SLEEP)
    lead = Member(root, murmur_home, seat(FORMATION, "lead", entry=True, callees=("coder",)))
    coder = Member(root, murmur_home, seat(FORMATION, "coder"))
    members.extend([lead, coder])
    written = on_disk(murmur_home, lead.session_id)
    keys = list(written)
    # after the ten required keys, in Murmur's order; no lifeline is held here, so neither
    # `formation_lifeline` nor `formation_launcher` is written
    assert keys[keys.index("started_at") + 1:] == [
        "formation_id", "formation_member", "formation_entry"]
    assert (written["formation_id"], written["formation_member"], written["formation_entry"]) \
        == (FORMATION, "lead", True)
    assert on_disk(murmur_home, coder.session_id)["formation_entry"] is False
    read = {item.record.session_id: item.record for item in read_records(murmur_home)
            if item.record is not None}
    assert read[coder.session_id].formation_id == FORMATION
    assert read[coder.session_id].kept["formation_member"] == "coder"


def test_a_session_that_is_no_member_writes_no_formation_key(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP))
    served.append(door)
    written = on_disk(murmur_home, door.session_id)
    assert not [key for key in written if key.startswith("formation") or key == "spawned_by"]


def test_a_delegated_child_records_the_session_that_spawned_it(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served],
        monkeypatch: pytest.MonkeyPatch) -> None:
    parent = ids.session_id()
    spawner = json.dumps({"url": "http://127.0.0.1:1", "session_id": parent,
                          "context_id": "ctx_1", "trust": "trusted",
                          "delegation_id": "dlg_01"}, separators=(",", ":"))
    monkeypatch.setenv("MURMUR_SPAWNER", spawner)
    child = serve(make_capsule([text_response("x")], extra=SLEEP))
    served.append(child)
    assert on_disk(murmur_home, child.session_id)["spawned_by"] == parent


def test_a_lifeline_held_names_the_launcher_and_a_bad_spawner_names_no_one() -> None:
    read_end, write_end = os.pipe()
    place = seat(FORMATION, "coder")
    keys = member_keys(place, {"MURMUR_FORMATION_LIFELINE": str(read_end)})
    os.close(write_end)
    os.close(read_end)
    assert keys["formation_lifeline"] is True
    assert keys["formation_launcher"] == {
        "pid": os.getppid(), "process_start": process_start_token(os.getppid())}
    # a descriptor that is not open is no lifeline: the key is left out, as for false
    assert member_keys(place, {"MURMUR_FORMATION_LIFELINE": str(read_end)}) == {
        "formation_id": FORMATION, "formation_member": "coder", "formation_entry": False}
    for bad in ("not json", "[1]", '{"session_id": "ses_../../x"}', '{"session_id": 4}'):
        assert member_keys(None, {"MURMUR_SPAWNER": bad}) == {}
