"""`delegate-task` (docs/formations.md, "Delegation"): real child processes (`python -m tui
launch … --headless`), scripted drivers, real files — the tool's presence, a child started and
its outcome arriving, a child killed, the parent's process ending under a child."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import write_capsule
from tests.fakes import Collect
from tests.responses import call_response, text_response
from tests.rosters import install_capsule
from tests.unit.processes import seen
from tests.waits import block_until
from tui.core.events import vocabulary as ev
from tui.core.formation.awaiting import Arrival
from tui.core.loop.build import SessionSpec, build_session
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

CHILD_ANSWER = "the child's answer: 42"
# a child that is still streaming its answer long after any test has looked at it
SLOW = {"chunk_chars": 1, "chars_per_second": 5}


def delegate(capsule: str = "helper", version: str = "0.1.0",
             task: str = "find the answer") -> dict[str, Any]:
    return call_response("delegate-task", {"capsule": capsule, "version": version,
                                           "task": task}, call_id="d1")


def parent_capsule(root: Path, responses: list[dict[str, Any]], allow: str = "[./helper]",
                   capabilities_more: str = "", **more: Any) -> Path:
    """A parent that stays up after its task (queue/sleep), so its delegation can end;
    `capabilities_more`: more lines under `capabilities:`."""
    capabilities = f"  spawn:\n    allow: {allow}\n{capabilities_more}".rstrip("\n")
    return write_capsule(root, responses, name="parent", version="0.1.0", shell=(),
                         capabilities=capabilities,
                         lifecycle={"task_acceptance": "queue", "after_task": "sleep"}, **more)


def helper_capsule(root: Path, text: str = CHILD_ANSWER, **more: Any) -> Path:
    more.setdefault("shell", ())
    return write_capsule(root, [text_response(text)], name="helper", version="0.1.0", **more)


class Running:
    """A parent session on its own thread, its events collected."""

    def __init__(self, root: Path, task: str = "delegate it") -> None:
        self.sink = Collect()
        self.session: Session = build_session(SessionSpec(
            load_capsule(root), LaunchOptions(task=task), sinks=[self.sink]))
        self.results: list[SessionResult] = []
        self.thread = threading.Thread(target=lambda: self.results.append(self.session.run()),
                                       daemon=True)
        self.thread.start()

    def ended(self) -> ev.DelegationEnded:
        block_until(lambda: self.sink.of(ev.DelegationEnded), what=lambda: self.sink.events)
        return self.sink.of(ev.DelegationEnded)[0]

    def finish(self) -> SessionResult:
        self.session.inbox.close()
        self.thread.join(60)
        assert self.results, "the parent session did not end"
        return self.results[0]


def call_of(sink: Collect) -> ev.ToolCallFinished:
    return next(e for e in sink.of(ev.ToolCallFinished) if e.tool_name == "delegate-task")


def strings(value: Any) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def trace(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def child_record(home: Path, session_id: str) -> dict[str, Any]:
    path = home / "running" / f"{session_id}.json"
    block_until(path.is_file, what=f"the child's running record {path}")
    return dict(json.loads(path.read_text()))


# -- the tool exists exactly when spawn.allow names a capsule --------------------------------------
def test_the_tool_exists_only_with_a_spawn_grant(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper")
    granted = Running(parent_capsule(tmp_path / "parent", [text_response("no need")]))
    result = granted.finish()
    started = granted.sink.of(ev.SessionStarted)[0]
    assert "delegate-task" in started.tools
    spec = granted.session.tools.resolve("delegate-task")
    assert spec is not None and spec.spec.parameters["properties"]["capsule"]["enum"] == [
        "helper"]
    staged = result.paths.tools / "delegate-task" / "murmur.yaml"
    assert staged.read_text() == ("name: delegate-task\nversion: 0.0.0\nruntime: tool\n"
                                  "implementation: native\n")

    plain = Running(write_capsule(tmp_path / "plain", [text_response("alone")], shell=(),
                                  lifecycle={"task_acceptance": "queue",
                                             "after_task": "sleep"}))
    result = plain.finish()
    assert "delegate-task" not in plain.sink.of(ev.SessionStarted)[0].tools
    assert plain.session.tools.resolve("delegate-task") is None
    assert not (result.paths.tools / "delegate-task").exists()


# -- a child started, and its outcome arriving -----------------------------------------------------
def test_a_child_runs_and_its_result_arrives_in_the_task(tmp_path: Path,
                                                         murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper")
    running = Running(parent_capsule(tmp_path / "parent",
                                     [delegate(), text_response("delegated"),
                                      text_response("the helper answered")]))
    ended = running.ended()
    started = running.sink.of(ev.DelegationStarted)[0]
    parent = running.sink.of(ev.SessionStarted)[0]
    task_id = running.sink.of(ev.TaskStarted)[0].task_id

    # the call returned at once: started, with the ids the runtime chose
    finished = call_of(running.sink)
    assert finished.status == "ok"
    head, data = finished.output.split("\n", 1)
    assert head == "Delegated helper: started"
    assert json.loads(data) == {"delegation_id": started.delegation_id, "capsule": "helper",
                                "version": "0.1.0",
                                "child_session_id": started.child_session_id,
                                "status": "started"}
    assert re.fullmatch(r"dlg_[0-9a-f]{32}", started.delegation_id)

    # the child's folder, chosen by the runtime: <workdir>/.murmur/children/helper-<16 hex>
    child_dir = Path(started.child_workdir)
    assert child_dir.parent == Path(parent.workdir) / ".murmur" / "children"
    assert re.fullmatch(r"helper-[0-9a-f]{16}", child_dir.name)
    assert stat.S_IMODE(child_dir.stat().st_mode) == 0o700
    session_dir = child_dir / ".murmur" / started.child_session_id
    child_start = trace(session_dir / "trace.jsonl")[0]
    assert child_start["event_type"] == "session_start"
    assert child_start["spawned_by"] == parent.session_id
    assert child_start["delegation_id"] == started.delegation_id
    assert (session_dir / "out" / "result.txt").read_text() == CHILD_ANSWER

    completion = json.loads((session_dir / "completion.json").read_text())
    assert completion["status"] == "ok" and completion["reported_by"] == "child"
    assert (completion["delegation_id"], completion["session_id"], completion["capsule_name"],
            completion["capsule_version"]) == (started.delegation_id,
                                               started.child_session_id, "helper", "0.1.0")
    assert stat.S_IMODE((session_dir / "completion.json").stat().st_mode) == 0o600

    assert (ended.outcome, ended.delegation_id, ended.child_session_id, ended.reason) == (
        "completed", started.delegation_id, started.child_session_id, None)
    # the task waited for it and went on with its outcome, in one user message
    block_until(lambda: running.sink.of(ev.TaskEnded), what=lambda: running.sink.events)
    continued = running.sink.of(ev.TaskContinued)[0]
    assert (continued.task_id, continued.delegations, continued.member_calls) == (
        task_id, (started.delegation_id,), ())
    outcome = Arrival(
        "delegation", started.delegation_id, "helper", "completed",
        f"Delegation {started.delegation_id} to helper@0.1.0 (child session "
        f"{started.child_session_id}) completed. Its result:\n"
        f"<untrusted-content source=delegation:helper>\n{CHILD_ANSWER}\n"
        "</untrusted-content>")
    assert running.sink.of(ev.TaskEnded)[0].result == "the helper answered"
    assert parent.record_path is not None
    said = [text for line in Path(parent.record_path).read_text().splitlines()
            for text in strings(json.loads(line))]
    assert outcome.text in said  # the user message the model read next
    result = running.finish()
    lines = trace(result.paths.trace)
    start_line = next(line for line in lines if line["event_type"] == "delegation_start")
    assert {key: start_line[key] for key in ("delegation_id", "capsule", "version",
                                             "child_session_id", "child_workdir")} == {
        "delegation_id": started.delegation_id, "capsule": "helper", "version": "0.1.0",
        "child_session_id": started.child_session_id, "child_workdir": str(child_dir)}
    end_line = next(line for line in lines if line["event_type"] == "delegation")
    assert (end_line["outcome"], end_line["delegation_id"], end_line["reason"]) == (
        "completed", started.delegation_id, None)


def test_an_installed_capsule_is_delegated_to_by_name(tmp_path: Path,
                                                      murmur_home: Path) -> None:
    helper = helper_capsule(tmp_path / "build" / "helper", "installed and answering")
    install_capsule(murmur_home / "artifacts", "helper", "0.1.0", helper)
    running = Running(parent_capsule(tmp_path / "parent", [delegate(), text_response("ok")],
                                     allow="[helper]"))
    ended = running.ended()
    running.finish()
    assert ended.outcome == "completed"
    started = running.sink.of(ev.DelegationStarted)[0]
    result = Path(started.child_workdir) / ".murmur" / started.child_session_id / "out" / \
        "result.txt"
    assert result.read_text() == "installed and answering"


# -- refusals --------------------------------------------------------------------------------------
def test_a_capsule_spawn_allow_does_not_name_is_refused_with_what_it_allows(
        tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper")
    running = Running(parent_capsule(tmp_path / "parent",
                                     [delegate(capsule="intruder"), text_response("refused")]))
    ended = running.ended()
    result = running.finish()
    finished = call_of(running.sink)
    assert finished.status == "error"
    assert finished.output == ('error: delegate-task: capsule "intruder" is not one '
                               "capabilities.spawn.allow lets this session start (capsule is "
                               "one of: helper)")
    assert (ended.outcome, ended.delegation_id, ended.capsule) == ("refused", None, "intruder")
    assert not running.sink.of(ev.DelegationStarted)
    assert not (result.paths.accessible / ".murmur" / "children").exists()
    line = next(x for x in trace(result.paths.trace) if x["event_type"] == "delegation")
    assert (line["outcome"], line["delegation_id"], line["child_session_id"]) == (
        "refused", None, None)


def test_a_version_the_folder_is_not_is_refused(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper")
    running = Running(parent_capsule(tmp_path / "parent",
                                     [delegate(version="9.9.9"), text_response("refused")]))
    running.ended()
    running.finish()
    finished = call_of(running.sink)
    assert finished.output == ("error: delegate-task: helper (./helper) is version 0.1.0, "
                               "not 9.9.9")


# -- a child that dies, a parent that dies ---------------------------------------------------------
def test_a_child_killed_is_reported_crashed(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", "x" * 2000, driver_config=SLOW)
    running = Running(parent_capsule(tmp_path / "parent", [delegate(), text_response("wait")]))
    block_until(lambda: running.sink.of(ev.DelegationStarted))
    started = running.sink.of(ev.DelegationStarted)[0]
    record = child_record(murmur_home, started.child_session_id)
    assert record["spawned_by"] == running.sink.of(ev.SessionStarted)[0].session_id
    os.kill(record["pid"], signal.SIGKILL)
    ended = running.ended()
    running.finish()
    assert ended.outcome == "failed"
    assert ended.reason == ("the child's session ended crashed: the child was killed by "
                            "SIGKILL and left no completion record")
    session_dir = Path(started.child_workdir) / ".murmur" / started.child_session_id
    completion = json.loads((session_dir / "completion.json").read_text())
    assert (completion["status"], completion["reported_by"]) == ("crashed", "parent")


def test_the_parents_process_ending_ends_the_child(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", "x" * 2000, driver_config=SLOW)
    parent_capsule(tmp_path / "parent", [delegate(), text_response("wait")])
    parent = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(tmp_path / "parent"), "--headless",
         "--json", "--task", "delegate it"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        running = murmur_home / "running"

        def child() -> dict[str, Any] | None:
            for path in running.glob("*.json") if running.is_dir() else ():
                record = json.loads(path.read_text())
                if record.get("spawned_by"):
                    return dict(record)
            return None

        block_until(child, what="a running record with spawned_by")
        record = child()
        assert record is not None
        process = seen(record["pid"])
        parent.kill()  # SIGKILL: the parent cannot say anything; its lifeline closes
        parent.wait(30)
        block_until(lambda: not process.alive(), what="the child to end with its parent")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(30)
    session_dir = Path(record["workdir"]) / ".murmur" / record["session_id"]
    lines = trace(session_dir / "trace.jsonl")
    kinds = [line["event_type"] for line in lines]
    assert "spawner_ended" in kinds and kinds[-1] == "session_end"
    assert lines[-1]["exit_status"] == "canceled"  # wound down as on a first SIGTERM
    ended = next(line for line in lines if line["event_type"] == "spawner_ended")
    assert ended["spawned_by"] == record["spawned_by"]
    assert ended["delegation_id"] == lines[0]["delegation_id"]
    completion = json.loads((session_dir / "completion.json").read_text())
    assert (completion["status"], completion["detail"]) == ("terminated",
                                                             "the parent session ended")
    assert not (running / f"{record['session_id']}.json").exists()


@pytest.mark.parametrize("value", ["not json", '{"session_id": "ses_x"}'])
def test_a_spawner_that_is_not_one_refuses_the_launch(tmp_path: Path, murmur_home: Path,
                                                      value: str) -> None:
    helper = helper_capsule(tmp_path / "helper")
    done = subprocess.run(
        [sys.executable, "-m", "tui", "launch", str(helper), "--headless", "--task", "t"],
        env={**os.environ, "MURMUR_SPAWNER": value}, capture_output=True, text=True,
        timeout=60)
    assert done.returncode != 0
    assert "MURMUR_SPAWNER is not the JSON a parent session sets" in done.stderr
    assert "E-RUN-020" in done.stderr and "Traceback" not in done.stderr


def test_a_child_past_the_deadline_is_stopped_and_timed_out(tmp_path: Path,
                                                            murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", "x" * 2000, driver_config=SLOW)
    running = Running(_with_deadline(tmp_path))
    ended = running.ended()
    running.finish()
    assert ended.outcome == "timed_out"
    assert ended.reason == ("the child did not end within 1 s (lifecycle."
                            "delegation_deadline_secs); it was stopped")
    started = running.sink.of(ev.DelegationStarted)[0]
    session_dir = Path(started.child_workdir) / ".murmur" / started.child_session_id
    # the child was told through its lifeline and wound down on its own
    kinds = [line["event_type"] for line in trace(session_dir / "trace.jsonl")]
    assert "spawner_ended" in kinds and kinds[-1] == "session_end"
    assert json.loads((session_dir / "completion.json").read_text())["status"] == "terminated"


def _with_deadline(tmp_path: Path) -> Path:
    return write_capsule(tmp_path / "parent", [delegate(), text_response("wait")],
                         name="parent", version="0.1.0", shell=(),
                         capabilities="  spawn:\n    allow: [./helper]",
                         lifecycle={"task_acceptance": "queue", "after_task": "sleep",
                                    "delegation_deadline_secs": 1})


def test_the_parent_session_ending_winds_its_children_down(tmp_path: Path,
                                                           murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", "x" * 2000, driver_config=SLOW)
    # no turn left after the second: the task ends without waiting for its delegation
    root = write_capsule(tmp_path / "parent", [delegate(), text_response("done without it")],
                         name="parent", version="0.1.0", shell=(), max_turns=2,
                         capabilities="  spawn:\n    allow: [./helper]")
    sink = Collect()
    result = build_session(SessionSpec(load_capsule(root), LaunchOptions(task="go"),
                                       sinks=[sink])).run()
    assert result.exit_status == "ok"
    ended = sink.of(ev.DelegationEnded)[0]
    assert (ended.outcome, ended.reason) == (
        "failed", "the child's session ended terminated: the parent session ended")
    kinds = [e.event_type for e in sink.events]
    assert kinds.index("DelegationEnded") < kinds.index("SessionEnded")
    started = sink.of(ev.DelegationStarted)[0]
    record = murmur_home / "running" / f"{started.child_session_id}.json"
    assert not record.exists()  # the child ended: its running record is gone


def test_the_headless_log_says_a_delegation_started_and_was_refused(
        tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper")
    root = write_capsule(tmp_path / "parent",
                         [delegate(capsule="intruder"), text_response("told")],
                         name="parent", version="0.1.0", shell=(),
                         capabilities="  spawn:\n    allow: [./helper]")
    done = subprocess.run(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--task", "go"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    refused = [line for line in done.stdout.splitlines() if "delegated to intruder" in line]
    assert len(refused) == 1 and re.fullmatch(
        r'✗ delegated to intruder@0\.1\.0 · refused · \d+ ms · capsule "intruder" is not one '
        r"capabilities\.spawn\.allow lets this session start \(capsule is one of: helper\)",
        refused[0]), refused


def test_a_spawn_folder_that_is_not_a_capsule_refuses_the_launch(
        tmp_path: Path, murmur_home: Path) -> None:
    root = write_capsule(tmp_path / "parent", [text_response("never")], name="parent",
                         version="0.1.0", shell=(),
                         capabilities="  spawn:\n    allow: [./missing]")
    done = subprocess.run(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--task", "go"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert (f"{root / 'murmur.yaml'}: capabilities.spawn.allow: ./missing is not a capsule "
            "folder") in done.stderr
    assert "Traceback" not in done.stderr
