"""`murmur-tui cancel` and `murmur-tui stop` as scripts run them: against a real served session
(`launch --headless --serve`, tests/served.py) they end its task and the session; against a
session whose process is gone or whose door does not answer they say so, with Murmur's codes
and exit status (spec §4.2 the three layers, §6.1 addresses, §6.4 `mur cancel` / `mur stop`;
running records as Murmur writes them, §4.1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import CapsuleFactory, run_cli
from tests.door_fake import FakeDoor, Task, serving
from tests.fleet.test_ps import record, trace
from tests.responses import call_response, text_response
from tests.served import SLEEP, Served, serve
from tests.waits import block_until
from tui.commands.fleet import resolve
from tui.core import ids
from tui.core.running.liveness import process_start_token
from tui.core.running.records import read_records

SLOW = call_response("bash", {"command": "sleep 30"})


def started(workdir: Path, task: str) -> bool:
    trace = workdir / "trace.jsonl"
    return trace.exists() and any(
        json.loads(line).get("event_type") == "task_start" and task in line
        for line in trace.read_text().splitlines() if line.strip())


def test_cancel_ends_the_running_task_and_stop_ends_the_session(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([SLOW, SLOW, text_response("done")], extra=SLEEP))
    served.append(door)
    workdir = next(found.record.workdir for found in read_records(murmur_home)
                   if found.record is not None and found.record.session_id == door.session_id)
    assert resolve(murmur_home, "@1", None)[0] == door.session_id  # attach takes @N too

    first = door.send("go")["id"]
    block_until(lambda: started(workdir, first), what="the first task's task_start")
    canceled = run_cli("cancel", door.session_id[-6:])  # no TASK: the one that runs
    assert canceled.returncode == 0, canceled.stderr
    assert canceled.stdout.splitlines()[:2] == [f"task:    {first}", "state:   canceled"]
    door.until(first, "TASK_STATE_CANCELED")
    again = run_cli("cancel", door.session_id, first)  # ended: its state, nothing changes
    assert again.returncode == 0 and again.stdout.startswith(f"task:    {first}\n")
    unknown = run_cli("cancel", "@1", "tsk_nope")
    assert unknown.returncode == 1
    assert f"{door.session_id} holds no task tsk_nope [E-RUN-022]" in unknown.stderr

    second = door.send("again")["id"]
    block_until(lambda: started(workdir, second), what="the second task's task_start")
    stopped = run_cli("stop", "@1", "--timeout", "30")
    assert stopped.returncode == 0, stopped.stderr
    out = stopped.stdout.splitlines()
    assert out[:2] == [f"stopped: {door.session_id}", "capsule: test-capsule@1.0.0"]
    assert out[2].startswith("signal:  ")
    assert f"canceled: {second}" in out
    assert door.process.wait(60) is not None  # the session's process has ended
    block_until(lambda: not (murmur_home / "running" / f"{door.session_id}.json").exists(),
                what="the running record removed")
    gone = run_cli("stop", door.session_id[-6:])
    assert gone.returncode == 1 and "[E-RUN-022]" in gone.stderr


def test_a_stopped_or_unreachable_session_is_said_so_with_a_non_zero_exit(
        murmur_home: Path, tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        start = process_start_token(sleeper.pid)
        quiet = ids.session_id()  # its process runs; nothing answers at its door
        record(murmur_home, quiet, "127.0.0.1:1", tmp_path / "quiet", pid=sleeper.pid,
               process_start=start)
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        child.wait()
        dead = ids.session_id()  # the newest record: its process is gone
        record(murmur_home, dead, "127.0.0.1:1", tmp_path / "dead", pid=child.pid)

        for command in (("cancel", dead[-8:], "tsk_x"), ("stop", dead)):
            result = run_cli(*command)
            assert result.returncode == 1, result
            assert f"{dead} has stopped: no process holds pid {child.pid} [E-RUN-022]" in \
                result.stderr and result.stdout == ""
        # @1 counts only records whose process holds its pid: the quiet one
        result = run_cli("cancel", "@1", "tsk_x")
        assert result.returncode == 1 and f"{quiet} cannot be reached: " in result.stderr
        assert "[E-RUN-023]" in result.stderr
        for address in ("./x", "ab", "f00d"):
            refused = run_cli("cancel", address)
            assert refused.returncode == 1 and "[E-RUN-022]" in refused.stderr
            assert "Traceback" not in refused.stderr

        stopped = run_cli("stop", quiet[-5:], "--timeout", "30")
        assert stopped.returncode == 0, stopped.stderr
        out = stopped.stdout.splitlines()
        assert out[:3] == [f"stopped: {quiet}", "capsule: demo@0.1.0", "signal:  SIGTERM"]
        assert out[3].startswith("residue: unknown — the capsule could not be asked: ")
        assert sleeper.wait(30) == -15  # SIGTERM ended it
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


class MurmurDoor(FakeDoor):
    """The fake door answering `CancelTask` and `session/stop` in Murmur v0.11's shapes (spec
    §5.4): a canceled task carries a `residue` artifact, one data part per item still running;
    `session/stop` answers `{session_id, canceled, residue}`."""

    RESIDUE = [{"kind": "detached_shell", "work_id": "wrk_01", "binary": "sleep",
                "command": "sleep 30", "started_at_ms": 1},
               {"kind": "delegation", "delegation_id": "dlg_01", "capsule": "helper",
                "version": "0.2.0"}]

    def task_body(self, task: Task) -> dict[str, Any]:
        body = super().task_body(task)
        if task.state == "canceled":
            body["artifacts"] = [{"artifactId": "residue", "name": "residue", "parts": [
                {"data": item, "mediaType": "application/json"} for item in self.RESIDUE[:1]]}]
        return body


def test_murmurs_answers_are_read_and_a_process_that_ignores_sigterm_is_killed(
        murmur_home: Path, tmp_path: Path) -> None:
    stubborn = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
         "signal.SIG_IGN); print('ready', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert stubborn.stdout is not None and stubborn.stdout.readline() == "ready\n"
        session, task = ids.session_id(), ids.task_id()
        with serving(MurmurDoor(session_id=session)) as door:
            door.working(task)
            trace(tmp_path / session, session,
                  {"event_type": "task_start", "task_id": task, "source": "a2a"})
            record(murmur_home, session, door.address, tmp_path / session, pid=stubborn.pid,
                   process_start=process_start_token(stubborn.pid))
            canceled = run_cli("cancel", session[-6:])
            assert canceled.returncode == 0, canceled.stderr
            assert canceled.stdout.splitlines() == [f"task:    {task}", "state:   canceled",
                                                    "running: wrk_01  detached shell  sleep 30"]

            door.stop_answer = {"session_id": session, "canceled": [task],
                                "residue": MurmurDoor.RESIDUE}
            stopped = run_cli("stop", session, "--timeout", "0.5")
            assert stopped.returncode == 0, stopped.stderr
            assert stopped.stdout.splitlines() == [
                f"stopped: {session}", "capsule: demo@0.1.0", "signal:  SIGTERM then SIGKILL",
                f"canceled: {task}", "running: wrk_01  detached shell  sleep 30",
                "running: dlg_01  delegation  helper@0.2.0",
                f"unended: {task}  the trace does not record how this task ended"]
            assert door.stopped
        assert stubborn.wait(30) == -9  # SIGTERM was ignored; SIGKILL ended it
    finally:
        if stubborn.poll() is None:
            stubborn.kill()
            stubborn.wait()
