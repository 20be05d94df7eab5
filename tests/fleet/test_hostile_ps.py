"""`murmur-tui ps` and `murmur-tui attach` under hostile running records and session files:
the real CLI (a subprocess, with a timeout so a hang fails), real served sessions, real FIFOs
and links, and a real impostor listening where a record points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CapsuleFactory, run_cli
from tests.door_fake import FakeDoor, serving
from tests.fleet.test_ps import record, trace
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tui.commands.fleet import resolve
from tui.core import ids
from tui.core.errors import AttachError
from tui.core.running import records as running
from tui.core.running import tokens
from tui.core.running.records import RunningRecord

AUTH = "network:\n  authentication:\n    scheme: bearer\n"
DEEP = 100_000


def record_of(home: Path, session_id: str) -> RunningRecord:
    return next(found.record for found in running.read_records(home)
                if found.record is not None and found.record.session_id == session_id)


def write_raw(home: Path, session_id: str, value: dict[str, Any]) -> Path:
    """A record file written as a hostile party would: any JSON, mode 0600."""
    path = running.running_dir(home) / f"{session_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(json.dumps(value))
    path.chmod(0o600)
    return path


def ps_rows(*args: str) -> tuple[dict[str, dict[str, Any]], str]:
    result = run_cli("ps", "--json", *args, timeout=90)  # a hang raises TimeoutExpired
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return {row["session_id"]: row for row in json.loads(result.stdout)}, result.stderr


# -- urls no HTTP client can use ----------------------------------------------------------------
@pytest.mark.parametrize("url", [
    "http://[::1", "127.0.0.1:80\r", "127.0.0.1:80\x00", "ftp://127.0.0.1:80",
    "127.0.0.1:80/../x", "user@127.0.0.1:80", "127.0.0.1:99999", "x" * 10_000 + ":80",
    "http://[::1%eth0]:80", "ex\u00e4mple.com:80"],
    ids=["open-bracket", "cr", "nul", "ftp", "path", "user", "port", "10kB", "zone", "idn"])
def test_a_record_whose_url_no_client_can_use_is_named_and_the_others_are_listed(
        murmur_home: Path, tmp_path: Path, url: str) -> None:
    good = ids.session_id()
    bad = ids.session_id()
    with serving(FakeDoor(session_id=good)) as door:
        record(murmur_home, good, door.url, tmp_path / "good")
        value = RunningRecord.for_this_process(bad, "127.0.0.1:1", "demo", "0.1.0",
                                               tmp_path).to_json()
        path = write_raw(murmur_home, bad, {**value, "url": url})
        rows, said = ps_rows()
        table = run_cli("ps", timeout=90)
    assert set(rows) == {good} and rows[good]["status"] == "running"
    assert f"not a running record: {path}: `url`" in said
    assert "is not a door address" in said
    assert "\r" not in said and "\x00" not in said and len(said) < 2000
    assert table.returncode == 0 and good in table.stdout and bad not in table.stdout
    assert path.exists()  # nothing is removed


# -- the token goes nowhere the session does not listen ----------------------------------------
def test_ps_and_attach_never_send_a_token_to_a_door_the_session_does_not_hold(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    """A record naming a live served session's pid and start time, its operator token, and
    an address where an impostor listens, serving a card that asks for a token: `ps` and
    `attach` read the impostor's public card, find that the session's process does not hold
    that socket, and present no token; the real session is still listed live."""
    real = serve(make_capsule([text_response("x")], extra=SLEEP + AUTH))
    served.append(real)
    genuine = record_of(murmur_home, real.session_id)
    token = tokens.read_token(murmur_home, genuine)
    assert token
    forged = ids.session_id()
    with serving(FakeDoor(session_id=forged, token="anything")) as impostor:
        write_raw(murmur_home, forged, {**genuine.to_json(), "session_id": forged,
                                        "url": impostor.url, "door_token": token})
        rows, said = ps_rows()
        attached = run_cli("attach", forged, timeout=90)
        requests = list(impostor.requests)
    assert rows[real.session_id]["status"] == "running"
    assert rows[forged]["status"] == "unreachable"
    assert "could not be tied to the session's process" in rows[forged]["reason"]
    assert "its token was not sent" in rows[forged]["reason"]
    assert attached.returncode == 2 and "its token was not sent" in attached.stderr
    assert requests and all(request.method == "GET" for request in requests)
    assert not any("authorization" in request.headers for request in requests)
    assert token not in said + attached.stderr + json.dumps(rows)


def test_no_request_reaches_a_record_url_before_its_pid_and_start_time_are_checked(
        murmur_home: Path, tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        with serving(FakeDoor(session_id=ids.session_id(), token="anything")) as impostor:
            for pid in (dead.pid, sleeper.pid):  # gone; alive but started at another time
                record(murmur_home, ids.session_id(), impostor.url, tmp_path, pid=pid,
                       door_token="tok-operator-never-sent")
            rows, _ = ps_rows("--all")
            attach = [run_cli("attach", session, timeout=90) for session in rows]
            requests = list(impostor.requests)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sorted(row["status"] for row in rows.values()) == ["gone", "gone"]
    assert all(result.returncode == 2 and "is gone" in result.stderr for result in attach)
    assert requests == []


# -- session files that are not files ------------------------------------------------------------
def test_ps_answers_and_lists_a_served_session_whose_trace_is_hostile(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP))
    served.append(door)
    door.until(door.send("hello")["id"], "TASK_STATE_COMPLETED")  # its workdir and trace exist
    trace_path = record_of(murmur_home, door.session_id).workdir / "trace.jsonl"
    assert trace_path.is_file()
    deep = (b'{"event_type":"session_start","model":"m","x":' + b"[" * DEEP + b"]" * DEEP
            + b"}\n")
    for kind, said_about_it in (("fifo", "it is a FIFO (named pipe); not read"),
                                ("zero", "it is a link; not read"), ("deep", None),
                                ("sparse", None)):
        trace_path.unlink(missing_ok=True)
        if kind == "fifo":
            os.mkfifo(trace_path, 0o600)
        elif kind == "zero":
            trace_path.symlink_to("/dev/zero")
        elif kind == "deep":
            trace_path.write_bytes(deep + b'{"event_type":"task_start","task_id":"tsk_1"}\n')
        else:  # 8 GiB that reads as zeros, then one line
            with trace_path.open("wb") as handle:
                handle.truncate(8 << 30)
                handle.seek(0, os.SEEK_END)
                handle.write(b'\n{"event_type":"task_start","task_id":"tsk_2"}\n')
        rows, said = ps_rows()
        row = rows[door.session_id]
        assert row["status"] == "running", kind
        if said_about_it is not None:
            assert f"{door.session_id}: {trace_path}: {said_about_it}" in said, said
            assert row["state"] == "unknown"
        else:
            assert row["state"] == "working", kind  # the lines after the hostile one count
            assert row["model"] is None
    assert door.process.poll() is None


def test_ps_names_a_task_md_that_is_not_a_file_and_lists_the_session(
        murmur_home: Path, tmp_path: Path) -> None:
    session = ids.session_id()
    workdir = tmp_path / "w"
    trace(workdir, session, {"event_type": "task_start", "task_id": "tsk_md",
                             "source": "task_md"})
    os.mkfifo(workdir / "task.md", 0o600)
    with serving(FakeDoor(session_id=session)) as door:
        record(murmur_home, session, door.url, workdir)
        rows, said = ps_rows()
    assert rows[session]["state"] == "working" and rows[session]["task"] is None
    assert f"{workdir / 'task.md'}: it is a FIFO (named pipe); not read" in said


def test_a_record_file_that_is_a_link_to_dev_zero_or_nested_deep_is_named(
        murmur_home: Path, tmp_path: Path) -> None:
    folder = running.running_dir(murmur_home)
    folder.mkdir(parents=True, mode=0o700)
    (folder / "ses_zero.json").symlink_to("/dev/zero")
    deep = folder / "ses_deep.json"  # under the size bound: the parse is what is tested
    deep.write_bytes(b"[" * 30_000 + b"]" * 30_000)
    deep.chmod(0o600)
    result = run_cli("ps", timeout=90)
    assert result.returncode == 0 and result.stdout == "no running capsules\n"
    assert "ses_zero.json: is a symbolic link" in result.stderr
    assert "ses_deep.json: is not JSON (nested deeper than 127)" in result.stderr
    assert "Traceback" not in result.stderr


# -- attach --token-file ---------------------------------------------------------------------------
def hostile_token_file(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"token-{kind}"
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "big":
        path.write_bytes(b"t" * 5000)
    elif kind == "missing":
        pass
    else:
        path.write_bytes({"nul": b"tok-abc\x00def\n", "cr": b"tok-abc-def\r\n",
                          "two-lines": b"tok-abc\ndef\n", "space": b"tok abc\n",
                          "non-ascii": "tok-\u00e9t\u00e9\n".encode(), "empty": b"\n",
                          "escape": b"tok-\x1b[31m\n", "latin1": b"tok-\xe9\n"}[kind])
    return path


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "big", "missing", "nul", "cr",
                                  "two-lines", "space", "non-ascii", "empty", "escape",
                                  "latin1"])
def test_attach_refuses_a_token_file_that_does_not_hold_one_token_naming_it(
        tmp_path: Path, kind: str) -> None:
    path = hostile_token_file(tmp_path, kind)
    result = run_cli("attach", "http://127.0.0.1:1", "--token-file", str(path), timeout=60)
    assert result.returncode == 2, result.stderr
    assert f"--token-file {path}" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "\x00" not in result.stderr and "\x1b" not in result.stderr


def test_a_token_file_loses_one_trailing_newline_and_a_link_to_a_file_is_followed(
        murmur_home: Path, tmp_path: Path) -> None:
    real = tmp_path / "real-token"
    real.write_bytes(b"tok-abc.def_123\n")
    link = tmp_path / "linked-token"
    link.symlink_to(real)
    for path in (real, link):
        assert resolve(murmur_home, "http://127.0.0.1:1", path)[3] == "tok-abc.def_123"


def test_attach_refuses_a_url_no_client_can_use_and_a_control_character_in_the_env_token(
        ) -> None:
    for url in ("http://[::1", "http://127.0.0.1:1\r", "http://127.0.0.1:99999"):
        result = run_cli("attach", url, timeout=60)
        assert result.returncode == 2, result.stderr
        assert "is not a door URL" in result.stderr and "internal error" not in result.stderr
    result = run_cli("attach", "http://127.0.0.1:1", env={"MURMUR_DOOR_TOKEN": "tok\rinjected"},
                     timeout=60)
    assert result.returncode == 2 and "$MURMUR_DOOR_TOKEN is not a bearer token" in \
        result.stderr


def test_resolve_names_a_session_whose_process_is_gone_without_touching_its_url(
        murmur_home: Path, tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    session = ids.session_id()
    record(murmur_home, session, "127.0.0.1:1", tmp_path, pid=child.pid)
    with pytest.raises(AttachError) as refused:
        resolve(murmur_home, session, None)
    assert f"no process holds pid {child.pid}" in str(refused.value)
