"""Background work: a shell command that outruns `lifecycle.shell_grace_secs` is demoted, as
Murmur does — real sessions, real subprocesses, real files. Each slow command waits for a file
the test writes only once the demotion was reported, so no command can end before its grace
period whatever the machine's load."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from tests.conftest import CapsuleFactory, read_jsonl
from tests.fakes import Collect
from tests.responses import text_response, tool_response
from tests.served import killed_once
from tui.core.events import vocabulary as ev
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

WAIT_FOR_GO = "while [ ! -f go ]; do sleep 0.05; done; echo finished; echo oops >&2; exit 3"
FOREVER = "echo started; while :; do sleep 0.05; done"


class Watch(Collect):
    """Collects, and runs `on(event)` for each event as it comes (from the session's threads)."""

    def __init__(self, on: Any) -> None:
        super().__init__()
        self._on = on

    def emit(self, event: ev.Event) -> None:
        super().emit(event)
        self._on(event)


def lifecycle(grace: float, queue_sleep: bool) -> str:
    text = f"lifecycle:\n  shell_grace_secs: {grace:g}\n"
    if queue_sleep:
        text += "  task_acceptance: queue\n  after_task: sleep\n"
    return text


def trace_of(session: Session) -> list[dict[str, Any]]:
    return read_jsonl(session.paths.trace)


def demoted_then_completed(make_capsule: CapsuleFactory) -> tuple[Session, Watch]:
    """A session whose command is demoted to the background and may end only then; its
    completion arrives as a task of its own, the session's last (not run yet)."""
    root = make_capsule([tool_response(WAIT_FOR_GO), text_response("started it"),
                         text_response("it finished")], extra=lifecycle(1, True))
    holder: dict[str, Session] = {}

    def on(event: ev.Event) -> None:
        if isinstance(event, ev.ShellDetached):  # only now may the command end
            (holder["s"].paths.accessible / "go").write_text("")
        if isinstance(event, ev.TaskStarted) and event.origin == "completion":
            holder["s"].inbox.close()  # nothing else will be sent: end after this task

    sink = Watch(on)
    session = holder["s"] = Session(load_capsule(root), LaunchOptions(task="run it"),
                                    sinks=[sink])
    return session, sink


def test_a_slow_command_is_demoted_and_its_completion_arrives_as_a_task(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    session, sink = demoted_then_completed(make_capsule)
    result = session.run()
    assert result.exit_status == "ok" and result.result == "it finished"
    detached = sink.of(ev.ShellDetached)[0]
    assert detached.work_id.startswith("wrk_") and detached.grace_ms == 1000
    assert detached.output_path == f"logs/{detached.work_id}.log"
    assert not sink.of(ev.ShellExecuted)  # shell_detached stands in for the shell line
    # the turn's result is small and says where the output goes
    call = sink.of(ev.ToolCallFinished)[0]
    assert call.status == "ok" and call.output_bytes < 600
    assert detached.work_id in call.output and detached.output_path in call.output
    assert "arrives as a new task" in call.output
    # the completion: its own task, origin completion, naming the exit and the log
    tasks = sink.of(ev.TaskStarted)
    assert [(t.source, t.origin) for t in tasks] == [("task_md", "user"),
                                                    ("detached_shell", "completion")]
    assert "Exit code: 3" in tasks[1].text and detached.output_path in tasks[1].text
    done = sink.of(ev.ShellCompleted)[0]
    assert (done.work_id, done.exit_code, done.status) == (detached.work_id, 3, "error")
    assert done.completion_task_id == tasks[1].task_id
    log = (session.paths.accessible / detached.output_path).read_text()
    assert "finished" in log and "oops" in log and "Exit code: 3" in log
    assert done.output_bytes == len(log.encode())
    lines = trace_of(session)
    kinds = [line["event_type"] for line in lines]
    assert "shell" not in kinds and kinds.count("shell_detached") == 1
    assert kinds.index("shell_completed") < kinds.index("task_start", 2)
    completed = next(line for line in lines if line["event_type"] == "shell_completed")
    assert set(completed) >= {"work_id", "binary", "command", "exit_code", "duration_ms",
                              "output_path", "output_bytes", "status", "completion_task_id"}
    session_node = lines[0]["event_id"]
    assert completed["parent_id"] == session_node
    start = [line for line in lines if line["event_type"] == "task_start"][1]
    assert (start["source"], start["origin"]) == ("detached_shell", "completion")
    assert "shell_abandoned" not in kinds
    end = next(line for line in lines if line["event_type"] == "session_end")
    assert end["total_shell_calls"] == 1  # counted at shell_detached, as Murmur counts it


def test_work_still_running_when_the_session_exits_is_abandoned_and_killed(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([tool_response(FOREVER), text_response("left it")],
                        extra=lifecycle(0.5, False))
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="run it"), sinks=[sink])
    result = session.run()
    assert result.exit_status == "ok"
    call = sink.of(ev.ToolCallFinished)[0]
    assert "will not arrive" in call.output  # the model is told, under after_task: exit
    detached = sink.of(ev.ShellDetached)[0]
    abandoned = sink.of(ev.ShellAbandoned)
    assert [a.work_id for a in abandoned] == [detached.work_id]
    assert abandoned[0].exit_code is None and abandoned[0].reason is None
    assert not sink.of(ev.ShellCompleted)
    lines = trace_of(session)
    line = next(line for line in lines if line["event_type"] == "shell_abandoned")
    # Murmur's four fields for work still running, never a null exit code
    assert set(line) - {"event_type", "event_id", "parent_id", "session_id", "timestamp"} == {
        "work_id", "binary", "command", "running_ms"}
    kinds = [line["event_type"] for line in lines]
    assert kinds.index("shell_abandoned") < kinds.index("session_end")
    # the command did not outlive the session: its log ends with the kill
    log = (session.paths.accessible / detached.output_path).read_text()
    assert "started" in log and "Exit code: 137" in log


def test_a_command_within_its_grace_period_runs_as_before(make_capsule: CapsuleFactory,
                                                           murmur_home: Path) -> None:
    root = make_capsule([tool_response("echo quick"), text_response("ok")],
                        extra=lifecycle(30, False))
    sink = Collect()
    Session(load_capsule(root), LaunchOptions(task="t"), sinks=[sink]).run()
    assert [s.stdout for s in sink.of(ev.ShellExecuted)] == ["quick\n"]
    assert not sink.of(ev.ShellDetached)


def test_grace_zero_demotes_at_once_and_stop_records_the_reason(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([tool_response(FOREVER), text_response("started")],
                        extra=lifecycle(0, True))
    holder: dict[str, Session] = {}
    detached = threading.Event()

    def on(event: ev.Event) -> None:
        if isinstance(event, ev.ShellDetached):
            detached.set()
        if isinstance(event, ev.ShellAbandoned):
            holder["s"].inbox.close()

    sink = Watch(on)
    session = holder["s"] = Session(load_capsule(root), LaunchOptions(task="t"), sinks=[sink])
    runner = threading.Thread(target=session.run)
    runner.start()
    assert detached.wait(60)
    work_id = sink.of(ev.ShellDetached)[0].work_id
    background = session.tools.shell["bash"].background  # type: ignore[attr-defined]
    assert [w.state for w in background.items()] == ["running"]
    assert background.stop(work_id)
    runner.join(60)
    assert not runner.is_alive()
    abandoned = sink.of(ev.ShellAbandoned)
    assert [(a.work_id, a.reason, a.exit_code) for a in abandoned] == [
        (work_id, "stopped", 137)]
    assert not sink.of(ev.ShellCompleted)  # a stopped command's result is no task
    assert [t.origin for t in sink.of(ev.TaskStarted)] == ["user"]
    record = [json.loads(line) for line in
              (session.paths.session / "background.jsonl").read_text().splitlines()]
    assert [r["event"] for r in record] == ["detached", "abandoned"]


def test_work_of_a_killed_session_is_reported_lost_once_on_resume(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:

    from tui.core import session_index
    from tui.core.session_index import Resume

    root = make_capsule([tool_response(FOREVER), text_response("left running")],
                        extra=lifecycle(0.2, True))
    record = killed_once(root, murmur_home, "start it", "workdir/*/background.jsonl",
                         '"detached"', "demoted its command")
    old = record.parent
    work_id = json.loads(record.read_text().splitlines()[0])["work_id"]
    (root / "script.json").write_text(json.dumps([text_response("resumed"),
                                                  text_response("noted the loss")]))

    def resume() -> tuple[Session, Collect]:
        holder: dict[str, Session] = {}

        def on(event: ev.Event) -> None:
            if isinstance(event, ev.TaskStarted) and event.origin == "completion":
                holder["s"].inbox.close()
            if isinstance(event, ev.TaskEnded) and event.result == "resumed" and \
                    not holder["s"].inbox.pending():
                holder["s"].inbox.close()  # nothing was lost: no report task comes

        sink = Watch(on)
        entry = session_index.find(murmur_home, old.name)
        session = holder["s"] = Session(load_capsule(root), LaunchOptions(
            task="go on", resume=Resume(entry)), sinks=[sink])
        session.run()
        return session, sink

    session, sink = resume()
    tasks = sink.of(ev.TaskStarted)
    assert [(t.source, t.origin) for t in tasks][1:] == [("detached_lost", "completion")]
    assert work_id in tasks[1].text and "$ " + FOREVER in tasks[1].text
    lost = [line for line in read_jsonl(old / "trace.jsonl")
            if line["event_type"] == "shell_lost"]
    assert len(lost) == 1
    assert (lost[0]["work_id"], lost[0]["session_id"]) == (work_id, old.name)
    assert lost[0]["parent_id"] == read_jsonl(old / "trace.jsonl")[0]["event_id"]
    assert lost[0]["reconciled_by_session"] == session.session_id
    assert lost[0]["reconciled_task_id"] == tasks[1].task_id
    assert any(w.code == "W-SHELL-LOST" for w in sink.of(ev.Warning))
    # a second resume of the same session reports nothing again
    (root / "script.json").write_text(json.dumps([text_response("resumed")]))
    _, again = resume()
    assert [t.origin for t in again.of(ev.TaskStarted)] == ["user"]
    assert len([line for line in read_jsonl(old / "trace.jsonl")
                if line["event_type"] == "shell_lost"]) == 1


def test_a_logs_folder_that_is_a_link_is_said_to_the_model_and_on_the_screen(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    workdir, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    workdir.mkdir()
    elsewhere.mkdir()
    (workdir / "logs").symlink_to(elsewhere)  # what the model's shell could do
    root = make_capsule([tool_response(WAIT_FOR_GO), text_response("started it"),
                         text_response("it finished")], extra=lifecycle(0.2, True))
    holder: dict[str, Session] = {}

    def on(event: ev.Event) -> None:
        if isinstance(event, ev.ShellDetached):
            (workdir / "go").write_text("")
        if isinstance(event, ev.TaskStarted) and event.origin == "completion":
            holder["s"].inbox.close()

    sink = Watch(on)
    session = holder["s"] = Session(load_capsule(root), LaunchOptions(
        task="run it", workdir=workdir), sinks=[sink])
    assert session.run().exit_status == "ok"
    detached = sink.of(ev.ShellDetached)[0]
    log = workdir / detached.output_path
    why = f"{workdir / 'logs'}: a symbolic link, not a folder: no log is written through it"
    call = sink.of(ev.ToolCallFinished)[0]
    assert f"Its output is NOT kept: {why}" in call.output  # the model is told
    assert "Its output goes to" not in call.output
    warned = [w.text for w in sink.of(ev.Warning) if w.code == "W-SHELL-LOG"]
    assert warned == [f"background work {detached.work_id}: its output is not kept in "
                      f"{log}: {why}"]  # the screen is told, once
    completion = sink.of(ev.TaskStarted)[1]
    assert f"Full output: not kept ({why})" in completion.text
    assert not list(elsewhere.iterdir())  # nothing was written through the link


def test_the_background_record_is_redacted_and_private(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    from tui.core.text.secrets import remember

    key = "sk-background-" + "7q" * 16
    remember(key)  # as a provider key resolved for the session is
    root = make_capsule([tool_response(f"{WAIT_FOR_GO}; echo {key}"), text_response("started"),
                         text_response("done")], extra=lifecycle(0.2, True))
    holder: dict[str, Session] = {}

    def on(event: ev.Event) -> None:
        if isinstance(event, ev.ShellDetached):
            (holder["s"].paths.accessible / "go").write_text("")
        if isinstance(event, ev.TaskStarted) and event.origin == "completion":
            holder["s"].inbox.close()

    old = os.umask(0o022)
    try:
        session = holder["s"] = Session(load_capsule(root), LaunchOptions(task="run it"),
                                        sinks=[Watch(on)])
        assert session.run().exit_status == "ok"
    finally:
        os.umask(old)
    record = session.paths.session / "background.jsonl"
    text = record.read_text()
    assert key not in text and "[redacted]" in text
    assert [json.loads(line)["event"] for line in text.splitlines()] == ["detached", "completed"]
    assert record.stat().st_mode & 0o777 == 0o600
    assert record.parent.stat().st_mode & 0o777 == 0o700
