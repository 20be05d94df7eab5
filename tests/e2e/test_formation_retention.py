"""`murmur-tui launch --roster` applies the entry's `trace.retain` to the formation directories
already in `$MURMUR_HOME/formations/` before its own formation starts — with real processes:
the launcher itself, a launcher still running (kept), and entries that are not formations
(left alone)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.capsules import write_capsule
from tests.responses import text_response
from tests.rosters import write_roster
from tests.unit.test_formation_retention import formation, frm, running
from tui.core.running.liveness import process_start_token

__all__ = ["running"]  # the fixture: a launcher still running

DAY = 86400.0
AUTH = "network:\n  authentication:\n    scheme: bearer\n"
SERVES = "exports:\n  peer_tasks:\n    accept: true\n"
RETAIN = "trace:\n  retain:\n    max_sessions: 2\n"
ROSTER = """roster_version: 1
members:
  - name: lead
    source: lead
    entry: true
  - name: worker
    source: worker
reachability:
  - from: lead
    to: [worker]
"""


def ended_launcher() -> tuple[int, str]:
    process = subprocess.Popen(["sleep", "30"])
    start = process_start_token(process.pid)
    assert start is not None
    process.kill()
    process.wait()
    return process.pid, start


def test_a_launch_removes_what_the_entrys_trace_retain_no_longer_keeps(
        tmp_path: Path, murmur_home: Path, running: tuple[int, str]) -> None:
    team = tmp_path / "team"
    write_capsule(team / "lead", [text_response("done")], name="team-lead", shell=(),
                  capabilities="  network:\n    allow: [localhost]\n", extra=AUTH + RETAIN)
    write_capsule(team / "worker", [text_response("worked")], name="team-worker", shell=(),
                  lifecycle={"task_acceptance": "queue", "after_task": "sleep"},
                  extra=AUTH + SERVES)
    write_roster(team, ROSTER)
    now = time.time()
    ended = ended_launcher()
    alive = frm(now - 9 * DAY)  # the oldest, but its launcher runs
    older, newer = frm(now - 5 * DAY), frm(now - 4 * DAY)
    formation(murmur_home, alive, running, written=now - 9 * DAY)
    formation(murmur_home, older, ended, written=now - 5 * DAY)
    formation(murmur_home, newer, ended, written=now - 4 * DAY)
    formations = murmur_home / "formations"
    linked = frm(now - 8 * DAY)
    (formations / linked).symlink_to(formations / older, target_is_directory=True)
    bare = frm(now - 7 * DAY)
    (formations / bare).mkdir()
    garbled = formation(murmur_home, frm(now - 6 * DAY), ended, written=now - 6 * DAY)
    (garbled / "formation.json").write_text("{not json")

    done = subprocess.run(
        [sys.executable, "-m", "tui", "launch", "--roster", str(team), "--headless", "--task",
         "go"], capture_output=True, text=True, timeout=180,
        env=dict(os.environ, MURMUR_HOME=str(murmur_home)))
    told = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, told
    assert "Traceback" not in done.stderr, told
    lines = done.stderr.splitlines()
    removed = f"[murmur-tui] retention: removed formation {older} (beyond max_sessions 2)"
    assert [line for line in lines if "retention" in line] == [removed], told
    started = re.search(r"^formation: (frm_[0-9a-f]{32})$", done.stderr, re.MULTILINE)
    assert started is not None, told
    assert lines.index(removed) < lines.index(started.group(0))  # before the new one starts
    assert sorted(os.listdir(formations)) == sorted(
        [alive, newer, linked, bare, garbled.name, started.group(1)])
    assert (formations / linked).is_symlink()  # left as it was, though what it named is gone
    info = json.loads((formations / started.group(1) / "formation.json").read_text())
    assert info["project_dir"] == str(team.resolve())
