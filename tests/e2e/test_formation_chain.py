"""A whole formation end to end, with real processes: lead → coder → reviewer (capsule folders
named by `source:`, scripted drivers) launched by `murmur-tui launch --roster --headless
--json`. lead calls coder with `call-member`, ends its turn and answers with coder's answer;
coder does the same with reviewer; reviewer's `ask` tool asks the person, and reviewer answers
with what it was told. Its question is answered from the real fleet screen under Pilot and the
answer travels back up; formation tokens are refused at a live member's door; a member and the
launcher are SIGKILLed mid-chain."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.capsules import FIXTURES, write_capsule
from tests.conftest import read_jsonl, run_cli
from tests.e2e.test_formation_launch import (
    AUTH,
    REACH,
    ROSTER,
    SERVES,
    SLEEP,
    Launcher,
    gone,
    group_empty,
    trace_of,
)
from tests.fleet.test_fleet_formations import on_screen
from tests.fleet.test_fleet_screen import type_in
from tests.responses import call_response, text_response
from tests.rosters import write_roster
from tests.waits import block_until, wait_until
from tui.app.fleet.app import FleetApp
from tui.core.formation.seat import Seat

QUESTION = "which branch should the fix go to?"
TYPED = "main, not the release branch"


def calls(member: str, task: str, call_id: str) -> list[dict[str, Any]]:
    """A member's script: call `member`, end the turn, answer with what it said."""
    return [call_response("call-member", {"member": member, "task": task}, call_id),
            text_response(f"{member} has it; I answer when it does."),
            text_response(f"{member} said: {{{{member:{member}}}}}")]


def chain(folder: Path) -> Path:
    write_capsule(folder / "lead", calls("coder", "fix the parser", "c1"), name="team-lead",
                  shell=(), capabilities=REACH, extra=AUTH)
    write_capsule(folder / "coder", calls("reviewer", "review the parser fix", "c2"),
                  name="team-coder", shell=(), lifecycle=SLEEP, capabilities=REACH,
                  extra=AUTH + SERVES)
    write_capsule(folder / "reviewer", [call_response("ask", {"q": QUESTION}, "q1"),
                                        text_response("reviewer was told: {{tool:q1}}")],
                  name="team-reviewer", shell=(), lifecycle=SLEEP,
                  tools={"ask": FIXTURES / "ask_tool.wasm"}, extra=AUTH + SERVES)
    write_roster(folder, ROSTER)
    return folder


@pytest.fixture
def launched(tmp_path: Path, murmur_home: Path) -> Iterator[Launcher]:
    launcher = Launcher(chain(tmp_path / "team"), murmur_home, "--task", "ship the parser fix")
    yield launcher
    if launcher.process.poll() is None:
        launcher.process.kill()
        launcher.process.wait()
    for text in launcher.out:  # a member a failed test left running
        if text.startswith('{"entry"'):
            for peer in json.loads(text)["peers"]:
                if not gone(peer["pid"]):
                    os.killpg(peer["pid"], signal.SIGKILL)


def peers(line: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {peer["name"]: peer for peer in line["peers"]}


def lead_trace(tmp_path: Path) -> Path:
    return next((tmp_path / "team" / ".murmur").glob("ses_*/trace.jsonl"))


def asked(launcher: Launcher) -> None:
    """Wait until reviewer's tool has asked its question (it waits for its door)."""
    block_until(lambda: any(text.startswith('[reviewer] {"event": "InputRequested"')
                            for text in launcher.err), within=30, what=launcher.told)


def of(trace: Path, kind: str) -> list[dict[str, Any]]:
    return [line for line in read_jsonl(trace) if line["event_type"] == kind]


def result(launcher: Launcher) -> str:
    """The entry's answer: the result of its TaskEnded line."""
    ended = [json.loads(text) for text in launcher.out if '"TaskEnded"' in text]
    assert ended, launcher.told()
    return str(ended[-1].get("result"))


def member_rows(shown: list[str]) -> list[str]:
    """The opened formation's member rows: from the number, its label on."""
    return [text for text in shown if re.match(r"\d  [├└] ", text)]


def leaked(where: list[Path], texts: list[str], token: str = "mft1.") -> list[str]:
    """Every file under `where`, and `texts`, that holds `token`."""
    found = [f"output line {n}" for n, text in enumerate(texts) if token in text]
    for root in where:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink() and \
                    token.encode() in path.read_bytes():
                found.append(str(path))
    return found


def door(peer: dict[str, Any], token: str, method: str = "GetTask",
         params: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.post(peer["url"] + "/", headers={"A2A-Version": "1.0",
                                                   "Authorization": f"Bearer {token}"},
                      json={"jsonrpc": "2.0", "id": 1, "method": method,
                            "params": params or {"id": "tsk_nope"}},
                      timeout=30, trust_env=False)


async def test_a_question_deep_in_the_chain_is_answered_from_the_fleet_and_travels_back_up(
        launched: Launcher, murmur_home: Path, tmp_path: Path) -> None:
    line = launched.formation()
    frm = line["formation_id"]
    members = peers(line)
    asked(launched)
    app = FleetApp(murmur_home)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.fleet
        # one row under Needs you, naming the member that asks, deep in the chain
        await wait_until(pilot, lambda: len(on_screen(screen)) == 4 and
                         "reviewer asks" in on_screen(screen)[1],
                         within=30, what=lambda: on_screen(screen))
        shown = on_screen(screen)
        assert shown[0] == "   Needs you (1)"
        assert shown[1].startswith(f"   ▸ frm_…{frm[-7:]} team-lead      reviewer asks ")
        assert "3 members · ? " in shown[1]
        assert shown[2:] == ["   Working (0)", "   Done (0)"]
        # opened: lead, coder, reviewer; each caller waits on its callee; reviewer blocks
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(member_rows(on_screen(screen))) == 3 and
                         "⇢ coder" in member_rows(on_screen(screen))[0],
                         what=lambda: on_screen(screen))
        rows = member_rows(on_screen(screen))
        assert [text[3:17].rstrip() for text in rows] == ["├ lead", "├ coder", "└ reviewer"]
        assert re.match(r"1  ├ lead +team-lead +⇢ coder · \d:\d\d ", rows[0]), rows
        assert re.match(r"2  ├ coder +team-coder +⇢ reviewer · \d:\d\d ", rows[1]), rows
        assert re.match(r"3  └ reviewer +team-reviewer +◆ blocks · asks ", rows[2]), rows
        assert rows[2].endswith('? {"q":"which branch should the…')
        assert "◆" not in rows[0] + rows[1]
        # answered from the fleet: `a` on the formation's row answers the member that blocks
        assert screen.rows.highlighted == f"frm:{frm}"
        await pilot.press("a")
        assert screen.input.display
        assert str(screen.hint.render()) == (f"team-reviewer ({members['reviewer']['session_id']})"
                                             f' asks: {{"q":"{QUESTION}"}}')
        await type_in(pilot, TYPED)
        await wait_until(pilot, lambda: launched.process.poll() is not None, within=30,
                         what=launched.told)
    assert launched.process.wait() == 0, launched.told()
    # the answer travelled back up: reviewer → coder → lead
    assert result(launched) == f"coder said: reviewer said: reviewer was told: {TYPED}"
    pids = [peer["pid"] for peer in line["peers"]]
    block_until(lambda: all(gone(pid) for pid in pids), within=25)
    assert all(group_empty(pid) for pid in pids)
    for trace in (lead_trace(tmp_path), trace_of(members["coder"])):
        assert len(of(trace, "member_call_start")) == 1
        assert [ended["status"] for ended in of(trace, "member_call")] == ["completed"]
        [continued] = of(trace, "task_continued")
        assert continued["member_calls"] == [of(trace, "member_call")[0]["call_id"]]
    assert of(lead_trace(tmp_path), "task_end")[0]["exit_status"] == "ok"
    summed = run_cli("trace", frm, cwd=tmp_path / "team")
    assert summed.returncode == 0, summed.stderr
    told = summed.stdout.splitlines()
    assert told[0] == f"formation: {frm}"
    assert sorted(text.split()[1] for text in told[1:4]) == ["coder", "lead", "reviewer"]
    calls_told = told[told.index("calls:") + 1:]
    assert [(text.split()[1:4], text.split()[4], text.split()[-1]) for text in calls_told] == [
        (["lead", "→", "coder"], "completed", "delivered"),
        (["coder", "→", "reviewer"], "completed", "delivered")]
    assert leaked([murmur_home, tmp_path / "team"], launched.out + launched.err) == []


def test_a_forged_token_at_a_live_members_door_is_refused(
        launched: Launcher, murmur_home: Path, tmp_path: Path) -> None:
    from tui.core.formation.tokens import mint, new_keys

    line = launched.formation()
    asked(launched)  # the formation is up, its chain at work
    coder = peers(line)["coder"]
    signing, _ = new_keys()  # not the launch's key: a forged token for the very edge
    forged = mint(signing, line["formation_id"], "lead", "coder")
    refused = door(coder, forged)
    assert refused.status_code == 401, refused.text
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert "invalid_token" in refused.text and forged not in refused.text
    # the door still takes the launch's own token: lead's reads of its call go on, and the
    # chain ends (reviewer killed, so its caller answers with what it has)
    os.kill(peers(line)["reviewer"]["pid"], signal.SIGKILL)
    assert launched.process.wait(60) == 0, launched.told()
    assert result(launched) == "coder said: reviewer said: (no answer from reviewer)"
    assert leaked([murmur_home, tmp_path / "team"], launched.out + launched.err) == []


def test_a_token_minted_for_another_members_door_is_not_permitted(tmp_path: Path) -> None:
    """The launch's key lives only in the launcher's memory: a member started by hand with a
    seat whose verifying key the test holds, shown a token well signed for another door."""
    from tui.core.formation.tokens import mint, new_keys

    folder = chain(tmp_path / "team")
    frm = "frm_" + "3" * 32
    signing, verify_key = new_keys()
    read, write = os.pipe()
    os.write(write, Seat(frm, "coder", False, verify_key).first_line().encode())
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(folder / "coder"), "--headless", "--serve",
         "127.0.0.1:0", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, pass_fds=(read,), start_new_session=True,
        env=dict(os.environ, MURMUR_FORMATION_ID=frm, MURMUR_FORMATION_CHANNEL=str(read)))
    os.close(read)
    out: list[str] = []
    err: list[str] = []
    for stream, into in ((process.stdout, out), (process.stderr, err)):
        threading.Thread(target=Launcher._read, args=(stream, into), daemon=True).start()
    try:
        block_until(lambda: out or process.poll() is not None, within=30, what=lambda: err)
        ready = json.loads(out[0])
        coder = {"url": "http://" + ready["url"]}
        assert any("W-RUN-007" in text for text in err), err  # a member started by hand
        other = mint(signing, frm, "lead", "reviewer")  # well signed, for reviewer's door
        refused = door(coder, other)
        assert refused.status_code == 403, refused.text
        assert "not_permitted" in refused.text
        assert "member 'lead' may not call this capsule" in refused.text
        assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
        # the same key's token for this door's own edge is taken (the task is not lead's)
        taken = door(coder, mint(signing, frm, "lead", "coder"))
        assert taken.status_code == 200 and taken.json()["error"]["code"] == -32001
        assert door(coder, mint(new_keys()[0], frm, "lead", "coder")).status_code == 401
    finally:
        os.close(write)
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    assert not any("mft1." in text for text in out + err)


def test_a_member_sigkilled_mid_call_is_unreachable_and_the_chain_still_ends(
        launched: Launcher, tmp_path: Path) -> None:
    line = launched.formation()
    members = peers(line)
    asked(launched)  # coder waits on reviewer, which waits on the person
    os.kill(members["reviewer"]["pid"], signal.SIGKILL)
    assert launched.process.wait(60) == 0, launched.told()
    assert any(text.endswith("[reviewer] gone (signal SIGKILL)") for text in launched.err)
    # coder's call ended unreachable, and coder answered lead with what it had
    [ended] = of(trace_of(members["coder"]), "member_call")
    assert ended["status"] == "unreachable" and "cannot reach the door" in ended["reason"]
    assert result(launched) == "coder said: reviewer said: (no answer from reviewer)"
    assert [e["status"] for e in of(lead_trace(tmp_path), "member_call")] == ["completed"]
    block_until(lambda: gone(members["coder"]["pid"]), within=25)
    for peer in line["peers"]:
        assert group_empty(peer["pid"]), peer
    assert not any("[coder] gone" in text for text in launched.err)  # the launcher ended it


def test_a_sigkilled_launcher_ends_every_member_mid_chain(
        launched: Launcher, murmur_home: Path) -> None:
    line = launched.formation()
    asked(launched)
    launched.process.send_signal(signal.SIGKILL)
    launched.process.wait()
    pids = [peer["pid"] for peer in line["peers"]]
    block_until(lambda: all(gone(pid) for pid in pids), within=25)
    for peer in line["peers"]:
        assert group_empty(peer["pid"]), peer
        trace = trace_of(peer)
        assert "formation_ended" in [e["event_type"] for e in read_jsonl(trace)], peer
        last = read_jsonl(trace)[-1]
        assert (last["event_type"], last["exit_status"]) == ("session_end", "formation_ended")
    listed = run_cli("ps")
    assert listed.returncode == 0, listed.stderr
    for peer in line["peers"]:
        assert peer["session_id"] not in listed.stdout
    entry = json.loads(launched.out[1])["session_id"]
    assert entry not in listed.stdout  # the entry's record was left behind: pruned
    assert f"pruned: {entry}" in listed.stderr
