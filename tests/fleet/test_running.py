"""Running records: written as Murmur writes them, read without trusting them, and verified in
Murmur's three layers against real processes and a real door on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.door_fake import FakeDoor, serving, silent_port
from tests.waits import block_until
from tui.core import ids
from tui.core.a2a.card import Generation
from tui.core.errors import RecordError, RunningDirError
from tui.core.running import liveness, tokens
from tui.core.running import probe as door_probe
from tui.core.running import records as running
from tui.core.running.records import RunningRecord


def mine(session_id: str, url: str, workdir: Path | None = None) -> RunningRecord:
    return RunningRecord.for_this_process(session_id, url, "demo", "0.1.0",
                                          workdir or Path("/nonexistent"))


def test_a_record_is_written_0600_in_a_0700_folder_with_exactly_murmurs_keys(
        murmur_home: Path) -> None:
    record = mine(ids.session_id(), "127.0.0.1:4000")
    os.umask(0o022)
    path = running.write_record(murmur_home, record)
    assert path == murmur_home / "running" / f"{record.session_id}.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    body = json.loads(path.read_text())
    assert sorted(body) == ["capsule_name", "capsule_version", "outlives_launcher", "pid",
                            "process_start", "records_dir", "session_id", "started_at", "url",
                            "workdir"]
    assert body["pid"] == os.getpid()
    assert body["started_at"].endswith("Z") and running.started_seconds_ago(
        body["started_at"]) is not None
    assert [found.record for found in running.read_records(murmur_home)] == [record]
    assert os.listdir(path.parent) == [path.name]  # the staging file is gone


def test_a_reader_never_sees_half_a_record(murmur_home: Path) -> None:
    """Written many times while read many times: every read is a whole record or none."""
    record = mine(ids.session_id(), "127.0.0.1:4000")
    running.write_record(murmur_home, record)
    stop = threading.Event()

    def rewrite() -> None:
        while not stop.is_set():
            running.write_record(murmur_home, record)

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        for _ in range(300):
            found = running.read_records(murmur_home)
            assert [item.problem for item in found] == [None]
    finally:
        stop.set()
        writer.join()


def test_an_earlier_token_file_beside_the_record_is_read_and_goes_with_it(murmur_home: Path
                                                                         ) -> None:
    """The `<session_id>.token` file murmur-tui wrote before its records held the token: read
    when the record has no `door_token`, removed with the record."""
    record = mine(ids.session_id(), "127.0.0.1:4000")
    running.write_record(murmur_home, record)
    assert tokens.read_token(murmur_home, record) is None
    path = tokens.write_token(murmur_home, record.session_id, "tok-operator-123")
    assert path.name == f"{record.session_id}.token"
    assert path.stat().st_mode & 0o777 == 0o600
    assert tokens.read_token(murmur_home, record) == "tok-operator-123"
    with_field = RunningRecord(**{**record.__dict__, "door_token": "tok-in-record"})
    assert tokens.read_token(murmur_home, with_field) == "tok-in-record"
    assert "tok-in-record" not in repr(with_field)
    running.remove_record(murmur_home, record.session_id)
    assert not os.listdir(murmur_home / "running")


def test_a_session_id_that_would_leave_the_folder_is_refused(murmur_home: Path) -> None:
    record = mine("../escape", "127.0.0.1:4000")
    with pytest.raises(RecordError, match="not a session id"):
        running.write_record(murmur_home, record)
    assert not (murmur_home / "escape.json").exists()


GOOD = {"session_id": "ses_0199c4e2f1b7712a9d3e4f5061728394", "url": "127.0.0.1:1",
        "pid": 1, "process_start": "42", "capsule_name": "demo", "capsule_version": "0.1.0",
        "workdir": "/tmp/demo", "outlives_launcher": True,
        "started_at": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(("body", "expected"), [
    (b"{not json", "is not JSON"),
    (b"[1, 2]", "is an array, not a JSON object"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "process_start"}).encode(),
     "has no `process_start`"),
    (json.dumps({**GOOD, "pid": "1"}).encode(), "`pid` is a string, expected a whole number"),
    (json.dumps({**GOOD, "pid": True}).encode(), "`pid` is a boolean"),
    (json.dumps({**GOOD, "pid": -4}).encode(), "not a process id"),
    (json.dumps({**GOOD, "outlives_launcher": "yes"}).encode(), "expected true or false"),
    (json.dumps({**GOOD, "door_token": 7}).encode(), "`door_token` is a number"),
    (json.dumps({**GOOD, "session_id": "ses_other"}).encode(), "names session ses_other"),
    (b"\xff\xfe\x00garbage", "is not JSON"),
])
def test_a_broken_record_is_named_with_what_is_wrong(murmur_home: Path, body: bytes,
                                                     expected: str) -> None:
    folder = murmur_home / "running"
    folder.mkdir(parents=True, mode=0o700)
    path = folder / f"{GOOD['session_id']}.json"
    path.write_bytes(body)
    path.chmod(0o600)
    [found] = running.read_records(murmur_home)
    assert found.record is None and found.problem is not None
    assert expected in found.problem
    assert str(path) in str(found)
    assert path.read_bytes() == body  # nothing is lost


def test_hostile_record_files_are_reported_not_followed(murmur_home: Path, tmp_path: Path
                                                       ) -> None:
    folder = murmur_home / "running"
    folder.mkdir(parents=True, mode=0o700)
    secret = tmp_path / "elsewhere.json"
    secret.write_text(json.dumps(GOOD))
    secret.chmod(0o600)
    (folder / "ses_link.json").symlink_to(secret)
    huge = folder / "ses_huge.json"
    huge.write_bytes(b" " * (running.MAX_RECORD_BYTES + 1))
    huge.chmod(0o600)
    loose = folder / f"{GOOD['session_id']}.json"
    loose.write_text(json.dumps(GOOD))
    loose.chmod(0o644)
    (folder / "ses_dir.json").mkdir()
    fifo = folder / "ses_fifo.json"
    os.mkfifo(fifo, 0o600)
    problems = {found.path.name: found.problem for found in running.read_records(murmur_home)}
    assert "symbolic link" in (problems["ses_link.json"] or "")
    assert "at most" in (problems["ses_huge.json"] or "")
    assert "mode 0644" in (problems[loose.name] or "") and "chmod 600" in (
        problems[loose.name] or "")
    assert "not a regular file" in (problems["ses_dir.json"] or "")
    assert "not a regular file" in (problems["ses_fifo.json"] or "")
    assert all(found.record is None for found in running.read_records(murmur_home))


def test_no_folder_is_no_records_and_an_unlistable_one_is_an_error(murmur_home: Path) -> None:
    assert running.read_records(murmur_home) == []
    murmur_home.mkdir(parents=True, exist_ok=True)
    (murmur_home / "running").write_text("a file where the folder belongs")
    with pytest.raises(RunningDirError) as caught:
        running.read_records(murmur_home)
    assert "running" in str(caught.value)


# -- the three layers ---------------------------------------------------------------------------
@pytest.mark.parametrize("generation", ["C", "B", "A"])
def test_a_live_record_is_live_on_every_card_shape(generation: Generation) -> None:
    session = ids.session_id()
    with serving(FakeDoor(generation, session_id=session, previous=True)) as door:
        verdict = door_probe.verify(mine(session, door.url), 5.0)
    assert verdict.state == "live", verdict.reason
    assert verdict.door == generation


@pytest.mark.parametrize("generation", ["C", "B"])
def test_an_authenticated_door_is_verified_through_its_extended_card(
        generation: Generation) -> None:
    session = ids.session_id()
    with serving(FakeDoor(generation, session_id=session, token="tok-operator-xyz")) as door:
        record = mine(session, door.url)
        without = door_probe.verify(record, 5.0)
        wrong = door_probe.verify(record, 5.0, token="tok-wrong")
        right = door_probe.verify(record, 5.0, token="tok-operator-xyz")
        posts = [req for req in door.requests if req.method == "POST"]
    assert without.state == "unreachable" and "no token" in (without.reason or "")
    assert wrong.state == "unreachable" and "401 (invalid_token)" in (wrong.reason or "")
    assert right.state == "live", right.reason
    method = posts[-1].body["method"]
    if generation == "C":
        assert method == "GetExtendedAgentCard" and posts[-1].headers.get("a2a-version") == "1.0"
    else:
        assert method == "agent/getAuthenticatedExtendedCard"
    assert posts[-1].headers["authorization"] == "Bearer tok-operator-xyz"
    assert "tok-operator-xyz" not in repr(right) + str(right.reason)


def test_a_card_naming_another_session_keeps_the_record_as_unreachable() -> None:
    with serving(FakeDoor(session_id=ids.session_id())) as door:
        record = mine(ids.session_id(), door.url)
        verdict = door_probe.verify(record, 5.0)
    assert verdict.state == "unreachable"
    assert f"answers for session {door.session_id}" in (verdict.reason or "")


def test_a_live_process_behind_a_silent_port_is_unreachable() -> None:
    verdict = door_probe.verify(mine(ids.session_id(), f"127.0.0.1:{silent_port()}"), 5.0)
    assert verdict.state == "unreachable"
    assert "nothing answered" in (verdict.reason or "")


def test_a_dead_pid_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    record = RunningRecord(**{**mine(ids.session_id(), "127.0.0.1:1").__dict__,
                              "pid": child.pid})
    verdict = door_probe.verify(record, 5.0)
    assert verdict.state == "gone" and verdict.reason == f"no process holds pid {child.pid}"


def test_a_reused_pid_is_gone() -> None:
    """A live process holds the pid; it is not the one that wrote the record."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        record = RunningRecord(**{**mine(ids.session_id(), "127.0.0.1:1").__dict__,
                                  "pid": sleeper.pid})  # this process's start time, not its
        assert liveness.process_start_token(sleeper.pid) != record.process_start
        verdict = door_probe.verify(record, 5.0)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert verdict.state == "gone"
    assert "started at another time" in (verdict.reason or "")


def test_a_zombie_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    start = liveness.process_start_token(child.pid)
    record = RunningRecord(**{**mine(ids.session_id(), "127.0.0.1:1").__dict__,
                              "pid": child.pid, "process_start": start or "?"})
    try:
        block_until(lambda: door_probe.verify(record, 1.0).state == "gone",  # exited, not reaped
                    what="a zombie kept reading as alive")
    finally:
        child.wait()


def test_fifty_records_are_verified_concurrently() -> None:
    """Fifty records, half behind a door that accepts and never answers: every one is
    decided, in the records' order."""
    import socket

    hold = socket.socket()
    hold.bind(("127.0.0.1", 0))
    hold.listen(100)  # accepts connections and never answers: every read times out
    try:
        with serving(FakeDoor(session_id=ids.session_id())) as door:
            live = [mine(door.session_id, door.url) for _ in range(25)]
            silent = [mine(ids.session_id(), f"127.0.0.1:{hold.getsockname()[1]}")
                      for _ in range(25)]
            verdicts = door_probe.verify_all(live + silent, 3.0)
    finally:
        hold.close()
    assert [v.state for v in verdicts] == ["live"] * 25 + ["unreachable"] * 25
