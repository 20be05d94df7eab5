"""`murmur-tui ps` through the real CLI (a subprocess), against records of real processes and
real doors on loopback, with real trace files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.door_fake import FakeDoor, Task, serving, silent_port
from tui.core import ids
from tui.core.running import records as running
from tui.core.running.records import RunningRecord


def trace(workdir: Path, session: str, *lines: dict[str, Any]) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    body = [{"event_type": "session_start", "session_id": session, "timestamp": 1,
             "capsule_name": "demo", "capsule_version": "0.1.0", "model": "claude-haiku-4-5"},
            *lines]
    (workdir / "trace.jsonl").write_text("".join(json.dumps(line) + "\n" for line in body))


def record(home: Path, session: str, url: str, workdir: Path, **changes: Any) -> RunningRecord:
    made = RunningRecord.for_this_process(session, url, "demo", "0.1.0", workdir)
    made = RunningRecord(**{**made.__dict__, **changes})
    running.write_record(home, made)
    return made


class Fleet:
    """Four sessions: one waiting for an answer (newest door, with a token), one idle, one
    working behind a 0.3 door with no local trace, one whose door is silent; and a stale one
    (its process is gone) and a broken file."""

    def __init__(self, home: Path, tmp: Path, stack: ExitStack) -> None:
        self.asking, self.idle, self.busy, self.quiet, self.stale = (
            ids.session_id() for _ in range(5))
        task = ids.task_id()
        door = stack.enter_context(serving(FakeDoor(session_id=self.asking,
                                                    token="tok-operator-4471")))
        door.tasks[task] = Task(task, "ctx_1", "input-required", "Which env?\nstaging or prod",
                                text="Deploy the site\nfast")
        trace(tmp / "asking", self.asking,
              {"event_type": "task_start", "task_id": task, "source": "a2a"})
        record(home, self.asking, door.url, tmp / "asking", door_token="tok-operator-4471")
        self.asking_door = door

        idle_door = stack.enter_context(serving(FakeDoor(session_id=self.idle)))
        trace(tmp / "idle", self.idle, {"event_type": "task_start", "task_id": "tsk_a"},
              {"event_type": "task_end", "task_id": "tsk_a", "exit_status": "ok"})
        record(home, self.idle, idle_door.url, tmp / "idle")

        busy_door = stack.enter_context(serving(FakeDoor("B", session_id=self.busy)))
        busy_door.working("tsk_b", "Count stars", context="ctx_b")  # `tasks/get` names it
        record(home, self.busy, busy_door.url, tmp / "nowhere")

        record(home, self.quiet, f"127.0.0.1:{silent_port()}", tmp / "nowhere")

        child = subprocess.Popen([sys.executable, "-c", "pass"])
        child.wait()
        record(home, self.stale, "127.0.0.1:1", tmp / "nowhere", pid=child.pid)
        self.stale_pid = child.pid

        self.broken = home / "running" / "ses_broken.json"
        self.broken.write_text("{not json")
        self.broken.chmod(0o600)


@pytest.fixture
def fleet(murmur_home: Path, tmp_path: Path) -> Iterator[Fleet]:
    with ExitStack() as stack:
        yield Fleet(murmur_home, tmp_path, stack)


def test_ps_lists_what_each_session_is_doing(fleet: Fleet) -> None:
    result = run_cli("ps")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["SESSION", "CAPSULE", "STATUS", "DETACHED", "UPTIME", "URL",
                                "STATE", "MODEL", "TASK"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == {fleet.asking, fleet.idle, fleet.busy, fleet.quiet}
    assert "running" in rows[fleet.asking] and "needs you" in rows[fleet.asking]
    assert "claude-haiku-4-5" in rows[fleet.asking] and "? Which env?" in rows[fleet.asking]
    assert "staging or prod" not in result.stdout  # the first line only
    assert "idle" in rows[fleet.idle] and "demo@0.1.0" in rows[fleet.idle]
    assert "working" in rows[fleet.busy] and "Count stars" in rows[fleet.busy]
    assert "unreachable" in rows[fleet.quiet] and "unknown" in rows[fleet.quiet]
    assert f"pruned: {fleet.stale} — no process holds pid {fleet.stale_pid}" in result.stderr
    assert "ses_broken.json: is not JSON" in result.stderr
    assert "tok-operator-4471" not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    asked = [req for req in fleet.asking_door.requests if req.method == "POST"]
    assert {req.body["method"] for req in asked} == {"GetExtendedAgentCard", "GetTask"}


def test_ps_json_is_one_array_and_all_adds_the_stale_record(fleet: Fleet) -> None:
    result = run_cli("ps", "--json", "--all")
    assert result.returncode == 0, result.stderr
    rows = {row["session_id"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {fleet.asking, fleet.idle, fleet.busy, fleet.quiet, fleet.stale}
    asking = rows[fleet.asking]
    assert (asking["status"], asking["state"], asking["door"]) == ("running", "needs you", "1.0")
    assert asking["question"] == "Which env?\nstaging or prod"
    assert asking["task"] == "Deploy the site\nfast"
    assert asking["model"] == "claude-haiku-4-5" and asking["capsule"] == "demo@0.1.0"
    assert rows[fleet.busy]["door"] == "0.3" and rows[fleet.busy]["state"] == "working"
    assert rows[fleet.quiet]["status"] == "unreachable"
    assert rows[fleet.stale]["status"] == "gone"
    assert rows[fleet.stale]["reason"] == f"no process holds pid {fleet.stale_pid}"
    assert "door_token" not in result.stdout and "tok-operator-4471" not in result.stdout
    assert "pruned:" not in result.stderr  # --all shows them and keeps them


def test_prune_removes_only_records_whose_process_is_gone(fleet: Fleet, murmur_home: Path
                                                         ) -> None:
    result = run_cli("ps", "--prune")
    assert result.returncode == 0, result.stderr
    assert f"pruned: {fleet.stale} — no process holds pid {fleet.stale_pid}" in result.stderr
    left = sorted(path.name for path in (murmur_home / "running").iterdir())
    assert f"{fleet.stale}.json" not in left
    for kept in (fleet.asking, fleet.idle, fleet.busy, fleet.quiet):  # unreachable stays too
        assert f"{kept}.json" in left
    assert fleet.broken.read_text() == "{not json"  # a file that is not a record is kept


def test_no_records_is_one_line() -> None:
    result = run_cli("ps")
    assert (result.returncode, result.stdout, result.stderr) == (0, "no running capsules\n", "")
    assert json.loads(run_cli("ps", "--json").stdout) == []
