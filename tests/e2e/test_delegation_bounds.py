"""The bounds of `delegate-task` (docs/formations.md, "Delegation"): the spawn envelope (a child
asking for more than its parent is refused before it starts), canceling the task that delegated
(its children stopped), and `stop` / `cancel` listing a session's live delegations. Real child
processes, scripted drivers, real files."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.capsules import write_capsule
from tests.conftest import run_cli
from tests.e2e.test_delegation import (
    SLOW,
    Running,
    call_of,
    child_record,
    delegate,
    helper_capsule,
    parent_capsule,
    trace,
)
from tests.responses import text_response
from tests.rosters import install_capsule
from tests.served import serve
from tests.unit.processes import seen
from tests.waits import block_until
from tui.core.events import vocabulary as ev


# -- the spawn envelope ----------------------------------------------------------------------------
def _refused(running: Running) -> tuple[str, str | None]:
    """The call's result and the delegation's reason, once it was refused."""
    ended = running.ended()
    result = running.finish()
    assert ended.outcome == "refused" and ended.delegation_id is None
    assert not running.sink.of(ev.DelegationStarted)
    assert not (result.paths.accessible / ".murmur" / "children").exists()  # nothing started
    line = next(x for x in trace(result.paths.trace) if x["event_type"] == "delegation")
    assert (line["outcome"], line["reason"]) == ("refused", ended.reason)
    finished = call_of(running.sink)
    assert finished.status == "error"
    return finished.output, ended.reason


def test_a_child_that_may_run_more_binaries_is_refused_naming_the_key(
        tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", shell=("ls", "curl"))
    running = Running(write_capsule(
        tmp_path / "parent", [delegate(), text_response("refused")], name="parent",
        version="0.1.0", shell=("ls",), capabilities="  spawn:\n    allow: [./helper]",
        lifecycle={"task_acceptance": "queue", "after_task": "sleep"}))
    output, reason = _refused(running)
    assert reason == ("capabilities.shell.allow: the child asks for curl, which this session "
                      "may not run")
    assert output == f"error: delegate-task: {reason}"


def test_every_axis_the_child_exceeds_is_named(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", capabilities="\n".join([
        "  network:", "    allow: [api.example.com, 'https://docs.example.com']",
        "  env:", "    allow: [LANG, EDITOR]",
        "  shell:", "    allow: [ls]", "    strip_env: ['CORP_*']",
        "  spawn:", "    allow: [./grandchild, other]",
        "  filesystem:", "    scope: out"]))
    write_capsule(tmp_path / "parent" / "helper" / "grandchild", [text_response("g")],
                  name="grandchild", version="0.1.0", shell=())
    running = Running(parent_capsule(
        tmp_path / "parent", [delegate(), text_response("refused")],
        allow="[./helper, ./helper/grandchild]",
        capabilities_more="\n".join([
            "  network:", "    allow: [docs.example.com]",
            "  env:", "    allow: [LANG]",
            "  shell:", "    allow: [ls]", "    strip_env: ['CORP_*', '*_CERT']",
            "  filesystem:", "    scope: data", "    read_only: [data/keys]"])))
    _output, reason = _refused(running)
    assert reason == "; ".join([
        "capabilities.network.allow: the child asks for api.example.com, which this session "
        "may not reach",
        "capabilities.shell.strip_env: the child does not strip *_CERT, which this session "
        "strips",
        "capabilities.env.allow: the child asks for EDITOR, which this session may not pass "
        "to its components",
        "capabilities.spawn.allow: the child asks for other, which this session may not start",
        "capabilities.filesystem.scope: the child asks for out, where this session is held "
        "to data",
        "capabilities.filesystem.read_only: the child may write data/keys, which this "
        "session may only read"])


def test_a_hooks_own_network_counts_as_the_childs(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", artifacts="\n".join([
        "  - name: watcher", "    runtime: hook", "    source: {fixtures}/bare_hook.wasm",
        "    capabilities:", "      network:", "        allow: [evil.example.net]"]))
    running = Running(parent_capsule(tmp_path / "parent",
                                     [delegate(), text_response("refused")]))
    _output, reason = _refused(running)
    assert reason == ("artifacts[watcher].capabilities.network.allow: the child asks for "
                      "evil.example.net, which this session may not reach")


def test_a_child_within_the_envelope_runs(tmp_path: Path, murmur_home: Path) -> None:
    """Narrower on every axis: a covered destination, fewer binaries, more stripped, a scope
    inside the parent's, the parent's read-only tree read-only (from above)."""
    helper_capsule(tmp_path / "parent" / "helper", capabilities="\n".join([
        "  network:", "    allow: ['https://docs.example.com']",
        "  shell:", "    allow: [ls]", "    strip_env: ['CORP_*', 'X_*']",
        "  filesystem:", "    scope: data/mine", "    read_only: [data]"]))
    running = Running(parent_capsule(
        tmp_path / "parent", [delegate(), text_response("delegated"),
                              text_response("done")],
        capabilities_more="\n".join([
            "  network:", "    allow: [docs.example.com]",
            "  shell:", "    allow: [ls, cat]", "    strip_env: ['CORP_*']",
            "  filesystem:", "    scope: data", "    read_only: [data/keys]"])))
    ended = running.ended()
    running.finish()
    assert (ended.outcome, ended.reason) == ("completed", None)


def test_an_installed_child_is_held_to_the_envelope_too(tmp_path: Path,
                                                        murmur_home: Path) -> None:
    helper = helper_capsule(tmp_path / "build" / "helper", capabilities="\n".join([
        "  env:", "    allow: [HOME]"]))
    install_capsule(murmur_home / "artifacts", "helper", "0.1.0", helper)
    running = Running(parent_capsule(tmp_path / "parent", [delegate(), text_response("no")],
                                     allow="[helper]"))
    _output, reason = _refused(running)
    assert reason == ("capabilities.env.allow: the child asks for HOME, which this session "
                      "may not pass to its components")



# -- canceling the task that delegated -------------------------------------------------------------
def test_canceling_the_task_stops_its_children(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", "x" * 2000, driver_config=SLOW)
    running = Running(parent_capsule(tmp_path / "parent",
                                     [delegate(), text_response("waiting for it")]))
    block_until(lambda: running.sink.of(ev.DelegationStarted))
    started = running.sink.of(ev.DelegationStarted)[0]
    child = seen(child_record(murmur_home, started.child_session_id)["pid"])
    # the task waits on its delegation (the model ended its turn with turns left)
    block_until(lambda: any(e.text.startswith("waiting on") for e in running.sink.of(
        ev.Progress)), what=lambda: running.sink.events)
    assert running.session.cancel_task(started.task_id) == "running"
    block_until(lambda: running.sink.of(ev.TaskEnded), what=lambda: running.sink.events)

    canceled = running.sink.of(ev.TaskCanceled)[0]
    assert (canceled.task_id, canceled.phase, canceled.delegation_ids) == (
        started.task_id, "delegation", (started.delegation_id,))
    ended = running.sink.of(ev.DelegationEnded)[0]
    assert (ended.outcome, ended.delegation_id, ended.reason) == (
        "failed", started.delegation_id, "the task that delegated it was canceled: the child "
        "was stopped (its session ended terminated)")
    kinds = [e.event_type for e in running.sink.events]
    assert kinds.index("TaskCanceled") < kinds.index("DelegationEnded") < kinds.index(
        "TaskEnded")
    assert running.sink.of(ev.TaskEnded)[0].exit_status == "canceled"
    assert not child.alive()
    assert not (murmur_home / "running" / f"{started.child_session_id}.json").exists()
    session_dir = Path(started.child_workdir) / ".murmur" / started.child_session_id
    child_lines = trace(session_dir / "trace.jsonl")
    assert "spawner_ended" in [line["event_type"] for line in child_lines]
    assert child_lines[-1]["exit_status"] == "canceled"
    completion = json.loads((session_dir / "completion.json").read_text())
    assert (completion["status"], completion["detail"]) == (
        "terminated", "the task that delegated this one was canceled")

    result = running.finish()  # the session went on: it slept until its inbox closed
    lines = trace(result.paths.trace)
    line = next(x for x in lines if x["event_type"] == "task_canceled")
    assert (line["phase"], line["delegation_ids"], line["detached_work_ids"]) == (
        "delegation", [started.delegation_id], [])
    names = [x["event_type"] for x in lines]
    assert names.index("task_canceled") < names.index("delegation") < names.index("task_end")
    end = next(x for x in lines if x["event_type"] == "delegation")
    assert (end["outcome"], end["reason"]) == ("failed", ended.reason)
    steps = subprocess.run([sys.executable, "-m", "tui", "trace", "steps",
                            str(result.paths.trace)], capture_output=True, text=True, timeout=60)
    assert steps.returncode == 0, steps.stderr
    assert (f"delegation  1 delegation(s) live at the cancel: {started.delegation_id}"
            in steps.stdout), steps.stdout


def test_a_first_sigterm_stops_the_parents_children_through_its_task(
        tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", "x" * 2000, driver_config=SLOW)
    parent_capsule(tmp_path / "parent", [delegate(), text_response("waiting for it")])
    parent = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(tmp_path / "parent"), "--headless",
         "--task", "delegate it"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        assert parent.stdout is not None
        said = []
        for line in parent.stdout:  # until the call returned: the delegation is live
            said.append(line)
            if line.startswith("⇢ delegated to helper@0.1.0"):
                break
        record = _child_of(murmur_home)
        assert record is not None, said
        child = seen(record["pid"])
        parent.send_signal(signal.SIGTERM)
        rest, err = parent.communicate(timeout=60)
        out = "".join(said) + rest
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(30)
    assert not child.alive()
    assert "Traceback" not in err
    stopped = [line for line in out.splitlines() if line.startswith("⊘ canceled")]
    assert len(stopped) == 1 and stopped[0].endswith("; 1 delegation stopped"), out
    assert ("the task that delegated it was canceled: the child was stopped (its session "
            "ended terminated)") in out
    session_dir = Path(record["workdir"]) / ".murmur" / record["session_id"]
    completion = json.loads((session_dir / "completion.json").read_text())
    assert completion["detail"] == "the task that delegated this one was canceled"


def _child_of(home: Path) -> dict[str, Any] | None:
    running = home / "running"
    for path in running.glob("*.json") if running.is_dir() else ():
        try:
            record = json.loads(path.read_text())
        except ValueError:
            continue
        if record.get("spawned_by"):
            return dict(record)
    return None


# -- stop and cancel list a session's delegations ------------------------------------------------
def test_stop_and_cancel_list_the_sessions_live_delegations(tmp_path: Path,
                                                             murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", "x" * 2000, driver_config=SLOW)
    # no turn left after the second: the task ends and leaves its child running
    door = serve(parent_capsule(tmp_path / "parent",
                                [delegate(), text_response("left it running")], max_turns=2))
    try:
        task = door.send("go")["id"]
        door.until(task, "TASK_STATE_COMPLETED")
        record = _child_of(murmur_home)
        assert record is not None and record["spawned_by"] == door.session_id
        child = seen(record["pid"])
        dlg = trace(Path(record["workdir"]) / ".murmur" / record["session_id"] /
                    "trace.jsonl")[0]["delegation_id"]

        canceled = run_cli("cancel", door.session_id, task)
        assert canceled.returncode == 0, canceled.stderr
        assert canceled.stdout.splitlines() == [
            f"task:    {task}", "state:   completed",
            f"running: {dlg}  delegation  helper@0.1.0"]
        assert child.alive()  # a task that already ended stops nothing

        stopped = run_cli("stop", door.session_id[-6:], "--timeout", "30")
        assert stopped.returncode == 0, stopped.stderr
        out = stopped.stdout.splitlines()
        assert out[0] == f"stopped: {door.session_id}"
        # the session's end wound its child down before the session's process ended
        assert out[3:] == [f"ended:   {dlg}  delegation  helper@0.1.0",
                           "residue: nothing else was left running"], out
        block_until(lambda: not child.alive(), what="the child's process to end")
    finally:
        if door.process.poll() is None:
            door.process.kill()
        door.process.wait(30)
        door.client.close()
