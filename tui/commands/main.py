"""The `murmur-tui` command line: the parser and which command runs; each command is its own
module (`launch` with `launch_screen` / `launch_headless`, `browse`, `trace`, `ps`, `fleet`,
`control` for `cancel` and `stop`, `token`, `doctor`, `new`), and the work is in `tui.core` /
`tui.app`.

Exit codes (`exits.py`): 0 the task ended ok, 1 it ended not ok, 2 bad input (nothing ran).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tui import __version__
from tui.commands import browse, launch, trace
from tui.commands.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_NOT_OK, refused


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="murmur-tui",
        description="A terminal supervisor for Murmur agent sessions.",
    )
    parser.add_argument("--version", action="version", version=f"murmur-tui {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    launch.add_parser(commands)
    browse.add_parser(commands)
    trace.add_parser(commands)
    ps = commands.add_parser(
        "ps", help="list the sessions running on this machine, verified as `mur ps` does",
        description="Every record under $MURMUR_HOME/running (Murmur's sessions and "
                    "murmur-tui's), verified: the pid alive, its start time, the agent card "
                    "naming the session; with what each is doing.")
    ps.add_argument("--json", action="store_true", help="one JSON array of sessions")
    ps.add_argument("--all", action="store_true",
                    help="also list records whose process is gone, and keep them (ps removes "
                         "them otherwise, as `mur ps` does)")
    ps.add_argument("--prune", action="store_true",
                    help="remove records whose process is gone, also with --all")
    from tui.commands import fleet as fleet_cli

    fleet_cli.add_credential_option(ps, "what ps reads")
    fleet_cli.add_parsers(commands)
    from tui.commands import control

    control.add_parsers(commands)
    from tui.commands import token as token_cli

    token_cli.add_parser(commands)
    from tui.commands import doctor

    doctor.add_parser(commands)
    from tui.commands import new as new_cli

    new_cli.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from tui.core.errors import MurmurTuiError

    args = build_parser().parse_args(argv)
    try:
        if args.command == "launch":
            return _launch(args)
        if args.command == "browse":
            return browse.run(args)
        if args.command == "trace":
            return trace.run(args)
        if args.command == "ps":
            from tui.commands.ps import run
            from tui.core.fs.paths import murmur_home

            return run(murmur_home(), as_json=args.json, show_all=args.all, prune=args.prune,
                       credential=args.credential or "operator")
        if args.command == "token":
            from tui.commands import token as token_cli

            return token_cli.run(args)
        if args.command == "doctor":
            from tui.commands import doctor

            return doctor.run(args)
        if args.command == "new":
            from tui.commands import new as new_cli

            return new_cli.run(args)
        if args.command in ("attach", "fleet"):
            from tui.commands import fleet as fleet_cli

            return fleet_cli.attach(args) if args.command == "attach" else fleet_cli.fleet(args)
        if args.command in ("cancel", "stop"):
            from tui.commands import control

            return control.run(args)
    except MurmurTuiError as exc:  # bad input that stops the command: what, where, and why
        return refused(exc)
    except KeyboardInterrupt:
        sys.stderr.write("murmur-tui: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line and a log, never a traceback on the terminal
        return _internal_error(exc)
    return EXIT_BAD_INPUT  # pragma: no cover - argparse requires a command


def _launch(args: argparse.Namespace) -> int:
    """`launch`, checked, then on the screen or headless; `--roster`, a whole formation. A
    formation's member reads its seat first (launch_member.py)."""
    if args.roster is not None:
        from tui.commands import launch_roster

        return launch_roster.run(args)
    from tui.commands import launch_member

    refused_seat = launch_member.join(args)
    if refused_seat is not None:
        return refused_seat
    capsule = launch.checked(args)
    if isinstance(capsule, int):
        return capsule
    if args.headless:
        from tui.commands import launch_headless

        return launch_headless.run(capsule, args)
    from tui.commands import launch_screen

    return launch_screen.run(capsule, args)


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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
