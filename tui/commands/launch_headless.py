"""`murmur-tui launch --headless`: the session (`tui/core/loop/build.py`) runs on its own thread
while the main thread prints its events and takes Ctrl-C; tasks and answers come from
`--answer`, stdin or the door."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from tui.commands import launch_member
from tui.commands.exits import EXIT_INTERRUPTED, EXIT_NOT_OK, EXIT_OK
from tui.commands.launch import options_of
from tui.commands.signals import install
from tui.core.formation.spawner import Child, spawner_from_env
from tui.core.loop.build import SessionSpec, build_session
from tui.core.manifest.model import Capsule


def run(capsule: Capsule, args: argparse.Namespace) -> int:
    from tui.core.cancel import CancelToken
    from tui.core.headless import HeadlessResponder, HumanPrinter, JsonPrinter
    from tui.core.loop.launch import SessionResult
    from tui.core.tools.approvals import Nobody

    printer = JsonPrinter(sys.stdout) if args.json else HumanPrinter(sys.stdout, sys.stderr)
    cancel = CancelToken()
    options = options_of(args)
    door: Any = None
    board: Any = None
    if getattr(args, "serve", None) is not None:
        from tui.core.asking.questions import QuestionBoard
        from tui.core.door import Door, parse_bind

        board = QuestionBoard()
        # once the --answer values are used, questions wait for the door (a formation's entry:
        # for stdin too, then the door)
        board.door_only = not getattr(args, "stdin_answers", False)
        door = Door(capsule, board, *parse_bind(args.serve), seat=options.seat)
    # In a terminal the printer's "? … asks:" line is the question; the responder adds "> ".
    responder = HeadlessResponder(args.answer, board=board,
                                  question_shown=not args.json and sys.stdout.isatty())
    responder.door_after_stdin = board is not None and not board.door_only
    spawner = spawner_from_env(os.environ)  # a delegated child's parent (E-RUN-020)
    session = build_session(SessionSpec(
        capsule, dataclasses.replace(options, spawner=spawner),
        sinks=(printer, door.sink) if door is not None else (printer,), responder=responder,
        cancel=cancel,
        approver=args.approvals.gate(Nobody(sys.stderr.write)) if args.approvals else None))
    child = Child(spawner, session.report.emit, cancel.set) if spawner is not None else None
    lifecycle = capsule.lifecycle
    serving: Any = None
    if door is not None:
        serving = _serve(door, session, args)
    elif lifecycle.task_acceptance == "queue" and lifecycle.after_task == "sleep":
        responder.feed_tasks(session.submit, session.inbox.close)  # stdin: one task a line
    else:
        session.inbox.close()  # nothing more will be sent
    # The session runs on its own thread: Python runs signal handlers on the main thread only,
    # between bytecodes — never while a component runs inside wasmtime — so the main thread
    # stays free to take Ctrl-C at any moment.
    results: list[SessionResult] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            if serving is not None and serving.waits and not serving.first_task(cancel):
                return  # stopped before any task came
            results.append(session.run())
        except BaseException as exc:  # handed to the main thread
            errors.append(exc)

    def finish_now() -> None:
        session.finish_now()
        forget()
        if serving is not None:
            serving.end()

    forget: Callable[[], None] = (_record_without_door(session, launch_member.record_keys(args))
                                  if door is None else _nothing)
    wind_down = launch_member.wire(args, session, cancel, finish_now)
    worker = threading.Thread(target=work, name="session", daemon=True)
    previous = install(_interrupt_handler(cancel, finish_now, getattr(args, "on_signal", None)))
    try:
        if child is not None:
            child.watch()  # the spawner lifeline
        worker.start()
        while worker.is_alive():
            worker.join(0.2)
    finally:
        install(previous)
        forget()
        if serving is not None:
            serving.end()
        if child is not None:  # completion.json, which the parent reads
            child.finish(capsule.name, capsule.version, session.session_id,
                         results[0].exit_status if results else None, session.paths.session,
                         session.paths.accessible, results[0].result if results else "")
    if errors:
        raise errors[0]
    if not results:
        sys.stderr.write("murmur-tui: stopped before any task was sent\n")
        return launch_member.exit_code(wind_down, EXIT_OK)
    return launch_member.exit_code(wind_down, EXIT_OK if results[0].ok else EXIT_NOT_OK)


def _serve(door: Any, session: Any, args: argparse.Namespace) -> Any:
    """Serve `session` on `door` and print the one readiness line; a session that cannot be
    served gives back what it holds before the refusal is told. A formation member's record
    carries the formation's keys."""
    from tui.core.door.serving import Serving
    from tui.core.errors import MurmurTuiError

    try:
        serving = Serving.start(door, session)
        launch_member.mark_record(serving, args)
    except (MurmurTuiError, OSError):
        session.close_unstarted()
        raise
    sys.stdout.write(serving.readiness(args.json) + "\n")
    sys.stdout.flush()
    return serving


def _record_without_door(session: Any, formation: dict[str, Any]) -> Callable[[], None]:
    """A session with no door has a running record all the same, `url: null`, as Murmur
    v0.9.0 onward writes one for a session that binds no door, so `ps` (murmur-tui's and
    `mur ps`) lists it: written now, removed by what this returns. A record that cannot be
    written is said on stderr and the session runs without it."""
    from dataclasses import replace

    from tui.core import names
    from tui.core.running.records import RunningRecord, remove_record, write_record

    spawner = session.spawner  # a delegated child's record names its parent (`spawned_by`)
    kept = {"spawned_by": spawner.session_id} if spawner is not None else {}
    kept.update(names.record_keys(session.home, session.session_id))
    try:
        record = RunningRecord.for_this_process(
            session.session_id, None, session.capsule.name, session.capsule.version,
            str(session.paths.accessible), records_dir=session.paths.session)
        keys = {**formation, **kept}
        write_record(session.home, replace(record, kept=keys) if keys else record)
    except OSError as exc:
        sys.stderr.write(f"murmur-tui: the session's running record could not be written "
                         f"({exc.strerror or exc}); `ps` will not list it\n")
        return _nothing
    return lambda: remove_record(session.home, session.session_id)


def _nothing() -> None:
    return None


def _interrupt_handler(cancel: threading.Event, finish_now: Callable[[], None],
                       on_signal: Callable[[int], None] | None = None
                       ) -> Callable[[int, FrameType | None], None]:
    """The first Ctrl-C (or SIGTERM / SIGHUP) cancels the session: the running component, model
    call or shell command is stopped and the task ends `canceled`, every file finished. A
    second one stops at once: the files are finished where they are and the process exits 130."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if on_signal is not None:
            on_signal(signum)  # a formation's launcher exits 128 + the signal
        if cancel.is_set():
            finish_now()
            from tui.core.shell.process import kill_running

            kill_running()  # os._exit runs no atexit hook
            sys.stdout.flush()
            sys.stderr.write("\nmurmur-tui: stopped\n")
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        sys.stderr.write("\nmurmur-tui: canceling (Ctrl-C again to stop at once)\n")
        cancel.set()

    return handler
