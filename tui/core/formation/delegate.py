"""`delegate-task` (spec murmur-newest §9.1): the tool `capabilities.spawn.allow` makes, which
starts a child session of another capsule and returns at once; the child's outcome arrives
later, in the task that delegated.

The runtime, never the model, picks where the child runs: `<workdir>/.murmur/children/
<capsule>-<16 hex>/` (0700). The child is `python -m tui launch <capsule folder> --headless
--json --task-file /dev/stdin --workdir <that folder>` in its own process group, its task on
its stdin, with `MURMUR_SPAWNER` and the read end of a spawner lifeline (tui/core/formation/
spawner.py). The call returns `started` once the child's session has started (its
`SessionStarted` line on its stdout names its session); a watcher then waits for the child's
process to end — at most `lifecycle.delegation_deadline_secs` — reads the `completion.json` the
child wrote (or writes `crashed` / `terminated` in its stead) and reports the outcome:
`DelegationEnded` and an arrival for the task (`Awaiting`, tui/core/formation/awaiting.py, wired in
tui/core/loop/setup.py). When the parent session ends, every lifeline closes: the children wind
down and, after `WIND_DOWN` seconds, their process groups are killed; a canceled task does the
same to its own children (`stop_task`, then `settle`). A child whose manifest holds more than
this session's is refused before it starts (the spawn envelope, tui/core/formation/envelope.py).

murmur-tui has no `mur-roost`: a `spawn.allow` entry is an installed capsule (found in the
project store beside this capsule, then the global one, as a session finds its artifacts) or a
capsule folder relative to this capsule (docs/formations.md, "Delegation").
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tui.core import ids
from tui.core.cancel import CancelToken
from tui.core.errors import LaunchError, ManifestError, MurmurTuiError
from tui.core.events import vocabulary as ev
from tui.core.formation import spawner as sp
from tui.core.formation.envelope import excess
from tui.core.formation.spawn_allow import Allowed, capsule_folder, input_schema
from tui.core.fs.private_files import make_private_dirs
from tui.core.fs.safe_read import read_bounded
from tui.core.manifest.model import Capsule
from tui.core.manifest.reader import load_capsule
from tui.core.running.record_keys import safe_session_id
from tui.core.text.fence import fence
from tui.core.tools.table import SILENT, CallProgress, ToolCall, ToolOutcome, ToolSpec, refusal

TOOL_NAME = "delegate-task"
STAGED_MANIFEST = (f"name: {TOOL_NAME}\nversion: 0.0.0\nruntime: tool\n"
                   "implementation: native\n")
START_WITHIN = 60.0  # seconds a child has to start its session
WIND_DOWN = 20.0  # seconds children get to end once the parent's session ended
KILL_WAIT = 5.0  # after SIGKILL of a group, at most this long for the process to be reaped
RESULT_BYTES = 64 * 1024  # of a child's result, what the task reads
# the formation's own wiring a child does not inherit (it keeps MURMUR_FORMATION_ID only)
_NOT_INHERITED = ("MURMUR_FORMATION_CHANNEL", "MURMUR_FORMATION_LIFELINE",
                  "MURMUR_FORMATION_PEERS", sp.SPAWNER_ENV, sp.LIFELINE_ENV)

Expect = Callable[[str, str], None]  # (task_id, delegation_id)
Arrive = Callable[[str, str, str, str, str], None]  # (task, dlg, capsule, outcome, text)


@dataclass
class _Child:
    delegation_id: str
    task_id: str
    capsule: str
    version: str
    folder: Path  # the child's workdir
    process: subprocess.Popen[bytes]
    lifeline: int  # the write end the parent holds
    started: float = field(default_factory=time.monotonic)
    session_id: str | None = None
    seen_start: threading.Event = field(default_factory=threading.Event)
    parent_ended: bool = False
    timed_out: bool = False
    canceled: bool = False  # the task that delegated was canceled
    watcher: threading.Thread | None = None


class DelegateTool:
    """The `delegate-task` tool of one session (a ToolHandler)."""

    def __init__(self, capsule: Capsule, allowed: tuple[Allowed, ...], workdir: Path, home: Path,
                 identity: Mapping[str, str], emit: Callable[[ev.Event], object],
                 expect: Expect, arrive: Arrive) -> None:
        self._capsule, self._allowed, self._workdir, self._home = capsule, allowed, workdir, home
        self._session_id = identity.get("MURMUR_SESSION_ID", "")
        self._context_id = identity.get("MURMUR_CONTEXT_ID", "")
        self._emit, self._expect, self._arrive = emit, expect, arrive
        self._deadline = capsule.lifecycle.delegation_deadline_secs
        self._live: dict[str, _Child] = {}
        self._lock = threading.Lock()
        self._closed = False
        names = ", ".join(t.label for t in allowed)
        self.spec = ToolSpec(TOOL_NAME, "Start a child session of another capsule with a task "
                             f"(allowed: {names}). Returns at once with status started; the "
                             "child's outcome arrives when your turn ends.",
                             input_schema(allowed), "runtime")

    # -- the call ---------------------------------------------------------------------------
    def call(self, call: ToolCall, cancel: CancelToken,
             progress: CallProgress = SILENT) -> ToolOutcome:
        started = time.monotonic()
        capsule, version, task = (call.input.get(key) for key in ("capsule", "version", "task"))
        shown = capsule if isinstance(capsule, str) else "?"
        shown_version = version if isinstance(version, str) else ""
        target = next((t for t in self._allowed if t.name == capsule), None)
        problem: str | None = None
        if target is None:
            allowed = ", ".join(t.name for t in self._allowed)
            problem = (f"capsule {json.dumps(capsule)} is not one capabilities.spawn.allow "
                       f"lets this session start (capsule is one of: {allowed})")
        elif not isinstance(version, str) or not version.strip():
            problem = "version: give the capsule's exact version (a string)"
        elif not isinstance(task, str) or not task.strip():
            problem = "task: give the child's task (a non-empty string)"
        if problem is None:
            assert target is not None and isinstance(version, str) and isinstance(task, str)
            try:
                folder = capsule_folder(self._capsule, self._home, target, version)
                child = target.folder or load_capsule(folder)
                problem = excess(self._capsule, child)
                if problem is None:
                    return self._start(call, target, version, task, folder, cancel, started)
            except ManifestError as exc:
                problem = f"the child's manifest is refused: {str(exc).splitlines()[0]}"
            except MurmurTuiError as exc:
                problem = exc.text
            except OSError as exc:  # the child's folder or its log (a full disk, say)
                problem = f"the child could not be set up ({exc.strerror or exc})"
        self._ended(call.task_id, None, shown, shown_version, None, started, "refused", problem)
        return refusal(f"error: {TOOL_NAME}: {problem}", "runtime", _ms(started))

    def _start(self, call: ToolCall, target: Allowed, version: str, task: str, folder: Path,
               cancel: CancelToken, started: float) -> ToolOutcome:
        with self._lock:
            if self._closed:
                raise LaunchError("the session is ending")
        dlg = ids.mint("dlg")
        workdir = self._workdir / ".murmur" / "children" / \
            f"{target.name}-{secrets.token_hex(8)}"
        make_private_dirs(workdir)
        spawner = sp.Spawner(self._door_url(), self._session_id, self._context_id, "trusted",
                             dlg)
        log = os.open(workdir / "launch.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        read_end, write_end = os.pipe()  # the spawner lifeline: the child holds the read end
        env = {key: value for key, value in os.environ.items() if key not in _NOT_INHERITED}
        env.update({"MURMUR_HOME": str(self._home), sp.SPAWNER_ENV: spawner.env_value(),
                    sp.LIFELINE_ENV: str(read_end)})
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "tui", "launch", str(folder), "--headless", "--json",
                 "--task-file", "/dev/stdin", "--workdir", str(workdir)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=workdir,
                env=env, pass_fds=(read_end,), start_new_session=True)
        except OSError as exc:
            os.close(write_end)
            raise LaunchError(f"the child could not be started ({exc.strerror or exc})"
                              ) from None
        finally:
            os.close(read_end)
            os.close(log)
        child = _Child(dlg, call.task_id, target.name, version, workdir, process, write_end)
        assert process.stdin is not None and process.stdout is not None
        threading.Thread(target=self._read_stdout, args=(child, process.stdout),
                         name=f"delegation-{dlg}-out", daemon=True).start()
        with contextlib.suppress(OSError):  # a child that died first is told below
            process.stdin.write(task.encode("utf-8", "replace"))
        with contextlib.suppress(OSError):
            process.stdin.close()
        why = self._wait_for_start(child, cancel)
        if why is not None:
            self._stop(child, kill=True)
            raise LaunchError(why)
        assert child.session_id is not None
        with self._lock:
            self._live[dlg] = child
        self._expect(call.task_id, dlg)
        self._emit(ev.DelegationStarted(
            task_id=call.task_id, delegation_id=dlg, capsule=target.name, version=version,
            child_session_id=child.session_id, child_workdir=str(workdir)))
        child.watcher = threading.Thread(target=self._watch, args=(child,),
                                         name=f"delegation-{dlg}", daemon=True)
        child.watcher.start()
        data = {"delegation_id": dlg, "capsule": target.name, "version": version,
                "child_session_id": child.session_id, "status": "started"}
        text = json.dumps(data, separators=(",", ":"))
        return ToolOutcome(status="passed", text=f"Delegated {target.name}: started\n{text}",
                           fenced=False, kind="runtime", duration_ms=_ms(started),
                           summary=f"Delegated {target.name}: started", data=text)

    def _wait_for_start(self, child: _Child, cancel: CancelToken) -> str | None:
        """None once the child's session started; else why it did not."""
        ends = time.monotonic() + START_WITHIN
        while not child.seen_start.wait(0.05):
            if cancel.is_set():
                return "canceled before the child started"
            if child.process.poll() is not None and not child.seen_start.wait(0.5):
                return f"the child ended before its session started{self._launch_log(child)}"
            if time.monotonic() >= ends:
                return f"the child's session did not start within {START_WITHIN:g} s"
        return None

    def _launch_log(self, child: _Child) -> str:
        try:
            text = read_bounded(child.folder / "launch.log", 2000, tail=True).data.decode(
                "utf-8", "replace").strip()
        except MurmurTuiError:
            return ""
        return f": {text}" if text else ""

    @staticmethod
    def _read_stdout(child: _Child, stdout: IO[bytes]) -> None:
        """The child's events, one JSON line each: its `SessionStarted` names its session;
        the rest is read and dropped so the child never blocks on a full pipe."""
        with stdout:
            for line in stdout:
                if child.seen_start.is_set():
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("event") == "SessionStarted" \
                        and isinstance(event.get("session_id"), str) \
                        and safe_session_id(event["session_id"]):  # it names a folder
                    child.session_id = event["session_id"]
                    child.seen_start.set()

    # -- the outcome ------------------------------------------------------------------------
    def _watch(self, child: _Child) -> None:
        remaining = self._deadline - (time.monotonic() - child.started)
        try:
            child.process.wait(timeout=max(remaining, 0))
        except subprocess.TimeoutExpired:
            child.timed_out = True
            self._stop(child, kill=False)
        assert child.session_id is not None
        session = child.folder / ".murmur" / child.session_id
        record = sp.read_completion(session)
        if record is None:
            record = self._stand_in(child, session)
        status = str(record.get("status"))
        detail = record.get("detail") if isinstance(record.get("detail"), str) else None
        if child.canceled:
            outcome, reason = "failed", (f"the task that delegated it was canceled: the child "
                                         f"was stopped (its session ended {status})")
        elif child.timed_out:
            outcome, reason = "timed_out", (f"the child did not end within "
                                            f"{self._deadline:g} s (lifecycle."
                                            "delegation_deadline_secs); it was stopped")
        elif status == "ok":
            outcome, reason = "completed", None
        else:
            outcome, reason = "failed", f"the child's session ended {status}" + (
                f": {detail}" if detail else "")
        result = _result(session / "out" / "result.txt")
        self._ended(child.task_id, child.delegation_id, child.capsule, child.version,
                    child.session_id, child.started, outcome, reason)
        with self._lock:
            self._live.pop(child.delegation_id, None)
        head = (f"Delegation {child.delegation_id} to {child.capsule}@{child.version} "
                f"(child session {child.session_id}) {outcome}")
        text = f"{head}: {reason}" if reason else head
        if result:
            text += ". Its result:\n" + fence(f"delegation:{child.capsule}", result)
        self._arrive(child.task_id, child.delegation_id, child.capsule, outcome, text)

    def _stand_in(self, child: _Child, session: Path) -> dict[str, Any]:
        """The completion record of a child that wrote none: `terminated` when the parent
        stopped it, else `crashed`; written where the child would have (`reported_by:
        parent`)."""
        code = child.process.returncode
        how = (f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0
               else f"exited with code {code}")
        stopped = child.timed_out or child.parent_ended or child.canceled
        status = "terminated" if stopped else "crashed"
        record = sp.completion(
            sp.Spawner(None, self._session_id, self._context_id, "trusted",
                       child.delegation_id), child.capsule, child.version,
            child.session_id or "", status, child.folder, _ms(child.started),
            detail=f"the child {how} and left no completion record", reported_by="parent")
        with contextlib.suppress(OSError, MurmurTuiError):
            make_private_dirs(session)
            sp.write_completion(session, record)
        return record

    def _ended(self, task_id: str, dlg: str | None, capsule: str, version: str,
               child_session: str | None, started: float, outcome: str,
               reason: str | None) -> None:
        self._emit(ev.DelegationEnded(
            task_id=task_id, delegation_id=dlg, capsule=capsule, version=version,
            child_session_id=child_session, duration_ms=_ms(started), outcome=outcome,
            reason=reason))

    def _let_go(self, child: _Child) -> None:
        """Close the child's lifeline, once (the descriptor's number may be reused after)."""
        with self._lock:
            fd, child.lifeline = child.lifeline, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _stop(self, child: _Child, kill: bool) -> None:
        """Close the child's lifeline (it winds down); with `kill`, or when it has not ended
        after `WIND_DOWN`, kill its process group."""
        self._let_go(child)
        if not kill:
            try:
                child.process.wait(timeout=WIND_DOWN)
                return
            except subprocess.TimeoutExpired:
                pass
        if child.process.poll() is None:  # not reaped yet: its group id is still its own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.process.wait(timeout=KILL_WAIT)

    def stop_task(self, task_id: str) -> tuple[str, ...]:
        """The task `task_id` was canceled: its live children are told so and their lifelines
        closed (each winds down); their delegation ids. `settle` waits for them."""
        with self._lock:
            live = [c for c in self._live.values() if c.task_id == task_id and not c.canceled]
            for child in live:
                child.canceled = True
                if child.lifeline >= 0:  # under the lock: the descriptor is still the pipe
                    with contextlib.suppress(OSError):  # a child gone already reads nothing
                        os.write(child.lifeline, sp.CANCELED)
        for child in live:
            self._let_go(child)
        return tuple(child.delegation_id for child in live)

    def settle(self, ids: tuple[str, ...]) -> None:
        """Wait for the children `ids` to end and their outcomes to be reported; a child still
        running after `WIND_DOWN` is killed."""
        with self._lock:
            children = [c for c in self._live.values() if c.delegation_id in ids]
        self._settle(children)

    def close(self) -> None:
        """The parent's session ends: every child's lifeline closes, each winds down (its
        outcome is reported), and a child still running after `WIND_DOWN` is killed."""
        with self._lock:
            self._closed = True
            live = list(self._live.values())
        for child in live:
            child.parent_ended = True
            self._let_go(child)
        self._settle(live)

    def _settle(self, live: list[_Child]) -> None:
        ends = time.monotonic() + WIND_DOWN
        for child in live:
            if child.watcher is not None:
                child.watcher.join(max(ends - time.monotonic(), 0))
        for child in live:
            if child.watcher is not None and child.watcher.is_alive():
                self._stop(child, kill=True)
                child.watcher.join(KILL_WAIT)

    def _door_url(self) -> str | None:
        """This session's door, from its running record (null when it serves none)."""
        from tui.core.running.records import read_records

        try:
            found_all = read_records(self._home)
        except MurmurTuiError:
            return None
        for found in found_all:
            record = found.record
            if record is not None and record.session_id == self._session_id and record.url:
                return f"http://{record.url}"
        return None


def _result(path: Path) -> str:
    try:
        return read_bounded(path, RESULT_BYTES).data.decode("utf-8", "replace")
    except MurmurTuiError:
        return ""


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
