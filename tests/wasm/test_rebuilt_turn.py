"""The turn a killed session died in, rebuilt by `launch --resume` (real processes, SIGKILL):
finished calls are not run again, the interrupted one runs again only when replay-safe, calls
that had not started run, and — over every kill point of a three-call turn, killed once or
twice — no replay-unsafe call ever runs twice and the record holds each call's result once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import set_driver_config
from tests.conftest import read_jsonl, started_line
from tests.responses import text_response
from tests.wasm.conftest import FIXTURES, WasmCapsule
from tui.core.loop.journal import JOURNAL

SAFE = "x-murmur-tui:\n  contract:\n    effect: read-only\n    replay: safe\n"


def tool_folder(tmp_path: Path, name: str, contract: str) -> str:
    """The asking fixture (it asks its input as the question, then returns the answer) as
    the tool `name` with its own murmur.yaml."""
    folder = tmp_path / f"{name}-tool"
    folder.mkdir(exist_ok=True)
    shutil.copy(FIXTURES / "ask_tool.wasm", folder / f"{name}.wasm")
    (folder / "murmur.yaml").write_text(f"name: {name}\ndescription: Asks.\n{contract}",
                                        encoding="utf-8")
    return f"  - name: {name}\n    runtime: tool\n    source: {folder}\n"


def turn(*calls: tuple[str, str]) -> dict[str, Any]:
    """One model reply calling each (tool, call id) in order; each asks "<call id>?"."""
    return {"stop_reason": "tool_call", "content": [
        {"type": "tool_call", "id": cid, "name": name, "input": {"q": f"{cid}?"}}
        for name, cid in calls]}


def journals(root: Path) -> set[Path]:
    return set(root.glob(f"workdir/*/{JOURNAL}"))


def asked(path: Path) -> list[dict[str, Any]]:
    return [x for x in read_jsonl(path) if x["event"] == "asked"] if path.exists() else []


def launch(root: Path, home: Path, *args: str, kill_at: str | None = None
           ) -> tuple[Path, str]:
    """`launch ROOT --headless ARGS`, each question answered on stdin ("a0", "a1", … in the
    order asked) but the one of call `kill_at`: the session is SIGKILLed while it waits for
    that answer. Its session folder and its stdout."""
    before = journals(root)
    env = dict(os.environ, MURMUR_HOME=str(home))
    out_path = root / f"stdout-{len(before)}.jsonl"
    with out_path.open("w") as out_file:
        process = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root),
                                    "--headless", "--json", *args], env=env,
                                   stdin=subprocess.PIPE, stdout=out_file,
                                   stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None
    mine: set[Path] = set()
    killed = False
    try:
        deadline, answered = time.monotonic() + 120, 0
        while time.monotonic() < deadline and process.poll() is None and not killed:
            mine = mine or journals(root) - before
            for question in asked(next(iter(mine)))[answered:] if mine else []:
                if question["call_id"] == kill_at:
                    process.send_signal(signal.SIGKILL)
                    killed = True
                    break
                process.stdin.write(f"a{answered}\n")
                process.stdin.flush()
                answered += 1
            time.sleep(0.05)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(60)
    out = out_path.read_text()
    if kill_at is not None:  # killed: its output never left its buffer
        assert killed, f"the session never asked {kill_at}; it said: {err[-2000:]}"
        return next(iter(mine)).parent, out
    assert process.returncode == 0, err[-2000:]
    return Path(started_line(out)["trace_path"]).parent, out


def test_a_resume_without_a_task_goes_on_with_the_task_that_died(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    root = wasm_capsule([turn(("check", "c1"), ("check", "c2")), text_response("never")],
                        tool_folder(tmp_path, "check", SAFE))
    dead, _ = launch(root, murmur_home, "--task", "pick", kill_at="c2")
    (root / "script.json").write_text(json.dumps([text_response("done")]), encoding="utf-8")
    later, out = launch(root, murmur_home, "--resume", dead.name, "--answer", "second")
    events = [json.loads(line) for line in out.splitlines() if '"event"' in line]
    shown = [e for e in events if e["event"] == "InputRequested"]
    assert [(e["prompt"], e["before_restart"]) for e in shown] == [('{"q":"c2?"}', True)]
    dead_start = next(x for x in read_jsonl(dead / "trace.jsonl")
                      if x["event_type"] == "task_start")
    start = next(x for x in read_jsonl(later / "trace.jsonl") if x["event_type"] == "task_start")
    assert start["task_id"] == dead_start["task_id"]  # the same task goes on
    assert [e["text"] for e in events if e["event"] == "TaskStarted"] == ["pick"]
    record = Path(started_line(out)["record_path"])
    messages = read_jsonl(record)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert "a0" in json.dumps(messages[2]) and "second" in json.dumps(messages[3])
    assert (later / "out" / "result.txt").read_text() == "done"


def test_finished_calls_come_from_the_journal_and_are_not_run_again(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    log = tmp_path / "requests.jsonl"
    root = wasm_capsule([turn(("check", "c1"), ("check", "c2")), text_response("never")],
                        tool_folder(tmp_path, "check", SAFE))
    set_driver_config(root, requests_log=log)
    dead, _ = launch(root, murmur_home, "--task", "pick", kill_at="c2")
    (root / "script.json").write_text(json.dumps([text_response("done")]), encoding="utf-8")
    later, out = launch(root, murmur_home, "--resume", dead.name, "--task", "go on",
                        "--answer", "second")
    assert [q["call_id"] for q in asked(later / JOURNAL)] == ["c2"]  # c1 did not run again
    finished = [json.loads(line) for line in out.splitlines() if '"ToolCallFinished"' in line]
    assert [e["call_id"] for e in finished] == ["c2"]
    restored = [json.loads(line) for line in out.splitlines() if '"ToolCallRestored"' in line]
    assert [(e["call_id"], e["status"], e["from_session"]) for e in restored] == [
        ("c1", "ok", dead.name)]
    trace = read_jsonl(later / "trace.jsonl")  # the trace counts only what ran here
    assert [x["tool_call_id"] for x in trace if x["event_type"] == "tool_call"] == ["c2"]
    sent = [m for m in json.loads(log.read_text().splitlines()[-1])["messages"]]
    tools = [json.dumps(m) for m in sent if m["role"] == "tool"]
    assert len(tools) == 2 and "a0" in tools[0] and "second" in tools[1]
    assert sent[-1]["role"] == "user"  # the new task follows the rebuilt turn's results
    warned = [json.loads(line) for line in out.splitlines() if '"W-RESUME-TURN"' in line]
    assert warned and "1 finished call taken from its journal" in warned[0]["text"]


# every place a session of the turn can be killed waiting, once, and twice where the resumed
# session asks again (after c2 is killed, the resume never runs c2: it asks only c3)
PLANS = [("c1",), ("c2",), ("c3",), ("c1", "c1"), ("c1", "c2"), ("c1", "c3"), ("c2", "c3"),
         ("c3", "c3")]


@pytest.mark.parametrize("plan", PLANS, ids=["-".join(p) for p in PLANS])
def test_no_unsafe_call_runs_twice_wherever_the_sessions_are_killed(
        plan: tuple[str, ...], wasm_capsule: WasmCapsule, tmp_path: Path,
        murmur_home: Path) -> None:
    """A turn of check (safe) c1, ask (unsafe, derived) c2, check c3; each session of the plan
    is killed while its call asks, the next resumes it, the last finishes."""
    artifacts = tool_folder(tmp_path, "check", SAFE) + \
        f"  - name: ask\n    runtime: tool\n    source: {FIXTURES}/ask_tool.wasm\n"
    root = wasm_capsule([turn(("check", "c1"), ("ask", "c2"), ("check", "c3")),
                         text_response("never")], artifacts)
    sessions = []
    args = ["--task", "pick"]
    for where in plan:
        folder, _ = launch(root, murmur_home, *args, kill_at=where)
        sessions.append(folder)
        (root / "script.json").write_text(json.dumps([text_response("done")]), encoding="utf-8")
        args = ["--resume", folder.name]
    last, out = launch(root, murmur_home, *args)
    sessions.append(last)
    runs = {cid: [s.name for s in sessions for q in asked(s / JOURNAL) if q["call_id"] == cid]
            for cid in ("c1", "c2", "c3")}
    assert len(runs["c2"]) <= 1, f"the unsafe call ran in {runs['c2']}"
    for earlier, session in enumerate(sessions):  # a call that finished never asks again
        done = {x["call_id"] for x in read_jsonl(session / JOURNAL) if x["event"] == "call"}
        for later in sessions[earlier + 1:]:
            again = {q["call_id"] for q in asked(later / JOURNAL)} & done
            assert not again, f"{again} finished in {session.name} and ran in {later.name}"
    record = read_jsonl(Path(started_line(out)["record_path"]))
    results = [m["tool_call_id"] for m in record if m["role"] == "tool"]
    assert results == ["c1", "c2", "c3"]
    assert [m["role"] for m in record] == ["user", "assistant", "tool", "tool", "tool",
                                           "assistant"]
    assert (last / "out" / "result.txt").read_text() == "done"


def test_a_session_resumed_twice_does_not_run_its_turn_again(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    """The first resume finished the turn (the unsafe c2 ran there, once); resuming the dead
    session again rebuilds nothing: the record holds the turn whole."""
    artifacts = tool_folder(tmp_path, "check", SAFE) + \
        f"  - name: ask\n    runtime: tool\n    source: {FIXTURES}/ask_tool.wasm\n"
    root = wasm_capsule([turn(("check", "c1"), ("ask", "c2")), text_response("never")], artifacts)
    dead, _ = launch(root, murmur_home, "--task", "pick", kill_at="c1")
    (root / "script.json").write_text(json.dumps([text_response("done")]), encoding="utf-8")
    first, _ = launch(root, murmur_home, "--resume", dead.name)
    assert [q["call_id"] for q in asked(first / JOURNAL)] == ["c1", "c2"]
    again, out = launch(root, murmur_home, "--resume", dead.name, "--task", "again")
    assert not asked(again / JOURNAL)  # c2 did not run a second time, nor c1
    assert '"W-RESUME-TURN"' not in out
    record = read_jsonl(Path(started_line(out)["record_path"]))
    assert [m["tool_call_id"] for m in record if m["role"] == "tool"] == ["c1", "c2"]


SLEEP = "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n"


def test_a_session_killed_while_idle_does_not_run_its_finished_task_again(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    """Its last turn is whole in the record: the resume rebuilds nothing and the model is not
    called for a task that had ended."""
    log = tmp_path / "requests.jsonl"
    root = wasm_capsule([turn(("check", "c1")), text_response("done")],
                        tool_folder(tmp_path, "check", SAFE), extra=SLEEP)
    set_driver_config(root, requests_log=log)
    env = dict(os.environ, MURMUR_HOME=str(murmur_home))
    process = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root), "--headless",
                                "--task", "pick", "--answer", "a0"], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        done: list[Path] = []
        while time.monotonic() < deadline and not done:
            done = [r for r in root.glob("workdir/*/out/result.txt") if r.read_text() == "done"]
            time.sleep(0.05)
        assert done, "the first task never finished"
    finally:
        process.send_signal(signal.SIGKILL)  # sleeping for its next task
        process.wait(60)
    dead = done[0].parent.parent
    calls_before = len(log.read_text().splitlines())
    (root / "script.json").write_text(json.dumps([text_response("a new task")]), encoding="utf-8")
    done_again = subprocess.run([sys.executable, "-m", "tui", "launch", str(root), "--headless",
                                 "--json", "--resume", dead.name], env=env,
                                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=120)
    assert done_again.returncode == 0, done_again.stderr
    assert '"W-RESUME-TURN"' not in done_again.stdout and "ToolCallRestored" not in \
        done_again.stdout
    dead_task = next(x for x in read_jsonl(dead / "trace.jsonl")
                     if x["event_type"] == "task_start")["task_id"]
    started = [json.loads(line) for line in done_again.stdout.splitlines()
               if '"TaskStarted"' in line]
    assert len(started) == 1 and started[0]["task_id"] != dead_task  # not the ended task
    requests = log.read_text().splitlines()[calls_before:]
    sent = json.loads(requests[0])["messages"]  # one model call: a task of its own
    assert len(requests) == 1 and [m["role"] for m in sent] == [
        "user", "assistant", "tool", "assistant", "user"]


def test_a_resume_chain_through_a_session_killed_as_it_started_runs_no_unsafe_call_twice(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    """S1 dies in its turn; S2 resumes it and is killed before it journals anything (in a slow
    on-compaction hook); S3 resumes S2, so S1's turn, and dies while the unsafe c3 asks; S4
    resumes S2 again: S3 has the turn, so nothing is rebuilt and c3 does not run again."""
    from tests.wasm.test_wasm_session import hook_entry

    unsafe = f"  - name: ask\n    runtime: tool\n    source: {FIXTURES}/ask_tool.wasm\n"
    root = wasm_capsule([turn(("check", "c1"), ("ask", "c2"), ("ask", "c3")),
                         text_response("never")],
                        tool_folder(tmp_path, "check", SAFE) + unsafe)
    plain = (root / "murmur.yaml").read_text()
    s1, _ = launch(root, murmur_home, "--task", "pick", kill_at="c2")
    hook = hook_entry("summariser", "all_hook", tmp=tmp_path,
                      contract="binding: on-compaction\ncommit_policy: replace-context\n")
    (root / "murmur.yaml").write_text(
        plain.replace("inference:", hook.rstrip("\n") + "\ninference:"))
    set_driver_config(root, chars_per_second=4)
    (root / "script.json").write_text(json.dumps([text_response("s" * 400)]), encoding="utf-8")
    index = murmur_home / "tui" / "sessions.jsonl"
    known = index.read_text().count("\n")
    env = dict(os.environ, MURMUR_HOME=str(murmur_home))
    process = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root), "--headless",
                                "--resume", s1.name, "--resume-mode", "compact"], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:  # killed once it is in the index: its compaction hook is still slowly answering
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and index.read_text().count("\n") == known:
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(60)
    s2 = json.loads(index.read_text().splitlines()[-1])["session_id"]
    assert not (root / "workdir" / s2 / JOURNAL).exists()
    (root / "murmur.yaml").write_text(plain)
    (root / "script.json").write_text(json.dumps([text_response("done")]), encoding="utf-8")
    s3, _ = launch(root, murmur_home, "--resume", s2, kill_at="c3")
    assert [q["call_id"] for q in asked(s3 / JOURNAL)] == ["c3"]  # c2 was not run again
    s4, out = launch(root, murmur_home, "--resume", s2, "--task", "again")
    assert not asked(s4 / JOURNAL), "an unsafe call ran again"
    warned = [json.loads(line) for line in out.splitlines() if '"W-RESUME"' in line]
    assert warned and f"{s3.name} took over" in warned[0]["text"]
