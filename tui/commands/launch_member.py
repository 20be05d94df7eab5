"""`murmur-tui launch` as a formation's member (spec murmur-newest §7.3–7.4): before the session
is built its membership is read from the environment (`tui/core/formation/members.py`) — refused
with `E-RUN-046` and exit 1 when the channel is wrong — and once it is built the seat's URL line
and the lifeline are watched on threads of their own (`tui/core/formation/lifeline.py`).

The launcher starts its members headless; a member launched on the screen reads its seat the
same way and winds down the same way (its cancel set, as a first Ctrl-C sets it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from tui.commands.exits import EXIT_NOT_OK
from tui.core.cancel import CancelToken
from tui.core.formation.lifeline import EXIT_TERMINATED, WindDown, watch
from tui.core.formation.members import Membership


def join(args: argparse.Namespace) -> int | None:
    """Read this process's membership into `args.membership` and its seat into `args.seat`;
    the exit code of a refusal (E-RUN-046: said on stderr, exit 1), else None."""
    from tui.core.errors import SeatError
    from tui.core.formation.members import join as read

    args.membership, args.seat = None, None
    try:
        membership = read(os.environ)
    except SeatError as exc:
        sys.stderr.write(f"murmur-tui: error: {exc.text} [{exc.code}]\n")
        return EXIT_NOT_OK
    if membership is None:
        return None
    if membership.warning:
        sys.stderr.write(f"murmur-tui: warning: {membership.warning}\n")
    args.membership, args.seat = membership, membership.seat
    return None


def wire(args: argparse.Namespace, session: Any, cancel: CancelToken,
         finish_now: Callable[[], None]) -> WindDown | None:
    """Watch the URL line and the lifeline of the session's membership, if it has one. The
    lifeline's end winds the session down; `finish_now` is the second Ctrl-C's stop."""
    membership: Membership | None = getattr(args, "membership", None)
    if membership is None:
        return None
    if membership.channel is not None:
        threading.Thread(target=membership.read_urls, name="formation-channel",
                         daemon=True).start()
    if membership.lifeline is None:
        return None
    from tui.core.events import vocabulary as ev

    def tell() -> None:
        session.report.emit(ev.FormationEnded(formation_id=membership.formation_id))

    def mark() -> None:
        session.ending.ended_by = "formation_ended"

    def force() -> None:
        from tui.core.shell.process import kill_running

        finish_now()
        kill_running()
        _say("murmur-tui: the formation ended and the session did not wind down in time; "
             "stopped")
        os._exit(EXIT_TERMINATED)

    wind_down = WindDown(tell, mark, cancel.set, force)
    watch(membership.lifeline, wind_down)
    return wind_down


def _say(line: str) -> None:
    """A line on stderr, which may be gone with the launcher that read it (a SIGKILLed
    launcher leaves its members' pipes broken)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def exit_code(wind_down: WindDown | None, code: int) -> int:
    """A member its formation ended exits 143, as one a SIGTERM ended; else `code`."""
    if wind_down is not None and wind_down.ended.is_set():
        wind_down.done()
        return EXIT_TERMINATED
    return code


def record_keys(args: argparse.Namespace) -> dict[str, Any]:
    """The formation keys of this session's running record: a member's (its launcher is its
    parent process), or the entry's, run in the launcher itself; {} for no formation's."""
    from tui.core.formation.members import record_keys as keys
    from tui.core.running.liveness import process_start_token

    membership: Membership | None = getattr(args, "membership", None)
    pid = os.getpid() if membership is None else os.getppid()
    if membership is None:
        seat = getattr(args, "seat", None)
        if seat is None:
            return {}
        membership = Membership(seat.formation_id, seat, None, None)
    start = process_start_token(pid)
    return keys(membership, {"pid": pid, "process_start": start} if start else None)


def mark_record(serving: Any, args: argparse.Namespace) -> None:
    """Write the formation keys into a served session's running record (nothing for a
    session that is no formation's)."""
    from dataclasses import replace

    from tui.core.running.records import write_record

    formation = record_keys(args)
    if formation and serving.record is not None:
        serving.record = replace(serving.record, kept={**serving.record.kept, **formation})
        write_record(serving.session.home, serving.record)
