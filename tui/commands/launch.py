"""`murmur-tui launch`: its arguments, the checks before anything runs, and the ONE build of
a Session — for the screen, headless, a follow-up in the same conversation and a resume from
the browser alike. What differs between them is a `SessionSpec`; `build_session` is the only
place a Session is made.

Loads nothing of the screen (the app builds its sessions here too): the runs on the screen and
headless are `launch_screen` and `launch_headless`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.commands.exits import error, refused

if TYPE_CHECKING:
    from tui.core.loop.launch import LaunchOptions
    from tui.core.manifest.model import Capsule
    from tui.core.session_index import Resume


def options_of(args: argparse.Namespace) -> LaunchOptions:
    """The session's options from `launch`'s arguments (made whole by `checked`)."""
    from tui.core.loop.launch import LaunchOptions

    return LaunchOptions(task=args.task[0] if args.task else None, task_file=args.task_file,
                         more_tasks=tuple(args.task[1:]) if args.task else (),
                         context_id=args.context_id, resume=resume_of(args),
                         workdir=args.workdir, seat=getattr(args, "seat", None),
                         name=getattr(args, "name", None))


def resume_of(args: argparse.Namespace) -> Resume | None:
    """`--resume SESSION [--resume-mode]`, found in the session index (LaunchError if not)."""
    if args.resume is None:
        return None
    from tui.core.fs.paths import murmur_home
    from tui.core.session_index import Resume, find

    return Resume(find(murmur_home(), args.resume), args.resume_mode)


# -- the command ---------------------------------------------------------------------------------
def add_parser(commands: Any) -> None:
    add_arguments(commands.add_parser(
        "launch", help="run a capsule's session (default: the bundled demo capsule)",
        description="Load a capsule (a folder holding murmur.yaml, or the manifest path) and "
                    "run one session. Without CAPSULE, the bundled demo runs offline."))


def add_arguments(launch: argparse.ArgumentParser) -> None:
    launch.add_argument("capsule", nargs="?", type=Path, help="capsule folder or murmur.yaml")
    launch.add_argument("--roster", type=Path, metavar="DIR",
                        help="launch the formation DIR/roster.yaml names (or that file): "
                             "every member at its door, the entry member last, here")
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
    launch.add_argument("--name", metavar="NAME",
                        help="the session's name, shown with its id (header, ps, fleet, "
                        "browser); up to 64 printable characters. A resumed session keeps "
                        "its name unless given one")
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
    launch.add_argument("--theme", help="the screen's theme (murmur-dark, murmur-light, "
                        "murmur-high-contrast, or one of yours in $MURMUR_HOME/tui/themes)")


def checked(args: argparse.Namespace) -> Capsule | int:
    """The capsule `launch` runs, its arguments made whole (`args.headless` set when there is
    no terminal, said so); or the exit code of a refusal. The run itself is on the screen
    (`launch_screen`) or headless (`launch_headless`): the command line picks."""
    from tui.core.errors import ManifestError
    from tui.core.fs.paths import demo_capsule, murmur_home
    from tui.core.hardening import make_undumpable
    from tui.core.manifest.reader import load_capsule
    from tui.core.tools.approvals import prepare

    make_undumpable()  # before any key is read: commands it starts cannot read its memory

    if args.task is not None and args.task_file is not None:
        return error("give --task or --task-file, not both")
    if args.resume is not None and args.context_id is not None:
        return error("give --resume or --context, not both (a resumed session goes on in "
                     "its own context)")
    if getattr(args, "name", None) is not None:
        from tui.core.errors import NameRefused
        from tui.core.names import checked as checked_name
        try:
            checked_name(args.name)
        except NameRefused as exc:
            return error(f"--name: {exc.text}")
    _make_task_whole(args)
    target = args.capsule if args.capsule is not None else demo_capsule()
    try:
        capsule = load_capsule(target)
    except ManifestError as exc:
        return refused(exc, "the manifest was refused")
    args.approvals = prepare(args.approve, murmur_home(), capsule.manifest_path, capsule.name)
    if not args.headless and not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write("murmur-tui: not a terminal; running headless (--headless says so "
                         "explicitly, --json prints JSON lines)\n")
        args.headless = True
    return capsule


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
