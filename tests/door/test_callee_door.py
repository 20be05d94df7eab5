"""Where `g` finds a callee's door: a real served session, its running record naming it as the
formation's member, or its session under the member's formation directory, or the seat's URL —
verified as `attach` verifies a session, its operator token given only at its checked address;
and a callee whose session has gone, or that nothing names, told as such."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.capsules import write_capsule
from tests.responses import text_response
from tests.served import Served, serve, served  # noqa: F401 - the fixture
from tui.core.errors import CalleeUnknown
from tui.core.formation.callee_door import find_callee
from tui.core.formation.seat import Callee, Seat
from tui.core.running.records import read_records, write_record

FRM = "frm_" + "0" * 31 + "2"


@pytest.fixture
def coder(tmp_path: Path, murmur_home: Path, served: list[Served]) -> Served:  # noqa: F811
    root = write_capsule(tmp_path / "coder", [text_response("done")], name="coder",
                         lifecycle={"task_acceptance": "queue", "after_task": "sleep"})
    running = serve(root, "--task", "t")
    served.append(running)
    return running


def name_as_member(home: Path, session_id: str, member: str | None) -> None:
    """The session's record as a formation member's (Murmur 0.11.0's keys), or with none."""
    [record] = [found.record for found in read_records(home)
                if found.record is not None and found.record.session_id == session_id]
    kept = {key: value for key, value in record.kept.items()
            if key not in ("formation_id", "formation_member")}
    if member is not None:
        kept.update(formation_id=FRM, formation_member=member)
    write_record(home, dataclasses.replace(record, kept=kept))


def test_found_by_the_formation_keys_of_its_record(murmur_home: Path, coder: Served) -> None:
    name_as_member(murmur_home, coder.session_id, "coder")
    door = find_callee(murmur_home, "coder", FRM)
    assert (door.member, door.session_id, door.url) == ("coder", coder.session_id, coder.url)
    assert door.record is not None and door.record.session_id == coder.session_id
    with pytest.raises(CalleeUnknown, match=f"reviewer has no door that can be found: no "
                                            f"running record names it as a member of "
                                            f"formation {FRM}"):
        find_callee(murmur_home, "reviewer", FRM)


def test_found_under_the_members_formation_directory(murmur_home: Path, coder: Served) -> None:
    name_as_member(murmur_home, coder.session_id, None)
    with pytest.raises(CalleeUnknown):
        find_callee(murmur_home, "coder", FRM)
    (murmur_home / "formations" / FRM / "coder" / ".murmur" / coder.session_id).mkdir(
        parents=True)
    assert find_callee(murmur_home, "coder", FRM).session_id == coder.session_id


def test_found_at_the_seats_url_and_told_when_gone(murmur_home: Path, coder: Served) -> None:
    seat = Seat(FRM, "lead", True, "key", (Callee("coder", "mft1.x.y"),))
    seat.know_urls({"coder": coder.url})
    assert find_callee(murmur_home, "coder", None, seat).session_id == coder.session_id
    coder.process.kill()
    coder.process.wait(30)
    with pytest.raises(CalleeUnknown, match=rf"^coder \({coder.session_id}\) is gone: "):
        find_callee(murmur_home, "coder", None, seat)
