"""A shell command stops when told and never outlives its call or the supervisor: real
subprocesses, real signals, pids checked through /proc."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory, read_jsonl, run_cli
from tests.responses import text_response, tool_response
from tests.unit.processes import (
    FAMILY,
    Seen,
    ended,
    family,
    seen,
)
from tests.waits import block_until
from tui.core.cancel import CancelToken
from tui.core.shell.process import running_groups
from tui.core.shell.tool import ShellTool

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


def make_tool(tmp_path: Path, deadline: float | None = None) -> ShellTool:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    return ShellTool(("bash", "sleep"), workdir, workdir / "logs", deadline_seconds=deadline)


def call(tool: ShellTool, command: str, cancel: CancelToken | None = None):  # type: ignore[no-untyped-def]
    return tool.run("bash", json.dumps({"command": command}), cancel)


def gone(*processes: Seen) -> bool:
    block_until(lambda: not any(p.alive() for p in processes),
                what=lambda: [p.pid for p in processes if p.alive()])
    return True


def test_a_command_past_its_deadline_is_killed_with_its_children(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, deadline=3)
    result = call(tool, FAMILY)
    assert result.stopped == "timeout" and result.exit_code == 128 + 9
    assert result.stdout == "started\n"
    assert result.text.endswith(
        "\n\nTimed out after 3 s (capabilities.limits.deadline_seconds); the command was "
        "killed.")
    for name in ("leader.pid", "grand.pid"):
        block_until(lambda name=name: ended(tool.workdir / name), what=name)  # type: ignore[misc]
    assert running_groups() == ()


def test_cancel_mid_run_kills_the_whole_group(tmp_path: Path) -> None:
    tool = make_tool(tmp_path)
    cancel = CancelToken()
    processes: list[Seen] = []

    def cancel_once_running() -> None:
        processes.extend(family(tool.workdir))
        cancel.set()

    watcher = threading.Thread(target=cancel_once_running)
    watcher.start()
    result = call(tool, FAMILY, cancel)
    watcher.join()
    assert result.stopped == "canceled" and result.exit_code == 128 + 9
    assert result.text.endswith("\n\nCanceled; the command was killed.")
    assert len(processes) == 2 and gone(*processes)


def test_the_call_ends_when_the_command_exits_and_takes_its_background_jobs(
        tmp_path: Path) -> None:
    """A background job holding stdout open does not keep the call waiting for the
    deadline, and does not outlive the call."""
    tool = make_tool(tmp_path)
    result = call(tool, "sh -c 'echo $$ > grand.pid; exec sleep 300' & "
                        "until [ -s grand.pid ]; do sleep 0.01; done; echo done")
    assert result.stopped is None and result.exit_code == 0 and result.stdout == "done\n"
    block_until(lambda: ended(tool.workdir / "grand.pid"))


def test_a_process_that_left_the_group_neither_holds_the_call_nor_keeps_writing(
        tmp_path: Path) -> None:
    """`setsid` takes a process out of reach of the group kill; it still cannot keep the call
    waiting, and once the call has returned its output pipe is closed under it."""
    tool = make_tool(tmp_path)
    pid_file = tool.workdir / "escaped.pid"
    try:
        result = call(tool, "setsid sh -c 'echo $$ > escaped.pid; exec yes' & "
                            "until [ -s escaped.pid ]; do sleep 0.01; done; echo done")
        assert result.stopped is None and result.exit_code == 0
        assert result.stdout.startswith(("done\n", "y\n"))
        block_until(lambda: ended(pid_file))
    finally:
        if pid_file.is_file() and not ended(pid_file):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_a_command_killed_by_its_deadline_is_a_failed_tool_call_in_the_record(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([tool_response("echo begun; sleep 60"), text_response("gave up")],
                        extra="capabilities:\n  shell:\n    allow: [bash]\n"
                              "  limits:\n    deadline_seconds: 1\n", shell=())
    result = run_cli("launch", str(root), "--headless", "--json", "--task", "go")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    shell = next(e for e in events if e["event"] == "ShellExecuted")
    assert shell["exit_code"] == 137 and shell["stdout"] == "begun\n"
    finished = next(e for e in events if e["event"] == "ToolCallFinished")
    assert finished["status"] == "error"
    assert "Timed out after 1 s (capabilities.limits.deadline_seconds)" in finished["output"]
    record = next((murmur_home / "conversations").rglob("*.jsonl"))
    tool_line = next(m for m in read_jsonl(record) if m["role"] == "tool")
    assert tool_line["is_error"] is True


# -- the supervisor goes away while a command runs -------------------------------------------------
SUPERVISOR = textwrap.dedent("""\
    import json, os, signal, sys, threading, time
    from pathlib import Path
    from tui.core.shell.process import running_groups, watchdog_pid
    from tui.core.shell.tool import ShellTool

    workdir, binary, command, how = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    tool = ShellTool(("bash", "sleep"), workdir, workdir / "logs")

    def known():  # the command runs and its group is written down: the test may stop us
        while not ((workdir / "grand.pid").is_file() and running_groups()):
            time.sleep(0.01)
        (workdir / "known").touch()

    threading.Thread(target=known, daemon=True).start()

    def run():
        tool.run(binary, json.dumps({"command": command}))

    if how == "rewatch":  # something kills the watchdog between two commands
        tool.run("bash", json.dumps({"command": "true"}))
        first = watchdog_pid()
        os.kill(first, signal.SIGKILL)
        while watchdog_pid() == first:
            time.sleep(0.01)
    if how in ("main", "rewatch"):
        run()
        sys.exit(3)  # only reached if the command ended on its own
    threading.Thread(target=run, daemon=True).start()
    while not (workdir / "grand.pid").is_file():
        time.sleep(0.01)
    time.sleep(0.1)
    if how == "raise":
        raise RuntimeError("the supervisor fails while a command runs")
    sys.exit(0)
""")


def start_supervisor(workdir: Path, command: str, how: str = "main",
                     binary: str = "bash") -> subprocess.Popen[bytes]:
    workdir.mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-c", SUPERVISOR, str(workdir), binary, command,
                             how], stderr=subprocess.DEVNULL)


def test_a_process_these_tests_start_takes_the_signals_they_send() -> None:
    """Even when the run was started with them ignored (`.ci/run &` ignores SIGINT, `nohup`
    SIGHUP): tests/conftest.py gives the children their default back."""
    shown = subprocess.run(
        [sys.executable, "-c", "import signal; print([signal.getsignal(s) == signal.SIG_IGN "
                               "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)])"],
        capture_output=True, text=True, timeout=60)
    assert shown.stdout.strip() == "[False, False, False]", shown.stderr


@pytest.mark.parametrize("how, signum", [
    ("main", signal.SIGTERM), ("main", signal.SIGHUP), ("main", signal.SIGINT),
    ("main", signal.SIGKILL), ("rewatch", signal.SIGKILL), ("exit", None), ("raise", None),
], ids=["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL", "SIGKILL-after-watchdog-killed",
        "normal-exit", "exception"])
def test_a_supervisor_that_goes_away_leaves_no_process_of_the_command(
        tmp_path: Path, how: str, signum: int | None) -> None:
    supervisor = start_supervisor(tmp_path / "work", FAMILY, how)
    processes: list[Seen] = []
    try:
        processes += family(tmp_path / "work")
        block_until(lambda: (tmp_path / "work" / "known").exists())
        if signum is not None:
            supervisor.send_signal(signum)
        assert supervisor.wait(timeout=60) != 3
        assert gone(*processes)
    finally:
        supervisor.kill()
        supervisor.wait()
        for process in processes:
            process.kill()


# A supervisor slow to get on after each Popen (a busy thread holds the interpreter for long
# stretches): each command has started before the supervisor has written down its group. On
# SIGTERM it does what the CLI does on a second signal.
STARTING = textwrap.dedent("""\
    import json, os, signal, sys, threading
    from pathlib import Path
    from tui.core.shell.process import kill_running
    from tui.core.shell.tool import ShellTool

    workdir = Path(sys.argv[1])
    sys.setswitchinterval(0.05)

    def stop(signum, frame):
        kill_running()
        os._exit(143)

    signal.signal(signal.SIGTERM, stop)

    def busy():
        while True:
            pass

    threading.Thread(target=busy, daemon=True).start()
    tool = ShellTool(("bash",), workdir, workdir / "logs")

    def run():
        tool.run("bash", json.dumps({"command": "echo $$ > started.$$; exec sleep 300"}))

    for _ in range(4):
        threading.Thread(target=run, daemon=True).start()
    run()  # on the main thread, where Ctrl-C lands
""")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_supervisor_stopped_while_it_starts_commands_leaves_none_of_them_running(
        tmp_path: Path, signum: int) -> None:
    """Stopped the moment the first command shows it runs — the supervisor may be inside
    Popen still, on this thread or another — nothing it started outlives it. (A SIGKILL in
    that instant: the test below.)"""
    for attempt in range(2):
        work = tmp_path / f"work{attempt}"
        work.mkdir()
        supervisor = subprocess.Popen([sys.executable, "-c", STARTING, str(work)],
                                      stderr=subprocess.DEVNULL)
        try:
            block_until(lambda work=work: any(  # type: ignore[misc]
                path.read_text().strip() for path in work.glob("started.*")))
            supervisor.send_signal(signum)
            supervisor.wait(timeout=60)
            started = list(work.glob("started.*"))
            block_until(lambda started=started: all(  # type: ignore[misc]
                not path.read_text().strip() or ended(path) for path in started),
                what=lambda started=started: [  # type: ignore[misc]
                    path.read_text() for path in started if not ended(path)])
        finally:
            supervisor.kill()
            supervisor.wait()
            for path in work.glob("started.*"):
                if path.read_text().strip() and not ended(path):
                    os.kill(int(path.read_text()), signal.SIGKILL)


# A supervisor SIGKILLed in the worst instant: its command's Popen has returned, its group is
# not yet announced to the watchdog. (subprocess.Popen is wrapped to die right there; nothing
# of murmur-tui is replaced.)
KILLED_IN_THE_INSTANT = textwrap.dedent("""\
    import json, os, signal, subprocess, sys
    from pathlib import Path
    from tui.core.shell.tool import ShellTool

    workdir = Path(sys.argv[1])
    real = subprocess.Popen

    class DiesAfterStart(real):
        def __init__(self, argv, *args, **kwargs):
            super().__init__(argv, *args, **kwargs)
            if argv[0] != "/bin/sh":  # the watchdog starts first, as it must
                stat = Path(f"/proc/{self.pid}/stat").read_text()
                start = stat[stat.rindex(")") + 2:].split()[19]
                (workdir / "command.pid").write_text(f"{self.pid} {start}")
                os.kill(os.getpid(), signal.SIGKILL)

    subprocess.Popen = DiesAfterStart
    ShellTool(("bash",), workdir, workdir / "logs").run(
        "bash", json.dumps({"command": "sh -c 'echo $$ > grand.pid; exec sleep 300' & "
                                       "exec sleep 300"}))
""")


def test_a_supervisor_killed_before_its_command_is_announced_leaves_nothing_running(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    supervisor = subprocess.Popen([sys.executable, "-c", KILLED_IN_THE_INSTANT, str(work)],
                                  stderr=subprocess.DEVNULL)
    processes: list[Seen] = []
    try:
        assert supervisor.wait(timeout=60) == -signal.SIGKILL
        pid, start = (work / "command.pid").read_text().split()
        processes.append(Seen(int(pid), int(start)))
        with contextlib.suppress(AssertionError):  # it may never have started, or be gone
            block_until(lambda: (work / "grand.pid").exists()
                        and bool((work / "grand.pid").read_text().strip()), within=10)
            processes.append(seen(int((work / "grand.pid").read_text())))
        assert gone(*processes)
    finally:
        supervisor.kill()
        supervisor.wait()
        for process in processes:
            process.kill()


def shown_output(cli: subprocess.Popen[bytes], text: str, timeout: float = 60.0) -> bool:
    """Read `launch --json` until a ShellOutput event holds `text` (False at the end of its
    output or after `timeout`)."""
    assert cli.stdout is not None
    ends = time.monotonic() + timeout
    pending = b""
    while time.monotonic() < ends:
        ready, _, _ = select.select([cli.stdout], [], [], max(0.0, ends - time.monotonic()))
        if not ready:
            break
        chunk = os.read(cli.stdout.fileno(), 65536)
        if not chunk:
            return False
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            event = json.loads(line)
            if event.get("event") == "ShellOutput" and text in event.get("text", ""):
                return True
    return False


def test_a_headless_session_killed_mid_command_leaves_nothing_running(
        make_capsule: CapsuleFactory, tmp_path: Path) -> None:
    root = make_capsule([tool_response(FAMILY), text_response("never")],
                        extra="lifecycle:\n  shell_grace_secs: 600\n")  # stays the call's
    work = tmp_path / "given-workdir"
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for name in ("leader.pid", "grand.pid"):
            (work / name).unlink(missing_ok=True)
        cli = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root), "--headless",
                                "--json", "--workdir", str(work), "--task", "go"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        processes: list[Seen] = []
        try:
            processes += family(work)
            # its output read: the session is past starting it (its group is known)
            assert shown_output(cli, "started"), "the command's output never showed"
            cli.send_signal(signum)
            cli.wait(timeout=60)
            assert gone(*processes), signal.Signals(signum).name
        finally:
            cli.kill()
            cli.wait()
            for process in processes:
                process.kill()
