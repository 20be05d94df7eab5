"""A session's name on its door's card, over real served sessions: the card carries it in
murmur-tui's own extension (a rename on the session's machine reaches the card of the running
session), and a supervisor on another "machine" — another `MURMUR_HOME`, with no names.json
entry for the session — takes it from there: `attach`'s header and the fleet's row. A rename
from that fleet is kept there only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.app.test_small_terminal import screen_rows as supervisor_rows
from tests.conftest import CapsuleFactory
from tests.fleet.test_fleet_names import rename_to, shown
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.attach import RemoteSource
from tui.app.fleet.app import FleetApp
from tui.core import names
from tui.core.a2a.card import NAME_EXT, extension, parse_card
from tui.core.a2a.client import DoorClient
from tui.core.running.records import read_records
from tui.core.running.tokens import read_token

AUTH = "network:\n  authentication:\n    scheme: bearer\n"


def card_of(door: Served) -> dict[str, Any]:
    reply = door.client.get("/.well-known/agent-card.json")
    assert reply.status_code == 200
    return dict(reply.json())


def card_name(door: Served) -> object:
    named = extension(card_of(door), NAME_EXT)
    return None if named is None else named.get("name")


def served_elsewhere(root: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
                     *args: str) -> Served:
    """The session served with its own `MURMUR_HOME` (`home`): another machine's."""
    with monkeypatch.context() as scope:
        scope.setenv("MURMUR_HOME", str(home))
        return serve(root, *args)


def test_the_card_names_the_session_and_a_rename_reaches_it_while_it_runs(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP), "--name", "nightly")
    plain = serve(make_capsule([text_response("y")], extra=SLEEP, folder="plain"))
    served.extend([door, plain])
    assert card_name(door) == "nightly"
    parsed = parse_card(card_of(door), door.url)
    assert (parsed.session_id, parsed.session_name) == (door.session_id, "nightly")
    names.give(murmur_home, door.session_id, "release 2.1")  # `R` in this machine's fleet
    assert card_name(door) == "release 2.1"
    # a session with no name serves Murmur's card as it is: three extensions, no more
    uris = [item["uri"] for item in card_of(plain)["capabilities"]["extensions"]]
    assert [uri.rsplit("#", 1)[1] for uri in uris] == [
        "murmur-door-v1", "murmur-capsule-v1", "murmur-stream-v1"]


def test_a_door_that_asks_for_a_token_names_the_session_on_its_extended_card_only(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP + AUTH), "--name", "secret op")
    served.append(door)
    assert card_name(door) is None  # the public card says no more than Murmur's
    record = next(f.record for f in read_records(murmur_home) if f.record is not None)
    client = DoorClient(door.url, read_token(murmur_home, record))
    try:
        assert client.card().session_name == "secret op"
    finally:
        client.close()


async def test_attach_from_another_machine_heads_the_screen_with_the_cards_name(
        tmp_path: Path, murmur_home: Path, make_capsule: CapsuleFactory,
        served: list[Served], monkeypatch: pytest.MonkeyPatch) -> None:
    there = tmp_path / "build-3"
    door = served_elsewhere(make_capsule([text_response("x")], extra=SLEEP), there,
                            monkeypatch, "--name", "nightly build")
    served.append(door)
    assert names.read(murmur_home) == {}  # nothing kept here
    remote = RemoteSource(murmur_home, "", door.url)
    app = SupervisorApp(murmur_home, source=remote)
    async with app.run_test(size=(80, 24)) as pilot:
        header = f"nightly build  ·  ses_…{door.session_id[-9:]}  ·  test-capsule 1.0.0"
        await wait_until(pilot, lambda: supervisor_rows(app)[0].strip() == header,
                         what=lambda: supervisor_rows(app)[0])
        await pilot.press("ctrl+q")


async def test_the_fleet_takes_the_cards_name_and_keeps_its_own_rename_here(
        tmp_path: Path, murmur_home: Path, make_capsule: CapsuleFactory,
        served: list[Served], monkeypatch: pytest.MonkeyPatch) -> None:
    there = tmp_path / "build-3"
    door = served_elsewhere(make_capsule([text_response("x")], extra=SLEEP, name="plain"),
                            there, monkeypatch, "--name", "nightly")
    served.append(door)
    # its record, as a discovery that does not hand the name on (Murmur's `mur ps`) finds it
    record = json.loads((there / "running" / f"{door.session_id}.json").read_text())
    assert record.pop("name") == "nightly"
    (murmur_home / "running").mkdir(parents=True, mode=0o700)
    copy = murmur_home / "running" / f"{door.session_id}.json"
    copy.write_text(json.dumps(record))
    os.chmod(copy, 0o600)
    app = FleetApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: shown(app, "nightly        plain"))
        app.fleet.rows.select_key(door.session_id)
        await rename_to(pilot, app, "nightly", "ours")
        await wait_until(pilot, lambda: shown(app, "ours           plain"))
        assert names.read(murmur_home) == {door.session_id: "ours"}
        # the next read of the records (it says a broken record it finds): the name kept
        # here wins over the card's
        broken = murmur_home / "running" / "ses_broken.json"
        broken.write_text("{")
        os.chmod(broken, 0o600)
        await wait_until(pilot, lambda: any("Not a running record" in str(n.message)
                                            for n in app._notifications))
        assert shown(app, "ours           plain")
    # its own machine keeps its name, and so does its card
    assert names.read(there) == {door.session_id: "nightly"}
    assert card_name(door) == "nightly"
