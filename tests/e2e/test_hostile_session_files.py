"""Files that are not files, from the command line: a past session's folder rewritten as its own
shell could rewrite it — a FIFO or a link to /dev/zero at `trace.jsonl` or `task.md`, a line
nested 100,000 deep or cut short in `trace.jsonl` and `background.jsonl` — and then resumed,
read by `murmur-tui trace` and launched in. Every command ends within its timeout (a hang fails
the test), with a located refusal or a warning, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory, run_cli
from tests.responses import text_response

DEEP = b"[" * 100_000 + b"]" * 100_000
TIMEOUT = 60  # a hang ends the command here and fails the test (a run takes a few seconds)


def detached(work_id: str) -> bytes:
    return json.dumps({"event": "detached", "work_id": work_id, "binary": "/bin/bash",
                       "command": f"sleep 100 # {work_id}", "detached_at_ms": 1}).encode()


def past_session(make_capsule: CapsuleFactory) -> tuple[Path, Path]:
    """A capsule and the folder of one session it ran (ended ok)."""
    root = make_capsule([text_response("first"), text_response("resumed")])
    done = run_cli("launch", str(root), "--headless", "--task", "start", timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    [folder] = (root / "workdir").glob("ses_*")
    return root, folder


def warnings(result: object) -> list[tuple[str, str]]:
    """(code, text) of each Warning a `launch --headless --json` run printed."""
    lines = [json.loads(line) for line in str(getattr(result, "stdout", "")).splitlines()
             if line.startswith("{")]
    return [(line["code"], line["text"]) for line in lines if line.get("event") == "Warning"]


def said(result: object) -> str:
    text = f"{getattr(result, 'stdout', '')}\n{getattr(result, 'stderr', '')}"
    assert "Traceback" not in text and "session setup failed" not in text
    assert "internal error" not in text
    return text


def test_a_resume_skips_unreadable_background_lines_naming_them_and_the_trace_stays_readable(
        make_capsule: CapsuleFactory) -> None:
    root, folder = past_session(make_capsule)
    (folder / "background.jsonl").write_bytes(
        b"\n".join([detached("wrk_a"), DEEP, detached("wrk_b"), b'{"event": "comple']))
    trace = folder / "trace.jsonl"
    whole = trace.read_bytes()
    with trace.open("ab") as handle:  # the session was killed writing a line
        handle.write(b'{"event_type":"shell_completed","work_id":"wrk_')
    resumed = run_cli("launch", str(root), "--headless", "--json", "--resume", "@1", "--task",
                      "go on", timeout=TIMEOUT)
    assert resumed.returncode == 0, said(resumed)
    warned = dict(warnings(resumed))
    assert warned["W-RESUME"] == (f"{folder / 'background.jsonl'}:2: not JSON (nested deeper "
                                  "than 127); skipped (2 lines skipped in all)")
    assert "wrk_a" in warned["W-SHELL-LOST"] and "wrk_b" in warned["W-SHELL-LOST"]
    # the shell_lost lines began on a line of their own: the trace is still a trace
    lines = trace.read_bytes()[len(whole):].split(b"\n")
    assert lines[0].startswith(b'{"event_type":"shell_completed"') and lines[-1] == b""
    assert [json.loads(line)["work_id"] for line in lines[1:-1]] == ["wrk_a", "wrk_b"]
    shown = run_cli("trace", str(folder), "--json", timeout=TIMEOUT)
    assert shown.returncode == 0, said(shown)
    value = json.loads(shown.stdout)
    cut = len(whole.splitlines()) + 1
    assert value["cut_lines"] == [cut] and value["cut_line"] is None
    human = run_cli("trace", str(folder), timeout=TIMEOUT)
    assert human.stdout.startswith(f"trace line {cut} cut short"), said(human)


@pytest.mark.parametrize(("kind", "words"), [
    ("fifo", ": not read: it is a FIFO (named pipe)"),
    ("zero-link", ": not read: it is a link"),
    ("deep-line", ":1: not JSON (nested deeper than 127)"),
])
def test_a_resume_and_the_trace_command_refuse_a_trace_that_is_not_one(
        make_capsule: CapsuleFactory, kind: str, words: str) -> None:
    root, folder = past_session(make_capsule)
    trace = folder / "trace.jsonl"
    trace.unlink()
    if kind == "fifo":
        os.mkfifo(trace)
    elif kind == "zero-link":
        trace.symlink_to("/dev/zero")
    else:
        trace.write_bytes(DEEP + b"\n")
    (folder / "background.jsonl").write_bytes(detached("wrk_a") + b"\n")
    resumed = run_cli("launch", str(root), "--headless", "--json", "--resume", "@1", "--task",
                      "go on", timeout=TIMEOUT)
    assert resumed.returncode == 0, said(resumed)
    warned = warnings(resumed)
    assert ("W-RESUME", f"{trace}{words}; the shell_lost lines have no parent") in warned
    if kind != "deep-line":  # nothing is written through a link or into a FIFO
        assert [code for code, text in warned if "could not be written" in text] == ["W-RESUME"]
    lost = [text for code, text in warned if code == "W-SHELL-LOST"]
    assert len(lost) == 1 and "wrk_a" in lost[0]  # the lost work is still reported
    shown = run_cli("trace", str(folder), timeout=TIMEOUT)
    assert shown.returncode == 2 and shown.stdout == ""
    assert shown.stderr.startswith("murmur-tui: error: ") and f"{trace}{words}" in said(shown)


@pytest.mark.parametrize(("kind", "words"), [("fifo", "it is a FIFO (named pipe)"),
                                             ("zero-link", "it is a link")])
def test_a_launch_refuses_a_task_file_that_is_not_a_file(
        make_capsule: CapsuleFactory, tmp_path: Path, kind: str, words: str) -> None:
    root = make_capsule([text_response("never")])
    workdir = tmp_path / "work"
    workdir.mkdir()
    task = workdir / "task.md"
    if kind == "fifo":
        os.mkfifo(task)
    else:
        task.symlink_to("/dev/zero")
    done = run_cli("launch", str(root), "--headless", "--workdir", str(workdir),
                   timeout=TIMEOUT)
    assert done.returncode == 2, said(done)
    assert f"{task}: not read as the task: {words}" in said(done)
