"""Formations in `murmur-tui ps` and `murmur-tui stop frm_…`, through the real CLI: records as
Murmur v0.11 writes them for formation members (`formation_id`, `formation_member`,
`formation_entry`, `formation_launcher`; spec §4.1, §7.6), real processes, real doors on
loopback and real session folders; `mur ps`'s FORMATION column, grouping and summary lines
(§6.3), `stop` of a whole formation (§6.4, §7.4)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CapsuleFactory, run_cli
from tests.door_fake import FakeDoor, serving, silent_port
from tests.fleet.test_ps import record, trace
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import block_until
from tui.core import ids
from tui.core.running.liveness import process_start_token
from tui.core.running.records import RunningRecord, read_records, write_record

FRM_A = "frm_" + "a" * 32
FRM_B = "frm_" + "b" * 32
UPTIME = re.compile(r"  \d\d:\d\d:\d\d   ")


def member(frm: str, name: str, entry: bool = False) -> dict[str, Any]:
    return {"kept": {"formation_id": frm, "formation_member": name, "formation_entry": entry}}


class Formations:
    """Formation A: its entry and a coder running, a reviewer whose process is gone (pruned),
    one member session that ended and one with no record, both under
    `$MURMUR_HOME/formations/<A>/`. Formation B: one member running, one whose door is silent.
    A plain session between them. Created A1, plain, B1, A2, B2: newest first B2."""

    def __init__(self, home: Path, tmp: Path, stack: ExitStack) -> None:
        def door(session: str) -> str:
            return stack.enter_context(serving(FakeDoor(session_id=session))).url

        project = tmp / "project" / ".murmur"
        self.a1, self.plain, self.b1, self.a2, self.b2, self.pruned = (
            ids.session_id() for _ in range(6))
        record(home, self.a1, door(self.a1), project / self.a1, **member(FRM_A, "lead", True))
        record(home, self.plain, door(self.plain), tmp / "plain" / ".murmur" / self.plain)
        record(home, self.b1, door(self.b1), tmp / "b" / ".murmur" / self.b1,
               **member(FRM_B, "lead", True))
        peers = home / "formations" / FRM_A
        record(home, self.a2, door(self.a2), peers / "coder" / ".murmur" / self.a2,
               **member(FRM_A, "coder"))
        record(home, self.b2, f"127.0.0.1:{silent_port()}", tmp / "b2" / ".murmur" / self.b2,
               **member(FRM_B, "coder"))
        for folder in (tmp / "b" / ".murmur" / self.b1, tmp / "b2" / ".murmur" / self.b2):
            folder.mkdir(parents=True)  # B's session roots: only its own members' folders
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        child.wait()
        record(home, self.pruned, "127.0.0.1:1", peers / "reviewer" / ".murmur" / self.pruned,
               pid=child.pid, **member(FRM_A, "reviewer"))
        self.pruned_pid = child.pid
        ended, lost = ids.session_id(), ids.session_id()
        trace(peers / "reviewer" / ".murmur" / ended, ended,
              {"event_type": "session_end", "exit_status": "ok"})
        trace(peers / "tester" / ".murmur" / lost, lost)
        # a session of another formation in the entry's project: not A's
        other = ids.session_id()
        trace(project / other, other)
        lines = (project / other / "trace.jsonl").read_text().splitlines()
        first = {**json.loads(lines[0]), "formation_id": "frm_" + "c" * 32}
        (project / other / "trace.jsonl").write_text(json.dumps(first) + "\n")


@pytest.fixture
def formations(murmur_home: Path, tmp_path: Path) -> Iterator[Formations]:
    with ExitStack() as stack:
        yield Formations(murmur_home, tmp_path, stack)


def test_ps_groups_formations_and_sums_each_up(formations: Formations, murmur_home: Path
                                              ) -> None:
    result = run_cli("ps")
    assert result.returncode == 0, result.stderr
    lines = [UPTIME.sub("  UPTIME     ", line) for line in result.stdout.splitlines()]
    held = {found.record.session_id: found.record
            for found in read_records(murmur_home) if found.record is not None}
    urls = {session: held[session].url or "-" for session in held}
    width = max(len(url) for url in urls.values())
    assert lines[0] == (f"{'SESSION':<36}  {'CAPSULE':<24}  {'STATUS':<12}  {'DETACHED':<8}  "
                        f"{'UPTIME':<9}  {'FORMATION':<36}  {'URL':<{width}}  {'STATE':<9}  "
                        f"{'MODEL':<5}  TASK")
    f = formations

    def line(session: str, frm: str | None, status: str = "running") -> str:
        detached = "yes" if held[session].outlives_launcher else "no"
        return (f"{session:<36}  {'demo@0.1.0':<24}  {status:<12}  {detached:<8}  UPTIME     "
                f"{frm or '-':<36}  {urls[session]:<{width}}  {'unknown':<9}  -      -"
                ).rstrip()

    assert lines[1:] == [
        line(f.b2, FRM_B, "unreachable"), line(f.b1, FRM_B),  # B: its newest member first
        line(f.a2, FRM_A), line(f.a1, FRM_A),
        line(f.plain, None),
        "",
        f"formation {FRM_B}: 2 listed (1 running, 1 unreachable); no other member found "
        "in 2 session root(s)",
        f"formation {FRM_A}: 2 listed (2 running, 0 unreachable), 1 pruned now; not listed: "
        "1 ended, 1 with no record",
    ]
    assert result.stderr == (f"pruned: {f.pruned} — no process holds pid {f.pruned_pid} "
                             f"(formation {FRM_A})\n")


def test_ps_json_carries_the_formation_fields(formations: Formations) -> None:
    rows = json.loads(run_cli("ps", "--json").stdout)
    assert [item["session_id"] for item in rows] == [
        formations.b2, formations.b1, formations.a2, formations.a1, formations.plain]
    by_id = {item["session_id"]: item for item in rows}
    assert {key: by_id[formations.a1][key] for key in
            ("formation_id", "formation_member", "formation_entry")} == {
        "formation_id": FRM_A, "formation_member": "lead", "formation_entry": True}
    assert by_id[formations.plain]["formation_id"] is None
    assert by_id[formations.plain]["formation_member"] is None


def test_no_formation_no_column(murmur_home: Path, tmp_path: Path) -> None:
    with serving(FakeDoor(session_id=(session := ids.session_id()))) as door:
        record(murmur_home, session, door.url, tmp_path / session)
        result = run_cli("ps")
    assert result.returncode == 0, result.stderr
    assert "FORMATION" not in result.stdout and "formation" not in result.stdout
    assert len(result.stdout.splitlines()) == 2


def join(home: Path, door: Served, frm: str, name: str, entry: bool = False,
         launcher: subprocess.Popen[bytes] | None = None) -> None:
    """Make a served session a member of `frm` as Murmur's launcher would have recorded it."""
    found = next(item.record for item in read_records(home)
                 if item.record is not None and item.record.session_id == door.session_id)
    kept: dict[str, Any] = {**found.kept, **member(frm, name, entry)["kept"]}
    if launcher is not None:
        kept["formation_launcher"] = {"pid": launcher.pid,
                                      "process_start": process_start_token(launcher.pid)}
    write_record(home, RunningRecord(**{**found.__dict__, "kept": kept}))


def test_stop_a_formation_ends_every_member_and_its_launcher(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    entry, peer, alone = (serve(make_capsule([text_response("done")], folder=name, extra=SLEEP))
                          for name in ("lead", "coder", "alone"))
    served += [entry, peer, alone]
    launcher = subprocess.Popen(["sleep", "120"])
    try:
        join(murmur_home, entry, FRM_A, "lead", True, launcher)
        join(murmur_home, peer, FRM_A, "coder", launcher=launcher)
        stopped = run_cli("stop", FRM_A, "--timeout", "30")
        assert stopped.returncode == 0, stopped.stderr
        out = stopped.stdout.splitlines()
        assert out[0] == f"formation: {FRM_A}"
        assert out[1:3] == ["member:  lead (entry)", f"stopped: {entry.session_id}"]
        coder = out.index("member:  coder")
        assert out[coder + 1] == f"stopped: {peer.session_id}" and coder > 3
        assert out[-1] == f"launcher: pid {launcher.pid}  SIGTERM"
        assert entry.process.wait(60) is not None and peer.process.wait(60) is not None
        assert launcher.wait(30) == -15
        assert alone.process.poll() is None  # not a member: still running
        block_until(lambda: {found.record.session_id for found in read_records(murmur_home)
                             if found.record is not None} == {alone.session_id},
                    what="the members' records removed")
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    again = run_cli("stop", FRM_A)
    assert again.returncode == 1
    assert again.stderr == (f"murmur-tui: error: formation {FRM_A} not found: no running "
                            f"record in {murmur_home / 'running'} names it [E-RUN-022]\n")
    unknown = run_cli("stop", FRM_B)
    assert unknown.returncode == 1 and "[E-RUN-022]" in unknown.stderr
