"""`murmur-tui launch --roster DIR` (spec murmur-newest §7.3–7.4; docs/formations.md,
"Launching a roster"): the roster admitted, every non-entry member started at its door
(`tui/core/formation/launcher.py`), then the entry member run here — on the screen as `launch`
runs a capsule, or headless — with its seat, task acceptance `single`, after a task `exit`, in
the roster's folder. When the entry ends every lifeline is closed and the members wind down.
Before the formation starts, older formation directories go as the entry's `trace.retain` says
(`tui/core/formation/retention.py`).

Exit: the entry's code; 130 / 143 / 129 when a SIGINT / SIGTERM / SIGHUP came; 1 for a
refusal before anything started (`E-ROS-*`, `E-REG-005`, `E-RUN-045`, `E-RUN-046`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui.commands.exits import EXIT_NOT_OK, error
from tui.commands.signals import install


def run(args: argparse.Namespace) -> int:
    from tui.commands import launch
    from tui.core.errors import FormationError
    from tui.core.formation import launcher, retention
    from tui.core.formation.admission import admit
    from tui.core.formation.members import ENV_ID
    from tui.core.formation.roster import RosterRefusal
    from tui.core.fs.paths import murmur_home

    if ENV_ID in os.environ:
        return _refused(f"this process is a member of formation {os.environ[ENV_ID][:40]} "
                        f"({ENV_ID} is set): a formation's member cannot launch another "
                        "formation", "E-RUN-046")
    given = [flag for flag, value in (("a capsule", args.capsule), ("--resume", args.resume),
                                      ("--context", args.context_id),
                                      ("--workdir", args.workdir)) if value is not None]
    if given:
        return error(f"--roster launches the roster's members: give {given[0]} to a single "
                     "capsule's launch, not with --roster (the entry member runs in the "
                     "roster's folder)")
    home = murmur_home()
    path: Path = args.roster
    admitted = admit(path / "roster.yaml" if path.is_dir() else path, home)
    if isinstance(admitted, RosterRefusal):
        sys.stderr.write(f"murmur-tui: error: {admitted}\n")
        return EXIT_NOT_OK
    entry = admitted.entry
    args.capsule = entry.capsule.manifest_path
    capsule = launch.checked(args)
    if isinstance(capsule, int):
        return capsule
    capsule = replace(capsule, lifecycle=replace(capsule.lifecycle, task_acceptance="single",
                                                 after_task="exit"))
    args.workdir = admitted.roster.path.parent.resolve()  # the entry's: the project's folder
    if getattr(args, "serve", None) is None:  # as `mur run --roster`, the entry has a door:
        args.serve = "127.0.0.1:0"  # its readiness line, and the fleet and attach reach it
    args.stdin_answers = True  # the person at the launcher answers too (then the door alone)
    retention.apply(home, capsule.trace.retain, _stderr_lines())  # before the new formation
    received: list[int] = []
    say = _stderr_lines() if args.headless else None
    previous = install(lambda signum, frame: received.append(signum))
    try:
        formation = launcher.launch(admitted, home, say, stopped=lambda: bool(received),
                                    words=not args.json)
    except FormationError as exc:
        install(previous)
        if received:
            return 128 + received[0]
        return _refused(exc.text, exc.code)
    except KeyboardInterrupt:
        install(previous)
        return 128 + signal.SIGINT
    install(previous)
    try:
        if received:  # a signal came as the last door answered: the entry does not start
            return 128 + received[0]
        if args.json and args.headless:  # the screen's stdout is the screen
            sys.stdout.write(formation.line() + "\n")
            sys.stdout.flush()
        else:
            sys.stderr.write("".join(line + "\n" for line in formation.block()))
            if not args.headless:
                sys.stderr.write(f"  members' output: {formation.folder / launcher.OUTPUT_LOG}\n")
            sys.stderr.flush()
        args.seat = formation.entry_seat
        args.on_signal = received.append
        code = _entry(capsule, args)
    finally:
        formation.end()
    return 128 + received[0] if received else code


def _entry(capsule: Any, args: argparse.Namespace) -> int:
    if args.headless:
        from tui.commands import launch_headless

        return launch_headless.run(capsule, args)
    from tui.commands import launch_screen

    return launch_screen.run(capsule, args)


def _refused(text: str, code: str) -> int:
    from tui.core.text.secrets import redact

    sys.stderr.write(f"murmur-tui: error: {redact(text)} [{code}]\n")
    return EXIT_NOT_OK


def _stderr_lines() -> Any:
    """Each member's output line on this process's stderr, whole lines at a time."""
    lock = threading.Lock()

    def say(line: str) -> None:
        with lock:
            try:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass

    return say

