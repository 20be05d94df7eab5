"""`murmur-tui cancel SESSION [TASK]` and `murmur-tui stop SESSION [--timeout S]`: the fleet's
`x` and `S` as commands for scripts, as Murmur v0.11's `mur cancel` and `mur stop` do them
(spec §6.4; docs/fleet.md "Cancel and stop from a script").

Both name a session by Murmur's addresses among the running records (id, 4+ character suffix,
`@N`; tui/core/trace/address.py) and speak to its door with the operator token of its running
record, through the one door client (tui/core/a2a/client.py) once the door is verified to be the
session's own (tui/core/running/probe.py). Exit 0 when done; 1, with Murmur's code, when the
session is unknown or has stopped (E-RUN-022), its door cannot be reached (E-RUN-023, cancel),
its process cannot be confirmed or would not end (E-RUN-024, stop), or the door refused.
Both list the session's delegations, from its children's running records
(tui/core/formation/live_children.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.commands.exits import EXIT_NOT_OK, EXIT_OK

if TYPE_CHECKING:
    from tui.core.a2a.client import DoorClient
    from tui.core.formation.live_children import LiveChild
    from tui.core.running.records import RunningRecord

RECORD_WAIT = 5.0  # seconds `stop` waits for the trace to record each canceled task's end
KILL_WAIT = 5.0  # seconds a SIGKILLed process has to be gone
POLL = 0.05
DEFAULT_TIMEOUT = 10.0


def add_parsers(commands: Any) -> None:
    cancel = commands.add_parser(
        "cancel", help="cancel a running session's task through its door (`mur cancel`)",
        description="Cancel one task of a running session: SESSION is its id, its last 4+ "
                    "characters or @N (from `murmur-tui ps`); TASK its tsk_ id (default: the "
                    "task the session's trace shows running). Prints the task, its state and "
                    "what it left running.")
    cancel.add_argument("session", metavar="SESSION")
    cancel.add_argument("task", nargs="?", metavar="TASK")
    stop = commands.add_parser(
        "stop", help="stop a running session: session/stop, then SIGTERM, then SIGKILL "
                     "(`mur stop`)",
        description="Stop a running session as `mur stop` does: ask its door to stop "
                    "(session/stop), wait up to 5 s for the trace to record each canceled "
                    "task's end (and up to 5 s for its delegated children to end), send "
                    "SIGTERM, and SIGKILL after --timeout seconds.")
    stop.add_argument("session", metavar="SESSION",
                      help="a session address, or a formation id (frm_…): every member")
    stop.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                      help="seconds between SIGTERM and SIGKILL (default 10; 0: SIGKILL at once)")


def run(args: argparse.Namespace) -> int:
    from tui.core.errors import MurmurTuiError
    from tui.core.fs.paths import murmur_home

    try:
        if args.command == "cancel":
            return cancel(murmur_home(), args.session, args.task)
        return stop(murmur_home(), args.session, args.timeout)
    except MurmurTuiError as exc:  # Murmur ends these with 1, not murmur-tui's 2 (bad input)
        return _failed(str(exc))


def _failed(text: str) -> int:
    from tui.core.text.secrets import redact

    sys.stderr.write(f"murmur-tui: error: {redact(text)}\n")
    return EXIT_NOT_OK


def say(lines: Iterator[str] | list[str]) -> None:
    from tui.core.text.printable import printable
    from tui.core.text.secrets import redact

    for line in lines:
        sys.stdout.write(redact(printable(line, keep_newlines=False)) + "\n")
    sys.stdout.flush()


def _record(home: Path, address: str) -> RunningRecord:
    from tui.core.trace.address import running_record

    return running_record(home, address)


def _door(home: Path, record: RunningRecord) -> DoorClient:
    """A client for the record's door, verified to answer for its session; the record's
    operator token goes only to the address found to be the session's own socket."""
    from tui.core.a2a.client import DoorClient
    from tui.core.errors import SessionNotFound
    from tui.core.running.probe import door_url, verify
    from tui.core.running.tokens import read_token

    token = read_token(home, record)
    verdict = verify(record, token=token)
    if verdict.state != "live":
        raise SessionNotFound(f"{record.session_id} cannot be reached: {verdict.reason}",
                              code="E-RUN-023")
    return DoorClient(door_url(record, verdict), token if verdict.address else None)


# -- cancel --------------------------------------------------------------------------------------
def cancel(home: Path, address: str, task_id: str | None) -> int:
    from tui.core.a2a.task import parse_task
    from tui.core.errors import DoorError, SessionNotFound
    from tui.core.formation.live_children import live_children

    record = _record(home, address)
    if task_id is None:
        task_id = _running_task(record)
    children = live_children(home, record.session_id)  # its delegations, before the cancel
    door = _door(home, record)
    try:
        try:
            answer = door.call(door.method("cancel"), {"id": task_id})
        except DoorError as exc:
            if exc.rpc_code == -32001:
                raise SessionNotFound(f"{record.session_id} holds no task {task_id}",
                                      code="E-RUN-022") from None
            if exc.rpc_code != -32002:
                raise
            # an already-ended task: its state is said, and nothing changes
            answer = door.call(door.method("get"), {"id": task_id})
        task = parse_task(answer, door.url)
        residue = _artifact_residue(answer)
        say([f"task:    {task.id}", f"state:   {task.state}",
             *(_running_line(item) for item in residue),
             *_delegations(children, home, record.session_id, residue)])
    finally:
        door.close()
    return EXIT_OK


def _running_task(record: RunningRecord) -> str:
    from tui.core.errors import SessionNotFound
    from tui.core.trace.task_ends import task_ends

    trace = Path(record.workdir) / "trace.jsonl"
    ends = task_ends(trace)
    if ends is None:
        raise SessionNotFound(f"name the task to cancel: {record.session_id}'s trace "
                              f"({trace}) cannot be read here to tell which one runs",
                              code="E-RUN-022")
    if not ends.running:
        raise SessionNotFound(f"{record.session_id} runs no task (its trace shows none "
                              "started and not ended)", code="E-RUN-022")
    return ends.running[-1]


def _artifact_residue(answer: Any) -> list[Mapping[str, Any]]:
    """The items of a canceled task's `residue` artifact (one data part each)."""
    task = answer.get("task", answer) if isinstance(answer, Mapping) else {}
    artifacts = task.get("artifacts") if isinstance(task, Mapping) else None
    for artifact in artifacts if isinstance(artifacts, list) else []:
        if isinstance(artifact, Mapping) and "residue" in (artifact.get("artifactId"),
                                                           artifact.get("name")):
            parts = artifact.get("parts")
            return [part["data"] for part in parts if isinstance(part, Mapping)
                    and isinstance(part.get("data"), Mapping)] if isinstance(parts, list) else []
    return []


def _running_line(item: Mapping[str, Any]) -> str:
    """`running: <id>  <kind>  <what>` — `wrk_…  detached shell  <command>`,
    `dlg_…  delegation  <capsule@version>` (Murmur's words; the delegation's keys are not
    known, so the likely ones are tried)."""
    def text(*keys: str) -> str:
        return next((str(item[key]) for key in keys if isinstance(item.get(key), str | int)
                     and not isinstance(item.get(key), bool)), "")

    ident = text("work_id", "delegation_id", "id") or "—"
    kind = text("kind").replace("_", " ") or "unknown"
    capsule, version = text("capsule", "capsule_name"), text("version", "capsule_version")
    what = text("command") or (f"{capsule}@{version}" if capsule and version else capsule) \
        or text("binary")
    return f"running: {ident}  {kind}  {what}".rstrip()


def _delegations(children: list[LiveChild], home: Path, session_id: str,
                 residue: list[Mapping[str, Any]]) -> list[str]:
    """The session's delegations (tui/core/formation/live_children.py) less those the door's
    residue listed already."""
    from tui.core.formation.live_children import delegation_lines

    said = frozenset(str(item.get("delegation_id")) for item in residue
                     if item.get("delegation_id") is not None)
    return delegation_lines(children, home, session_id, said)


# -- stop ----------------------------------------------------------------------------------------
def stop(home: Path, address: str, timeout: float) -> int:
    """A session (by its address), or every member of a formation (by its `frm_` id)."""
    from tui.core.errors import SessionNotFound

    if timeout < 0:
        raise SessionNotFound("--timeout is a number of seconds, 0 or more", code="E-RUN-022")
    from tui.core.trace.address import is_formation

    if is_formation(address):
        from tui.commands.stop_formation import stop_formation

        return stop_formation(home, address, timeout, stop_lines=stop_lines, say=say)
    say(stop_lines(home, _record(home, address), timeout))
    return EXIT_OK


def stop_lines(home: Path, record: RunningRecord, timeout: float) -> list[str]:
    """Stop one session whose process is confirmed: session/stop through its door, then the
    signals; what `stop` prints of it. SessionNotFound (E-RUN-024) when it would not end."""
    from tui.core.formation.live_children import live_children

    children = live_children(home, record.session_id)  # its delegations, before the stop
    canceled, residue, why = _ask_to_stop(home, record)
    trace = Path(record.workdir) / "trace.jsonl"
    _wait_recorded(record, trace, canceled)
    if children:  # the session winds its delegations down: a signal now would orphan them
        _wait_children(home, record)
    sent = _signal(record, timeout)
    lines = [f"stopped: {record.session_id}",
             f"capsule: {record.capsule_name}@{record.capsule_version}",
             f"signal:  {' then '.join(sent)}" if sent else
             "signal:  none — the session ended on its own after session/stop"]
    lines += [f"canceled: {task}" for task in canceled]
    delegations = _delegations(children, home, record.session_id, residue)
    if why is not None:
        lines.append(f"residue: unknown — the capsule could not be asked: {why}")
    lines += [_running_line(item) for item in residue] + delegations
    if why is None and not residue and not any(x.startswith("running:") for x in delegations):
        lines.append("residue: nothing else was left running")
    from tui.core.trace.task_ends import task_ends

    ends = task_ends(trace)
    if ends is not None:
        lines += [f"unended: {task}  the trace does not record how this task ended"
                  for task in canceled if task in ends.started and task not in ends.ended]
    return lines


def _ask_to_stop(home: Path, record: RunningRecord
                 ) -> tuple[list[str], list[Mapping[str, Any]], str | None]:
    """`session/stop` through the door: (the tasks it canceled, what still runs, None), or
    ([], [], why the door could not be asked)."""
    from tui.core.errors import MurmurTuiError

    try:
        door = _door(home, record)
    except MurmurTuiError as exc:
        return [], [], exc.text
    try:
        answer = door.stop()
    except MurmurTuiError as exc:
        return [], [], exc.text
    finally:
        door.close()
    # `Stopped` reads Murmur's {session_id, canceled, residue} and the earlier murmur-tui door's
    # {stopped, canceled, notStarted, residue} alike
    items = [item for item in answer.residue if isinstance(item, Mapping)]
    return list(answer.canceled), items, None


def _wait_recorded(record: RunningRecord, trace: Path, canceled: list[str]) -> None:
    """Up to RECORD_WAIT for the trace to record each canceled task's end, or the process to
    end (nothing more will be recorded then)."""
    from tui.core.running.liveness import pid_is_alive
    from tui.core.trace.task_ends import task_ends

    deadline = time.monotonic() + RECORD_WAIT
    while canceled and time.monotonic() < deadline and pid_is_alive(record.pid):
        ends = task_ends(trace)
        if ends is not None and all(task in ends.ended for task in canceled):
            return
        time.sleep(POLL)


def _wait_children(home: Path, record: RunningRecord) -> None:
    """Up to RECORD_WAIT for the session's delegated children to end, or its process to end."""
    from tui.core.formation.live_children import live_children
    from tui.core.running.liveness import pid_is_alive

    deadline = time.monotonic() + RECORD_WAIT
    while time.monotonic() < deadline and pid_is_alive(record.pid):
        if not live_children(home, record.session_id):
            return
        time.sleep(POLL)


def _signal(record: RunningRecord, timeout: float) -> list[str]:
    """SIGTERM, then SIGKILL after `timeout` (0: SIGKILL at once), each sent only after the
    pid is checked again to be the record's process; the signals sent (none: it ended first)."""
    sent: list[str] = []
    steps = [(signal.SIGKILL, KILL_WAIT)] if timeout == 0 else \
        [(signal.SIGTERM, timeout), (signal.SIGKILL, KILL_WAIT)]
    for which, wait in steps:
        if not _confirmed(record):
            return sent
        try:
            os.kill(record.pid, which)
        except ProcessLookupError:
            return sent
        sent.append(which.name)
        if _ended(record.pid, wait):
            return sent
    from tui.core.errors import SessionNotFound

    raise SessionNotFound(f"{record.session_id}: pid {record.pid} still runs after "
                          f"{' then '.join(sent)}", code="E-RUN-024")


def _confirmed(record: RunningRecord) -> bool:
    """Layers 1–2 again, just before a signal: False when the process has ended (or its pid
    is another process's now); E-RUN-024 when its start time cannot be read."""
    from tui.core.errors import SessionNotFound
    from tui.core.running.liveness import process_state

    state = process_state(record)
    if state is None:
        return True
    if state.state == "gone":
        return False
    raise SessionNotFound(f"{record.session_id}: {state.reason}; no signal sent",
                          code="E-RUN-024")


def _ended(pid: int, within: float) -> bool:
    from tui.core.running.liveness import pid_is_alive

    deadline = time.monotonic() + within
    while pid_is_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
    return True
