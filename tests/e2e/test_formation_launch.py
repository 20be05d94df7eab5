"""`murmur-tui launch --roster` with real processes: a three-member formation (lead → coder →
reviewer, capsule folders named by `source:`, scripted drivers) launched headless `--json`.
The lead asks a question (the `ask` tool) and waits on stdin, so the formation stays up while
the test looks at it; an answer on stdin lets it end."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.capsules import FIXTURES, write_capsule
from tests.conftest import read_jsonl
from tests.responses import call_response, text_response
from tests.rosters import ROSTERS, write_roster
from tests.waits import block_until
from tui.core.a2a.card import parse_card

AUTH = "network:\n  authentication:\n    scheme: bearer\n"
REACH = "  network:\n    allow: [localhost]\n"  # call-member reaches a callee's door
SERVES = "exports:\n  peer_tasks:\n    accept: true\n"
SLEEP = {"task_acceptance": "queue", "after_task": "sleep", "queue_depth": 4}
ROSTER = """roster_version: 1
members:
  - name: lead
    source: lead
    entry: true
  - name: coder
    source: coder
  - name: reviewer
    source: reviewer
reachability:
  - from: lead
    to: [coder]
  - from: coder
    to: [reviewer]
"""


def team(folder: Path) -> Path:
    write_capsule(folder / "lead", [call_response("ask", {"q": "go on?"}, "q1"),
                                    text_response("the formation is done")],
                  name="team-lead", shell=(), tools={"ask": FIXTURES / "ask_tool.wasm"},
                  capabilities=REACH, extra=AUTH)
    for name in ("coder", "reviewer"):
        write_capsule(folder / name, [text_response(f"{name} did it")], name=f"team-{name}",
                      shell=(), lifecycle=SLEEP, capabilities=REACH if name == "coder" else "",
                      extra=AUTH + SERVES)
    write_roster(folder, ROSTER)
    return folder


class Launcher:
    """`murmur-tui launch --roster … --headless --json`, its stdout and stderr read as they
    come."""

    def __init__(self, roster: Path, home: Path, *more: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tui", "launch", "--roster", str(roster), "--headless",
             "--json", *more], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=dict(os.environ, MURMUR_HOME=str(home)))
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, into in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, into), daemon=True).start()

    @staticmethod
    def _read(stream: Any, into: list[str]) -> None:
        for line in iter(stream.readline, b""):
            into.append(line.decode("utf-8", "replace").rstrip("\n"))

    def told(self) -> str:
        return "stdout:\n" + "\n".join(self.out[-20:]) + "\nstderr:\n" + "\n".join(self.err[-40:])

    def formation(self) -> dict[str, Any]:
        block_until(lambda: self.out or self.process.poll() is not None, what=self.told)
        assert self.out, self.told()
        return dict(json.loads(self.out[0]))

    def asked(self) -> None:
        """Wait until the lead asks its question (it waits on stdin)."""
        block_until(lambda: any('"InputRequested"' in line for line in self.out),
                    what=self.told)

    def answer(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.write(b"yes\n")
        self.process.stdin.close()
        return self.process.wait(120)


@pytest.fixture
def launched(tmp_path: Path, murmur_home: Path) -> Iterator[Launcher]:
    launcher = Launcher(team(tmp_path / "team"), murmur_home, "--task", "go")
    yield launcher
    if launcher.process.poll() is None:
        launcher.process.kill()
        launcher.process.wait()


def gone(pid: int) -> bool:
    """The process ended (a zombie nobody reaped yet counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def group_empty(group: int) -> bool:
    """No live process is left in the process group `group`."""
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] not in ("Z", "X"):
            return False
    return True


def record(home: Path, session_id: str) -> dict[str, Any]:
    return dict(json.loads((home / "running" / f"{session_id}.json").read_text()))


def extended_card(peer: dict[str, Any], token: str) -> Any:
    """The member's door's extended card (the public one of an authenticated door names no
    session), read with the operator's token from its running record."""
    reply = httpx.post(peer["url"] + "/", headers={"A2A-Version": "1.0",
                                                    "Authorization": f"Bearer {token}"},
                       json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"},
                       timeout=30, trust_env=False)
    return parse_card(reply.json()["result"], peer["url"])


def send_task(peer: dict[str, Any], token: str, text: str) -> None:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}
    reply = httpx.post(peer["url"] + "/", headers={"A2A-Version": "1.0",
                                                    "Authorization": f"Bearer {token}"},
                       json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                             "params": {"message": message}}, timeout=30, trust_env=False)
    assert "result" in reply.json(), reply.text


def trace_of(peer: dict[str, Any]) -> Path:
    """The member's trace: its one session's, under its directory (not there before its
    first task starts)."""
    return Path(str(peer["workdir"])) / ".murmur" / str(peer["session_id"]) / "trace.jsonl"


def event_types(trace: Path) -> list[str]:
    return [line["event_type"] for line in read_jsonl(trace)] if trace.exists() else []


def test_a_three_member_formation_starts_every_door_and_ends_every_member(
        launched: Launcher, murmur_home: Path, tmp_path: Path) -> None:
    line = launched.formation()
    assert set(line) == {"entry", "formation_id", "peers"}
    assert line["entry"] == "lead"
    assert [peer["name"] for peer in line["peers"]] == ["coder", "reviewer"]
    frm = line["formation_id"]
    folder = murmur_home / "formations" / frm
    for peer in line["peers"]:
        assert set(peer) == {"name", "pid", "session_id", "url", "workdir"}
        assert peer["url"].startswith("http://127.0.0.1:")
        assert peer["workdir"] == str(folder / peer["name"])
        assert stat.S_IMODE(os.stat(peer["workdir"]).st_mode) == 0o700
        kept = record(murmur_home, peer["session_id"])
        assert kept["pid"] == peer["pid"]
        assert (kept["formation_id"], kept["formation_member"]) == (frm, peer["name"])
        assert kept["formation_entry"] is False and kept["formation_lifeline"] is True
        assert kept["formation_launcher"]["pid"] == launched.process.pid
        assert extended_card(peer, kept["door_token"]).session_id == peer["session_id"]
        assert os.getpgid(peer["pid"]) == peer["pid"]  # its own process group
    assert stat.S_IMODE(os.stat(folder / "formation.json").st_mode) == 0o600
    facts = json.loads((folder / "formation.json").read_text())
    assert facts["project_dir"] == str((tmp_path / "team").resolve())
    assert facts["launcher_pid"] == launched.process.pid
    assert "mft1." not in "\n".join(launched.out + launched.err)
    launched.asked()
    # the entry's readiness line follows the formation line (as `mur run --roster`'s), then its
    # own events
    ready = json.loads(launched.out[1])
    started = json.loads(launched.out[2])
    assert (ready["name"], ready["session_id"]) == ("team-lead", started["session_id"])
    assert started["event"] == "SessionStarted"
    assert (started["formation_id"], started["formation_member"]) == (frm, "lead")
    assert started["formation_callees"] == ["coder"]
    assert started["workdir"] == str((tmp_path / "team").resolve())
    entry_record = record(murmur_home, started["session_id"])
    assert (entry_record["formation_id"], entry_record["formation_member"]) == (frm, "lead")
    assert entry_record["formation_entry"] is True
    assert entry_record["formation_launcher"]["pid"] == launched.process.pid
    coder = line["peers"][0]
    send_task(coder, record(murmur_home, coder["session_id"])["door_token"], "code it")
    block_until(lambda: "task_end" in event_types(trace_of(coder)), what=launched.told)
    assert any(text.startswith("[coder] ") for text in launched.err)

    assert launched.answer() == 0, launched.told()
    for peer in line["peers"]:
        assert gone(peer["pid"]), peer
    coder_trace = read_jsonl(trace_of(coder))
    assert coder_trace[0]["formation_id"] == frm
    assert coder_trace[0]["formation_member"] == "coder"
    assert coder_trace[0]["formation_callees"] == ["reviewer"]
    ended = [entry for entry in coder_trace if entry["event_type"] == "formation_ended"]
    assert len(ended) == 1 and ended[0]["formation_id"] == frm
    assert coder_trace[-1]["event_type"] == "session_end"
    assert coder_trace[-1]["exit_status"] == "formation_ended"
    lead_trace = next((tmp_path / "team" / ".murmur").glob("ses_*/trace.jsonl"))
    assert read_jsonl(lead_trace)[0]["formation_member"] == "lead"


def test_a_sigkilled_launcher_ends_every_member(launched: Launcher, murmur_home: Path) -> None:
    line = launched.formation()
    launched.asked()
    coder = line["peers"][0]
    send_task(coder, record(murmur_home, coder["session_id"])["door_token"], "code it")
    block_until(lambda: "task_end" in event_types(trace_of(coder)), what=launched.told)

    launched.process.send_signal(signal.SIGKILL)
    launched.process.wait()
    pids: list[int] = [peer["pid"] for peer in line["peers"]]
    # within the 20 s a member takes at most to wind down
    block_until(lambda: all(gone(pid) for pid in pids), within=25)
    block_until(lambda: "formation_ended" in event_types(trace_of(coder)))
    last = read_jsonl(trace_of(coder))[-1]
    assert (last["event_type"], last["exit_status"]) == ("session_end", "formation_ended")
    for peer in line["peers"]:  # each member took its record with it (the entry's, in the
        # SIGKILLed launcher, is left for `ps` to prune)
        assert not (murmur_home / "running" / f"{peer['session_id']}.json").exists()
        assert group_empty(peer["pid"]), peer  # nothing of the member's is left running


def test_a_member_killed_on_its_own_is_reported_gone_and_the_launcher_ends_cleanly(
        launched: Launcher) -> None:
    line = launched.formation()
    launched.asked()
    coder, reviewer = line["peers"]
    os.kill(coder["pid"], signal.SIGKILL)
    # the line is whole, but the entry's "> " prompt for its question may stand before it
    block_until(lambda: any(text.endswith("[coder] gone (signal SIGKILL)")
                            for text in launched.err), what=launched.told)
    assert launched.answer() == 0, launched.told()
    assert gone(reviewer["pid"])
    assert not any("[reviewer] gone" in text for text in launched.err)


def test_a_launcher_sigterm_ends_the_entry_and_exits_143(launched: Launcher) -> None:
    line = launched.formation()
    launched.asked()
    launched.process.send_signal(signal.SIGTERM)
    assert launched.process.wait(120) == 143, launched.told()
    for peer in line["peers"]:
        assert gone(peer["pid"])


def test_a_refused_roster_exits_1_with_murmurs_code_and_starts_nothing(
        murmur_home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tui", "launch", "--roster",
         str(ROSTERS / "e-ros-005-callee-refuses-peers"), "--headless"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "[E-ROS-005]" in done.stderr and "does not serve peers" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (murmur_home / "formations").exists()


def test_a_formation_member_cannot_launch_a_roster(murmur_home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tui", "launch", "--roster", str(ROSTERS / "ok"), "--headless"],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, MURMUR_FORMATION_ID="frm_" + "0" * 32))
    assert done.returncode == 1
    assert "[E-RUN-046]" in done.stderr and "cannot launch another formation" in done.stderr
    assert not (murmur_home / "formations").exists()


def member_launch(capsule: Path, extra_env: dict[str, str], fds: tuple[int, ...] = ()
                  ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", "launch", str(capsule), "--headless", "--serve",
         "127.0.0.1:0", "--json"], capture_output=True, text=True, timeout=120,
        pass_fds=fds, env=dict(os.environ, **extra_env))


def test_a_member_seated_in_another_formation_refuses_to_start(tmp_path: Path) -> None:
    folder = team(tmp_path / "team")
    read, write = os.pipe()
    from tui.core.formation.seat import Seat

    os.write(write, Seat("frm_" + "2" * 32, "coder", False, "a2V5").first_line().encode())
    try:
        done = member_launch(folder / "coder", {"MURMUR_FORMATION_ID": "frm_" + "1" * 32,
                                                "MURMUR_FORMATION_CHANNEL": str(read)}, (read,))
    finally:
        os.close(read)
        os.close(write)
    assert done.returncode == 1, done.stderr
    assert "[E-RUN-046]" in done.stderr and "frm_" + "2" * 32 in done.stderr
    assert done.stdout == ""  # no door, no readiness line


def test_a_channel_without_a_formation_id_refuses_to_start(tmp_path: Path) -> None:
    folder = team(tmp_path / "team")
    done = member_launch(folder / "coder", {"MURMUR_FORMATION_CHANNEL": "3"})
    assert done.returncode == 1
    assert "MURMUR_FORMATION_CHANNEL is set without MURMUR_FORMATION_ID" in done.stderr
    assert done.stderr.rstrip().endswith("[E-RUN-046]")


def test_a_member_that_does_not_wind_down_is_sigkilled_with_its_group(
        tmp_path: Path, murmur_home: Path) -> None:
    from tui.core.formation.admission import Admitted, admit
    from tui.core.formation.launcher import launch

    admitted = admit(team(tmp_path / "team") / "roster.yaml", murmur_home)
    assert isinstance(admitted, Admitted)
    said: list[str] = []
    formation = launch(admitted, murmur_home, said.append)
    try:
        coder = formation.peers[0]
        os.kill(coder.process.pid, signal.SIGSTOP)  # it cannot read its lifeline's end
    finally:
        formation.end(kill_after=0.5)
    assert coder.process.returncode == -signal.SIGKILL
    assert formation.peers[1].process.returncode == 143  # it wound down by itself
    assert not any(" gone (" in line for line in said)  # the launcher ended them: not "gone"
    assert group_empty(coder.process.pid)


def test_a_member_that_cannot_start_refuses_the_formation_with_e_run_045(
        tmp_path: Path, murmur_home: Path) -> None:
    folder = team(tmp_path / "team")
    # coder's manifest names a script that is not there: its launch is refused, no door
    (folder / "coder" / "script.json").unlink()
    launcher = Launcher(folder, murmur_home, "--task", "go")
    assert launcher.process.wait(120) == 1, launcher.told()
    block_until(lambda: any("[E-RUN-045]" in text for text in launcher.err), what=launcher.told)
    refusal = next(text for text in launcher.err if "[E-RUN-045]" in text)
    assert "member coder ended before its door was ready (exit 2)" in refusal
    assert any(text.startswith("[coder] ") for text in launcher.err)  # why, in its own words
    assert launcher.out == []  # no formation line: nothing ran
    reviewer_pids = [int(json.loads(text.removeprefix("[reviewer] "))["pid"])
                     for text in launcher.err if text.startswith('[reviewer] {"auth"')]
    assert all(gone(pid) for pid in reviewer_pids)


def test_roster_takes_no_capsule(tmp_path: Path) -> None:
    folder = team(tmp_path / "team")
    done = subprocess.run(
        [sys.executable, "-m", "tui", "launch", str(folder / "lead"), "--roster", str(folder),
         "--headless"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "give a capsule to a single capsule's launch, not with --roster" in done.stderr
