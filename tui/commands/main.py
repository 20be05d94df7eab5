"""The `murmur-tui` command line: argument parsing only; the work is in `tui.core` / `tui.app`.

Exit codes: 0 the task ended ok, 1 it ended not ok, 2 bad input (nothing ran).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from tui import __version__

EXIT_OK = 0
EXIT_NOT_OK = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # a second Ctrl-C: stopped at once (files finished)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="murmur-tui",
        description="A terminal supervisor for Murmur agent sessions.",
    )
    parser.add_argument("--version", action="version", version=f"murmur-tui {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    launch = commands.add_parser(
        "launch", help="run a capsule's session (default: the bundled demo capsule)",
        description="Load a capsule (a folder holding murmur.yaml, or the manifest path) and "
                    "run one session. Without CAPSULE, the bundled demo runs offline.",
    )
    launch.add_argument("capsule", nargs="?", type=Path, help="capsule folder or murmur.yaml")
    launch.add_argument("--headless", action="store_true",
                        help="no screen: one line per event on stdout")
    launch.add_argument("--json", action="store_true",
                        help="with --headless: one JSON object per event")
    launch.add_argument("--task", action="append",
                        help="the task text (written to task.md in the workdir); again for "
                        "more tasks, run in order in one session (task_acceptance: queue)")
    launch.add_argument("--task-file", type=Path, help="read the task text from a file")
    launch.add_argument("--context", dest="context_id", metavar="ID",
                        help="the conversation context id (its record is appended to)")
    launch.add_argument("--resume", metavar="SESSION",
                        help="continue that session's conversation: its id, its last 4+ "
                        "characters, or @N (the Nth newest)")
    launch.add_argument("--resume-mode", choices=("full", "compact"), default="full",
                        help="full: the whole conversation; compact: through the capsule's "
                        "on-compaction hook (default full)")
    launch.add_argument("--workdir", type=Path, help="the accessible workdir (default: "
                        "<capsule>/workdir/<session-id>)")
    launch.add_argument("--answer", action="append", default=[], metavar="TEXT",
                        help="with --headless: an answer to request-input (repeatable, used "
                             "in order; then stdin)")
    launch.add_argument("--serve", nargs="?", const="", default=None, metavar="HOST:PORT",
                        help="serve the session on Murmur's A2A door (default 127.0.0.1 and "
                        "an ephemeral port); tasks and answers may come through it")
    launch.add_argument("--approve", choices=("shell", "tools", "all", "off"),
                        help="ask before shell commands (shell), WebAssembly tool calls "
                             "(tools) or both (all) run; default: approve: in "
                             "$MURMUR_HOME/tui/config.yaml, else off")
    browse = commands.add_parser(
        "browse", help="page every conversation record, newest first",
        description="The conversation browser: every record under $MURMUR_HOME/conversations, "
                    "newest activity first; open one to page its messages newest first.")
    browse.add_argument("--record", help="only this record store")
    browse.add_argument("--context", dest="context_id", metavar="ID",
                        help="open this conversation")
    browse.add_argument("--theme", help="the screen's theme")
    launch.add_argument("--theme", help="the screen's theme (murmur-dark, murmur-light, "
                        "murmur-high-contrast, or one of yours in $MURMUR_HOME/tui/themes)")
    trace = commands.add_parser(
        "trace", help="sum up a session's trace.jsonl as `mur trace show` does",
        description="Read a session's trace.jsonl and print its turns, tokens, tool, skill "
                    "and shell calls, hook failures, compaction, redundant calls, failures, "
                    "reopens and tasks. Without WORKDIR|FILE: the newest session under "
                    "./workdir/.")
    trace.add_argument("target", nargs="?", type=Path, metavar="WORKDIR|FILE",
                       help="a session workdir, a folder of sessions, or a trace.jsonl")
    trace.add_argument("--json", action="store_true",
                       help="one JSON object (summary, redundant calls, sections)")
    ps = commands.add_parser(
        "ps", help="list the sessions running on this machine, verified as `mur ps` does",
        description="Every record under $MURMUR_HOME/running (Murmur's sessions and "
                    "murmur-tui's), verified: the pid alive, its start time, the agent card "
                    "naming the session; with what each is doing.")
    ps.add_argument("--json", action="store_true", help="one JSON array of sessions")
    ps.add_argument("--all", action="store_true", help="also list records whose process is gone")
    ps.add_argument("--prune", action="store_true", help="remove records whose process is gone")
    from tui.commands import fleet as fleet_cli

    fleet_cli.add_credential_option(ps, "what ps reads")
    fleet_cli.add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from tui.core.errors import MurmurTuiError

    args = build_parser().parse_args(argv)
    try:
        if args.command == "launch":
            return launch(args)
        if args.command == "browse":
            return browse(args)
        if args.command == "trace":
            return trace(args)
        if args.command == "ps":
            from tui.commands.ps import run
            from tui.core.fs.paths import murmur_home

            return run(murmur_home(), as_json=args.json, show_all=args.all, prune=args.prune,
                       credential=args.credential or "operator")
        if args.command in ("attach", "fleet"):
            from tui.commands import fleet as fleet_cli

            return fleet_cli.attach(args) if args.command == "attach" else fleet_cli.fleet(args)
    except MurmurTuiError as exc:  # bad input that stops the command: what, where, and why
        return _refused(exc)
    except KeyboardInterrupt:
        sys.stderr.write("murmur-tui: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line and a log, never a traceback on the terminal
        return _internal_error(exc)
    return EXIT_BAD_INPUT  # pragma: no cover - argparse requires a command


def _error(message: str) -> int:
    from tui.core.text.secrets import redact

    sys.stderr.write(f"murmur-tui: error: {redact(message)}\n")
    return EXIT_BAD_INPUT


def _refused(exc: Exception, lead: str | None = None) -> int:
    """The one way an error of ours (`MurmurTuiError`: text, place, code) is told."""
    return _error(f"{lead}:\n{exc}" if lead else str(exc))


def _internal_error(exc: Exception) -> int:
    """Write the traceback to `$MURMUR_HOME/tui/crash-<time>.log` (0600, redacted) and say so."""
    import time
    import traceback

    from tui.core.fs.paths import murmur_home
    from tui.core.fs.private_files import append_private
    from tui.core.text.secrets import redact

    where = murmur_home() / "tui" / f"crash-{time.strftime('%Y%m%dT%H%M%S')}.log"
    try:
        append_private(where, redact("".join(traceback.format_exception(exc))))
        details = f"; details in {where}"
    except OSError:
        details = ""
    sys.stderr.write(redact(f"murmur-tui: internal error: {type(exc).__name__}: {exc}"
                            f"{details}\n"))
    return EXIT_NOT_OK


def launch(args: argparse.Namespace) -> int:
    from tui.core.errors import ManifestError
    from tui.core.fs.paths import demo_capsule
    from tui.core.hardening import make_undumpable
    from tui.core.manifest.reader import load_capsule

    make_undumpable()  # before any key is read: commands it starts cannot read its memory

    if args.task is not None and args.task_file is not None:
        return _error("give --task or --task-file, not both")
    if args.resume is not None and args.context_id is not None:
        return _error("give --resume or --context, not both (a resumed session goes on in "
                      "its own context)")
    _make_task_whole(args)
    target = args.capsule if args.capsule is not None else demo_capsule()
    try:
        capsule = load_capsule(target)
    except ManifestError as exc:
        return _refused(exc, "the manifest was refused")
    headless = args.headless
    from tui.core.fs.paths import murmur_home
    from tui.core.tools.approvals import prepare

    args.approvals = prepare(args.approve, murmur_home(), capsule.manifest_path, capsule.name)
    if not headless and not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write("murmur-tui: not a terminal; running headless (--headless says so "
                         "explicitly, --json prints JSON lines)\n")
        headless = True
    return _run_headless(capsule, args) if headless else _run_screen(capsule, args)


def _make_task_whole(args: argparse.Namespace) -> None:
    """`--task` / `--task-file` as text a session can write: bytes that are not UTF-8 (lone
    surrogates once decoded) become U+FFFD, with one warning naming the flag. The file is
    read here, once, and goes on as the task's text (LaunchError if it cannot be read)."""
    from tui.core.loop.setup import read_task_file
    from tui.core.text.text_rule import lone_surrogate_at, whole

    flag = "--task"
    if args.task_file is not None:
        args.task, args.task_file, flag = [read_task_file(args.task_file)], None, "--task-file"
    if any(lone_surrogate_at(text) is not None for text in args.task or ()):
        sys.stderr.write(f"murmur-tui: warning: {flag} holds bytes that are not UTF-8 text; "
                         "each is replaced with U+FFFD (\ufffd)\n")
        args.task = [whole(text) for text in args.task]


def _resume(args: argparse.Namespace) -> Any:
    """`--resume SESSION [--resume-mode]`, found in the session index (LaunchError if not)."""
    if args.resume is None:
        return None
    from tui.core.fs.paths import murmur_home
    from tui.core.session_index import Resume, find

    return Resume(find(murmur_home(), args.resume), args.resume_mode)


def _run_screen(capsule: object, args: argparse.Namespace) -> int:
    from tui.app.app import SupervisorApp
    from tui.app.themes import DEFAULT_THEME, load_all
    from tui.core.fs.paths import murmur_home
    from tui.core.loop.launch import LaunchOptions
    from tui.core.loop.session import Session
    from tui.core.manifest.model import Capsule

    assert isinstance(capsule, Capsule)
    home = murmur_home()
    if args.theme:
        names = {item.theme.name for item in load_all(home)[0]}
        if args.theme not in names:
            return _error(f"--theme {args.theme!r} is not a theme here (themes: "
                          f"{', '.join(sorted(names)) or DEFAULT_THEME})")
    app = SupervisorApp(home, theme=args.theme)
    door: Any = None
    board: Any = None
    if getattr(args, "serve", None) is not None:
        from tui.core.asking.questions import QuestionBoard
        from tui.core.door import Door, parse_bind

        board = QuestionBoard()
        door = Door(capsule, board, *parse_bind(args.serve))
    session = Session(
        capsule,
        LaunchOptions(task=args.task[0] if args.task else None, task_file=args.task_file,
                      more_tasks=tuple(args.task[1:]) if args.task else (),
                      context_id=args.context_id, resume=_resume(args),
                      workdir=args.workdir),
        sinks=[app.bridge, door.sink] if door is not None else [app.bridge],
        responder=app.responder, cancel=app.cancel,
        approver=args.approvals.gate(app.approver) if args.approvals else None,
    )
    app.attach(session)
    if door is not None:
        from tui.core.door.serving import Serving
        from tui.core.errors import MurmurTuiError

        try:
            serving = Serving.start(door, session)
        except MurmurTuiError:
            session.close_unstarted()
            raise
        app.serve(serving, board)
    try:
        code = app.run()
    finally:
        app.end_serving()
    if app.running:  # the app went away while the session ran: let it finish its files
        app.cancel.set()
    last = app.session or session
    sys.stdout.write(quit_summary(last.session_id, app.result.exit_status if app.result
                                  else "canceled", last.paths.accessible, last.record_path)
                     + "\n")
    return code if isinstance(code, int) else EXIT_NOT_OK


def quit_summary(session_id: str, exit_status: str, workdir: Path,
                 record: Path | None) -> str:
    """The one line `launch` prints once the screen has closed: what the session left."""
    from tui.core.text.printable import printable
    from tui.core.text.secrets import redact

    kept = f" · record {record}" if record is not None else " · no record"
    return printable(redact(f"murmur-tui: session {session_id} ended {exit_status} · workdir "
                            f"{workdir}{kept}"), keep_newlines=False)


def browse(args: argparse.Namespace) -> int:
    from tui.core.fs.paths import murmur_home

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _error("browse needs a terminal")
    from tui.app.browser.app import BrowserApp

    app = BrowserApp(murmur_home(), record=args.record, context=args.context_id,
                     theme=args.theme)
    chosen = app.run()
    if chosen is None:
        return EXIT_OK
    return _continue(chosen.entry, chosen.mode, args)


def _continue(entry: Any, mode: str, args: argparse.Namespace) -> int:
    """`r` / `R` in the browser: the supervisor opens on a follow-up session resumed from the
    chosen one, as `launch CAPSULE --resume SESSION --resume-mode MODE` would. The capsule
    was checked in the browser; if it went away since, this says so (CannotResume)."""
    from tui.app.browser.resume import capsule as resumable_capsule
    from tui.core.fs.paths import murmur_home
    from tui.core.tools.approvals import prepare

    capsule = resumable_capsule(entry, "compact" if mode == "compact" else "full")
    launch_args = resumed_launch(entry.session_id, mode, args)
    launch_args.approvals = prepare(None, murmur_home(), capsule.manifest_path, capsule.name)
    return _run_screen(capsule, launch_args)


def resumed_launch(session_id: str, mode: str, args: argparse.Namespace) -> argparse.Namespace:
    """The `launch` arguments that resume `session_id` (no task: the capsule's own, or the
    prompt), with the browser's theme."""
    return build_parser().parse_args(
        ["launch", f"--resume={session_id}", f"--resume-mode={mode}"]
        + (["--theme", args.theme] if args.theme else []))


def trace(args: argparse.Namespace) -> int:
    import json

    from tui.core.fs.paths import murmur_home
    from tui.core.trace.details import load
    from tui.core.trace.locate import locate
    from tui.core.trace.show import remember_known_keys, render, to_json

    path = locate(args.target, Path.cwd())
    remember_known_keys(murmur_home())
    try:
        details = load(path)
    except OSError as exc:
        return _error(f"{path}: cannot read the trace: {exc.strerror or exc}")
    if args.json:
        sys.stdout.write(json.dumps(to_json(details), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(details))
    return EXIT_OK


def _run_headless(capsule: object, args: argparse.Namespace) -> int:
    from tui.core.cancel import CancelToken
    from tui.core.headless import HeadlessResponder, HumanPrinter, JsonPrinter
    from tui.core.loop.launch import LaunchOptions, SessionResult
    from tui.core.loop.session import Session
    from tui.core.manifest.model import Capsule
    from tui.core.tools.approvals import Nobody

    assert isinstance(capsule, Capsule)
    printer = JsonPrinter(sys.stdout) if args.json else HumanPrinter(sys.stdout, sys.stderr)
    cancel = CancelToken()
    door: Any = None
    board: Any = None
    if getattr(args, "serve", None) is not None:
        from tui.core.asking.questions import QuestionBoard
        from tui.core.door import Door, parse_bind

        board = QuestionBoard()
        board.door_only = True  # once the --answer values are used, questions wait for the door
        door = Door(capsule, board, *parse_bind(args.serve))
    responder = HeadlessResponder(args.answer, board=board)
    session = Session(
        capsule,
        LaunchOptions(task=args.task[0] if args.task else None, task_file=args.task_file,
                      more_tasks=tuple(args.task[1:]) if args.task else (),
                      context_id=args.context_id, resume=_resume(args),
                      workdir=args.workdir),
        sinks=[printer, door.sink] if door is not None else [printer],
        responder=responder,
        approver=args.approvals.gate(Nobody(sys.stderr.write)) if args.approvals else None,
        cancel=cancel,
    )
    lifecycle = capsule.lifecycle
    serving: Any = None
    if door is not None:
        serving = _serve(door, session, args.json)
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
        if serving is not None:
            serving.end()

    worker = threading.Thread(target=work, name="session", daemon=True)
    previous = _install(_interrupt_handler(cancel, finish_now))
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.2)
    finally:
        _install(previous)
        if serving is not None:
            serving.end()
    if errors:
        raise errors[0]
    if not results:
        sys.stderr.write("murmur-tui: stopped before any task was sent\n")
        return EXIT_OK
    return EXIT_OK if results[0].ok else EXIT_NOT_OK


def _serve(door: Any, session: Any, as_json: bool) -> Any:
    """Serve `session` on `door` and print the one readiness line; a session that cannot be
    served gives back what it holds before the refusal is told."""
    from tui.core.door.serving import Serving
    from tui.core.errors import MurmurTuiError

    try:
        serving = Serving.start(door, session)
    except MurmurTuiError:
        session.close_unstarted()
        raise
    sys.stdout.write(serving.readiness(as_json) + "\n")
    sys.stdout.flush()
    return serving


_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                 if hasattr(signal, name))


def _install(handler: object) -> object:
    """Install `handler` (one, or a dict per signal) for SIGINT, SIGTERM and SIGHUP; returns
    what was installed before (nothing when not on the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for number in _SIGNALS:
        chosen = handler.get(number) if isinstance(handler, dict) else handler
        if chosen is not None:
            previous[number] = signal.signal(number, chosen)  # type: ignore[arg-type]
    return previous


def _interrupt_handler(cancel: threading.Event, finish_now: Callable[[], None]
                       ) -> Callable[[int, FrameType | None], None]:
    """The first Ctrl-C (or SIGTERM / SIGHUP) cancels the session: the running component, model
    call or shell command is stopped and the task ends `canceled`, every file finished. A
    second one stops at once: the files are finished where they are and the process exits 130."""

    def handler(signum: int, frame: FrameType | None) -> None:
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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
