"""`murmur-tui browse`: every conversation record, newest first; `r` / `R` on one continues it
in a follow-up session on the supervisor screen, as `launch --resume` would."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tui.commands import launch
from tui.commands.exits import EXIT_OK, error


def add_parser(commands: Any) -> None:
    browse = commands.add_parser(
        "browse", help="page every conversation record, newest first",
        description="The conversation browser: every record under $MURMUR_HOME/conversations, "
                    "newest activity first; open one to page its messages newest first.")
    browse.add_argument("--record", help="only this record store")
    browse.add_argument("--context", dest="context_id", metavar="ID",
                        help="open this conversation")
    browse.add_argument("--theme", help="the screen's theme")


def run(args: argparse.Namespace) -> int:
    from tui.core.fs.paths import murmur_home

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return error("browse needs a terminal")
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
    from tui.commands import launch_screen
    from tui.core.fs.paths import murmur_home
    from tui.core.tools.approvals import prepare

    capsule = resumable_capsule(entry, "compact" if mode == "compact" else "full")
    launch_args = resumed_launch(entry.session_id, mode, args)
    launch_args.approvals = prepare(None, murmur_home(), capsule.manifest_path, capsule.name)
    return launch_screen.run(capsule, launch_args)


def resumed_launch(session_id: str, mode: str, args: argparse.Namespace) -> argparse.Namespace:
    """The `launch` arguments that resume `session_id` (no task: the capsule's own, or the
    prompt), with the browser's theme."""
    parser = argparse.ArgumentParser(prog="murmur-tui launch")
    launch.add_arguments(parser)
    resumed = parser.parse_args([f"--resume={session_id}", f"--resume-mode={mode}"]
                                + (["--theme", args.theme] if args.theme else []))
    resumed.command = "launch"
    return resumed
