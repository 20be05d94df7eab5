"""`launch --resume SESSION`: a past session's conversation goes on in a new session, found in
`$MURMUR_HOME/tui/sessions.jsonl`; what cannot be continued is refused before anything runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.capsules import set_driver_config
from tests.conftest import CapsuleFactory, read_jsonl, run_cli
from tests.responses import text_response
from tui.core.session_index import entries, index_path


def logged(root: Path, log: Path) -> None:
    set_driver_config(root, requests_log=log)


def test_a_resumed_session_goes_on_with_the_whole_conversation(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    root = make_capsule([text_response("noted: 42"), text_response("it was 42")])
    log = tmp_path / "requests.jsonl"
    logged(root, log)
    first = run_cli("launch", str(root), "--headless", "--json", "--task", "remember 42")
    assert first.returncode == 0, first.stderr
    earlier = json.loads(first.stdout.splitlines()[0])
    again = run_cli("launch", str(root), "--headless", "--json", "--resume", "@1",
                    "--task", "which number?")
    assert again.returncode == 0, again.stderr
    later = json.loads(again.stdout.splitlines()[0])
    assert later["context_id"] == earlier["context_id"]
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    texts = [b["text"] for m in requests[1]["messages"] for b in m["content"]]
    assert texts == ["remember 42", "noted: 42", "which number?"]
    start = read_jsonl(Path(later["trace_path"]))[0]
    assert start["resumed_from"] == earlier["session_id"]
    # the index names both, newest first, each ended ok with its task count
    known = entries(murmur_home)
    assert [e.session_id for e in known] == [later["session_id"], earlier["session_id"]]
    assert all(e.exit_status == "ok" and e.tasks == 1 and e.ended_ms for e in known)
    assert known[0].resumed_from == earlier["session_id"]
    assert index_path(murmur_home).stat().st_mode & 0o777 == 0o600
    # a suffix of the id names it too
    third = run_cli("launch", str(root), "--headless", "--resume",
                    earlier["session_id"][-6:], "--task", "x")
    assert third.returncode != 2, third.stderr


def test_what_cannot_be_resumed_is_refused_before_anything_runs(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("done")], name="first-capsule", folder="first")
    assert run_cli("launch", str(root), "--headless", "--task", "t").returncode == 0
    other = make_capsule([text_response("x")], name="other-capsule", folder="other")
    cases = {
        ("--resume", "ses_nope"): "no session found matching suffix 'ses_nope' in",
        ("--resume", "@9"): "@9 is out of range",
        ("--resume", "abc"): "at least its last 4 characters",
        ("--resume", "@1", "--context", "ctx_x"): "give --resume or --context, not both",
        ("--resume", "@1", "--resume-mode", "compact"): "binds none",
    }
    for args, said in cases.items():
        done = run_cli("launch", str(root), "--headless", "--task", "t", *args)
        assert done.returncode == 2 and said in done.stderr, (args, done.stderr)
    done = run_cli("launch", str(other), "--headless", "--task", "t", "--resume", "@1")
    assert done.returncode == 2 and "ran capsule 'first-capsule'" in done.stderr
    assert len(entries(murmur_home)) == 1  # nothing refused left a session behind


def test_a_conversation_being_written_cannot_be_resumed(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("one"), text_response("two")],
                        extra="lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n")
    sleeping = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root),
                                 "--headless", "--task", "stay"], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not entries(murmur_home) and time.monotonic() < deadline:
            time.sleep(0.05)
        done = run_cli("launch", str(root), "--headless", "--resume", "@1", "--task", "t")
        assert done.returncode == 2 and "is being written by session" in done.stderr, \
            done.stderr
    finally:
        assert sleeping.stdin is not None
        sleeping.stdin.close()
        sleeping.wait(timeout=60)
