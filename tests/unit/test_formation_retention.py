"""Retention of formation directories (tui/core/formation/retention.py) on real directories,
with real processes as launchers: `max_sessions` by the id's mint time (the formation being
launched counted), `max_age` by the newest file, a live launcher or a live member kept, and
anything that is not a formation left alone and not followed."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui.core import ids
from tui.core.formation import retention
from tui.core.manifest.model import TraceRetain
from tui.core.running.liveness import process_start_token
from tui.core.running.records import RunningRecord, write_record

DAY = 86400.0
NOW = 1_900_000_000.0  # the clock the tests give retention


def frm(minted_s: float) -> str:
    """A formation id minted at `minted_s` (a UUIDv7: version 7, variant 10)."""
    return f"frm_{int(minted_s * 1000):012x}7{secrets.token_hex(2)[:3]}8{secrets.token_hex(8)[:15]}"


@pytest.fixture
def ended() -> tuple[int, str]:
    """A launcher that ran and ended: its pid and the start time it had."""
    process = subprocess.Popen(["sleep", "30"])
    start = process_start_token(process.pid)
    assert start is not None
    process.kill()
    process.wait()
    return process.pid, start


@pytest.fixture
def running() -> Iterator[tuple[int, str]]:
    """A launcher still running: its pid and start time."""
    process = subprocess.Popen(["sleep", "300"])
    start = process_start_token(process.pid)
    assert start is not None
    yield process.pid, start
    process.kill()
    process.wait()


def formation(home: Path, formation_id: str, launcher: tuple[int, str | None],
              written: float = NOW - 60) -> Path:
    """A formation directory as the launcher writes one, a member's trace in it, every file
    last written at `written`."""
    folder = home / "formations" / formation_id
    (folder / "coder" / ".murmur" / "ses_1").mkdir(parents=True)
    info = folder / "formation.json"
    info.write_text(json.dumps({"project_dir": "/tmp/team", "launcher_pid": launcher[0],
                                "launcher_start": launcher[1]}))
    info.chmod(0o600)
    (folder / "coder" / ".murmur" / "ses_1" / "trace.jsonl").write_text("{}\n")
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (written, written))
    return folder


@contextlib.contextmanager
def unremovable(file: Path) -> Iterator[None]:
    """`file` cannot be unlinked: its folder read-only, or (root ignores modes) the file
    immutable."""
    if os.geteuid() != 0:
        file.parent.chmod(0o500)
        try:
            yield
        finally:
            file.parent.chmod(0o700)
        return
    if subprocess.run(["chattr", "+i", str(file)], capture_output=True).returncode != 0:
        pytest.skip("running as root where chattr +i is not available")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(file)], check=True)


def left(home: Path) -> list[str]:
    return sorted(os.listdir(home / "formations"))


def applied(home: Path, retain: TraceRetain) -> tuple[list[str], list[str]]:
    said: list[str] = []
    removed = retention.apply(home, retain, said.append, now=NOW)
    return removed, said


def test_max_sessions_keeps_the_newest_by_id_and_counts_the_new_formation(
        murmur_home: Path, ended: tuple[int, str]) -> None:
    oldest, middle, newest = frm(NOW - 3 * DAY), frm(NOW - 2 * DAY), frm(NOW - DAY)
    # the oldest id was written last: the id's time decides, not the files'
    formation(murmur_home, oldest, ended, written=NOW - 10)
    formation(murmur_home, middle, ended)
    formation(murmur_home, newest, ended)
    removed, said = applied(murmur_home, TraceRetain(max_sessions=2))
    assert left(murmur_home) == [newest]
    assert removed == [middle, oldest]
    assert said == [f"[murmur-tui] retention: removed formation {middle} "
                    "(beyond max_sessions 2)",
                    f"[murmur-tui] retention: removed formation {oldest} "
                    "(beyond max_sessions 2)"]


def test_max_age_measures_the_newest_file(murmur_home: Path, ended: tuple[int, str]) -> None:
    old, recent, touched = frm(NOW - 40 * DAY), frm(NOW - 20 * DAY), frm(NOW - 50 * DAY)
    formation(murmur_home, old, ended, written=NOW - 31 * DAY)
    formation(murmur_home, recent, ended, written=NOW - 20 * DAY)
    kept = formation(murmur_home, touched, ended, written=NOW - 50 * DAY)
    trace = kept / "coder" / ".murmur" / "ses_1" / "trace.jsonl"
    os.utime(trace, (NOW - DAY, NOW - DAY))  # a member wrote its trace until yesterday
    removed, said = applied(murmur_home, TraceRetain(max_age_seconds=30 * 86400))
    assert removed == [old]
    assert said == [f"[murmur-tui] retention: removed formation {old} "
                    "(older than max_age 30d)"]
    assert left(murmur_home) == sorted([recent, touched])


def test_a_live_launcher_keeps_its_formation(murmur_home: Path, ended: tuple[int, str],
                                              running: tuple[int, str]) -> None:
    alive, dead = frm(NOW - 9 * DAY), frm(NOW - 8 * DAY)
    formation(murmur_home, alive, running, written=NOW - 9 * DAY)
    formation(murmur_home, dead, ended, written=NOW - 8 * DAY)
    removed, _ = applied(murmur_home, TraceRetain(max_sessions=1, max_age_seconds=3600))
    assert removed == [dead]
    assert left(murmur_home) == [alive]


def test_a_pid_held_by_another_process_is_an_ended_launcher(
        murmur_home: Path, running: tuple[int, str]) -> None:
    reused = frm(NOW - DAY)  # the pid is alive, but held by a process that started later
    formation(murmur_home, reused, (running[0], str(int(running[1]) - 1)))
    removed, _ = applied(murmur_home, TraceRetain(max_sessions=1))
    assert removed == [reused]


def test_a_start_time_not_recorded_keeps_a_live_pid(murmur_home: Path,
                                                    running: tuple[int, str]) -> None:
    unknown = frm(NOW - DAY)
    formation(murmur_home, unknown, (running[0], None))
    assert applied(murmur_home, TraceRetain(max_sessions=1)) == ([], [])
    assert left(murmur_home) == [unknown]


def test_a_member_still_running_keeps_its_formation(murmur_home: Path,
                                                    ended: tuple[int, str]) -> None:
    winding_down = frm(NOW - DAY)  # its launcher died; a member has not ended yet
    folder = formation(murmur_home, winding_down, ended)
    write_record(murmur_home, RunningRecord.for_this_process(
        ids.session_id(), None, "team-coder", "1.0.0", folder / "coder",
        kept={"formation_id": winding_down}))
    assert applied(murmur_home, TraceRetain(max_sessions=1)) == ([], [])
    assert left(murmur_home) == [winding_down]


def test_what_is_not_a_formation_is_left_alone_and_not_followed(
        murmur_home: Path, tmp_path: Path, ended: tuple[int, str]) -> None:
    formations = murmur_home / "formations"
    target = formation(tmp_path / "elsewhere", frm(NOW - 9 * DAY), ended)
    link = frm(NOW - 8 * DAY)
    (formations / link).parent.mkdir(parents=True)
    (formations / link).symlink_to(target, target_is_directory=True)
    fifo = frm(NOW - 7 * DAY)
    os.mkfifo(formations / fifo)
    bare = frm(NOW - 6 * DAY)  # no formation.json: never auto-removed
    (formations / bare / "coder").mkdir(parents=True)
    garbled = formation(murmur_home, frm(NOW - 5 * DAY), ended)
    (garbled / "formation.json").write_text("{not json")
    listed = formation(murmur_home, frm(NOW - 4 * DAY), ended)
    (listed / "formation.json").write_text("[1, 2]")
    nameless = formation(murmur_home, "frm_notanid", ended)
    linked_json = formation(murmur_home, frm(NOW - 3 * DAY), ended)
    (linked_json / "formation.json").unlink()
    (linked_json / "formation.json").symlink_to(target / "formation.json")
    open_json = formation(murmur_home, frm(NOW - 2 * DAY), ended)
    (open_json / "formation.json").chmod(0o644)  # not the launcher's 0600: not trusted
    (formations / "notes.txt").write_text("mine")
    before = left(murmur_home)
    removed, said = applied(murmur_home, TraceRetain(max_sessions=1, max_age_seconds=1))
    assert (removed, said) == ([], [])
    assert left(murmur_home) == before
    assert (target / "formation.json").is_file()
    assert nameless.is_dir() and garbled.is_dir() and listed.is_dir()


def test_a_link_inside_a_formation_is_removed_not_followed(
        murmur_home: Path, tmp_path: Path, ended: tuple[int, str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    old = formation(murmur_home, frm(NOW - DAY), ended)
    (old / "coder" / "escape").symlink_to(outside, target_is_directory=True)
    removed, _ = applied(murmur_home, TraceRetain(max_sessions=1))
    assert removed == [old.name]
    assert not old.exists()
    assert (outside / "keep.txt").read_text() == "mine"


def test_no_retain_or_no_folder_removes_nothing(murmur_home: Path,
                                                ended: tuple[int, str]) -> None:
    assert applied(murmur_home, TraceRetain(max_sessions=1)) == ([], [])  # no formations/
    kept = frm(NOW - 90 * DAY)
    formation(murmur_home, kept, ended, written=NOW - 90 * DAY)
    assert retention.apply(murmur_home, None, print, now=NOW) == []
    assert applied(murmur_home, TraceRetain()) == ([], [])
    assert left(murmur_home) == [kept]


def test_a_directory_that_cannot_be_removed_is_said_and_the_rest_go_on(
        murmur_home: Path, ended: tuple[int, str]) -> None:
    stuck, old = frm(NOW - 2 * DAY), frm(NOW - 3 * DAY)
    folder = formation(murmur_home, stuck, ended)
    formation(murmur_home, old, ended)
    trace = folder / "coder" / ".murmur" / "ses_1" / "trace.jsonl"
    with unremovable(trace):
        removed, said = applied(murmur_home, TraceRetain(max_sessions=1))
    assert removed == [old]
    assert said[0].startswith(f"[murmur-tui] retention: could not remove formation {stuck}: ")
    assert said[0].endswith(("Permission denied", "Operation not permitted"))
    assert said[1] == f"[murmur-tui] retention: removed formation {old} (beyond max_sessions 1)"


@pytest.mark.parametrize(("seconds", "text"), [(30 * 86400, "30d"), (7200, "2h"), (90, "90s"),
                                               (5400, "90m"), (0, "0s")])
def test_durations_read_back_as_written(seconds: int, text: str) -> None:
    assert retention.duration(seconds) == text


def test_now_defaults_to_the_clock(murmur_home: Path, ended: tuple[int, str]) -> None:
    old = frm(time.time() - 3 * DAY)
    formation(murmur_home, old, ended, written=time.time() - 3 * DAY)
    said: list[str] = []
    assert retention.apply(murmur_home, TraceRetain(max_age_seconds=86400), said.append) == [old]
