"""`murmur-tui launch` on the supervisor screen (and `browse`'s continuation): the session is
built (`tui/core/loop/build.py`), attached to the app, served on the door when asked, and the
lines of what they left are printed once the screen closes: one for each session the screen
ran (the first and every follow-up), in the order they ran."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tui.commands.exits import EXIT_NOT_OK, error
from tui.commands.launch import options_of
from tui.core.loop.build import SessionSpec, build_session
from tui.core.manifest.model import Capsule

if TYPE_CHECKING:
    from tui.app.app import SupervisorApp
    from tui.core.fs.workdir import SessionPaths


class Ran(Protocol):
    """A session the screen ran, as its quit line names it (the loop's Session is one; only
    the one build and the app hold the Session type itself)."""

    @property
    def session_id(self) -> str: ...
    @property
    def paths(self) -> SessionPaths: ...
    @property
    def record_path(self) -> Path | None: ...


def run(capsule: Capsule, args: argparse.Namespace) -> int:
    from tui.app.app import SupervisorApp
    from tui.app.themes import DEFAULT_THEME, load_all
    from tui.core.fs.paths import murmur_home

    home = murmur_home()
    if args.theme:
        names = {item.theme.name for item in load_all(home)[0]}
        if args.theme not in names:
            return error(f"--theme {args.theme!r} is not a theme here (themes: "
                         f"{', '.join(sorted(names)) or DEFAULT_THEME})")
    app = SupervisorApp(home, theme=args.theme)
    options = options_of(args)
    door: Any = None
    board: Any = None
    if getattr(args, "serve", None) is not None:
        from tui.core.asking.questions import QuestionBoard
        from tui.core.door import Door, parse_bind

        board = QuestionBoard()
        door = Door(capsule, board, *parse_bind(args.serve), seat=options.seat)
    session = build_session(SessionSpec(
        capsule, options,
        sinks=(app.bridge, door.sink) if door is not None else (app.bridge,),
        responder=app.responder, cancel=app.cancel,
        approver=args.approvals.gate(app.approver) if args.approvals else None))
    app.attach(session)
    from tui.commands import launch_member

    wind_down = launch_member.wire(args, session, app.cancel, session.finish_now)
    if app.local is not None:
        app.local.seat = options.seat  # a formation's member: `g` finds its callees' doors
    if door is not None:
        from tui.core.door.serving import Serving
        from tui.core.errors import MurmurTuiError

        try:
            serving = Serving.start(door, session)
            launch_member.mark_record(serving, args)
        except (MurmurTuiError, OSError):
            session.close_unstarted()
            raise
        app.serve(serving, board)
    try:
        code = app.run()
    finally:
        app.end_serving()
    if app.running:  # the app went away while the session ran: let it finish its files
        app.cancel.set()
    for line in quit_lines(app, session):
        sys.stdout.write(line + "\n")
    return launch_member.exit_code(wind_down, code if isinstance(code, int) else EXIT_NOT_OK)


def quit_lines(app: SupervisorApp, first: Ran) -> list[str]:
    """One line for each session the screen ran — `first`, then every follow-up — in the
    order they ran; one that did not end ok by itself (the screen closed on it) ended
    canceled."""
    local = app.local
    ran = local.ran if local is not None and local.ran else [first]
    outcomes = local.outcomes if local is not None else {}
    lines = []
    for session in ran:
        outcome = outcomes.get(session.session_id)
        lines.append(quit_summary(session.session_id, outcome.exit_status if outcome
                                  else "canceled", session.paths.accessible,
                                  session.record_path, app.state.spent(session.session_id)))
    return lines


def quit_summary(session_id: str, exit_status: str, workdir: Path,
                 record: Path | None, spent: str = "") -> str:
    """The one line `launch` prints once the screen has closed: what the session left, and
    what it spent (`spent`: its tokens, and their cost when its models have prices)."""
    from tui.core.text.printable import printable
    from tui.core.text.secrets import redact

    kept = f" · record {record}" if record is not None else " · no record"
    used = f" · {spent}" if spent else ""
    return printable(redact(f"murmur-tui: session {session_id} ended {exit_status}{used} · "
                            f"workdir {workdir}{kept}"), keep_newlines=False)
