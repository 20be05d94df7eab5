"""The member side of a formation (spec murmur-newest §7.3–7.4): what a session started by a
launcher reads from its environment before it runs.

- `MURMUR_FORMATION_ID` — the formation (`frm_…`);
- `MURMUR_FORMATION_CHANNEL` — an inherited pipe fd: the member's seat on its first line (within
  10 s), the callees' door URLs on its second (`seat.py`);
- `MURMUR_FORMATION_LIFELINE` — the read end of a pipe only the launcher writes: its end of file
  is the end of the formation (`lifeline.py`).

A channel or lifeline without the id, an fd that is not an open pipe, no first line in time, a
first line naming another formation: `E-RUN-046` (SeatError), and the session does not start. An
id with no lifeline in a process that is not a delegated child (`MURMUR_SPAWNER`) is a member
started by hand: `W-RUN-007`, once, and nothing winds it down.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui.core.errors import SeatError
from tui.core.formation.seat import Seat, parse_first, parse_urls
from tui.core.ids import FORMATION_ID

ENV_ID = "MURMUR_FORMATION_ID"
ENV_CHANNEL = "MURMUR_FORMATION_CHANNEL"
ENV_LIFELINE = "MURMUR_FORMATION_LIFELINE"
ENV_SPAWNER = "MURMUR_SPAWNER"  # a delegated child's: it holds a spawner lifeline instead
FIRST_LINE_WITHIN = 10.0  # seconds for the channel's first line
MAX_LINE = 64 * 1024
BY_HAND = "W-RUN-007"


class ChannelReader:
    """Lines from the channel's fd, read a chunk at a time; what follows a line is kept for the
    next one."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._held = b""

    def line(self, within: float | None = None) -> str | None:
        """The next line (without its newline); None at end of file. SeatError when `within`
        seconds pass first, or the line is too long."""
        ends = None if within is None else time.monotonic() + within
        while b"\n" not in self._held:
            if len(self._held) > MAX_LINE:
                raise SeatError("a formation channel line is longer than 64 KiB")
            if ends is not None:
                left = ends - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    raise SeatError(f"no first line on the formation channel (fd {self.fd}) "
                                    f"within {within:g} s")
            chunk = os.read(self.fd, 4096)
            if not chunk:
                return None
            self._held += chunk
        line, _, self._held = self._held.partition(b"\n")
        return line.decode("utf-8", "replace")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


@dataclass
class Membership:
    """What this process is to its formation: the id, its seat (None: no channel), the
    channel still open for the URL line, the lifeline's fd (None: none), and the warning to
    print once (W-RUN-007) when nothing will wind it down."""

    formation_id: str
    seat: Seat | None
    channel: ChannelReader | None
    lifeline: int | None
    warning: str | None = None

    def read_urls(self) -> None:
        """Wait for the channel's second line and tell the seat (run on a thread of its own).
        A line that is not the URLs leaves the seat without them: its calls find no door."""
        if self.channel is None or self.seat is None:
            return
        try:
            line = self.channel.line()
            if line is not None:
                self.seat.know_urls(parse_urls(line))
        except (SeatError, OSError):
            pass
        finally:
            self.channel.close()


def join(environ: Mapping[str, str], within: float = FIRST_LINE_WITHIN) -> Membership | None:
    """This process's membership, from its environment; None when it is no formation's."""
    formation_id = environ.get(ENV_ID)
    channel_text, lifeline_text = environ.get(ENV_CHANNEL), environ.get(ENV_LIFELINE)
    if formation_id is None:
        for name, value in ((ENV_CHANNEL, channel_text), (ENV_LIFELINE, lifeline_text)):
            if value is not None:
                raise SeatError(f"{name} is set without {ENV_ID}: a formation channel or "
                                "lifeline comes only from a formation's launcher")
        return None
    if not FORMATION_ID.fullmatch(formation_id):
        raise SeatError(f"{ENV_ID} is not a formation id (frm_ and 32 lowercase hex digits)")
    lifeline = _pipe_fd(lifeline_text, ENV_LIFELINE) if lifeline_text is not None else None
    seat = channel = None
    if channel_text is not None:
        channel = ChannelReader(_pipe_fd(channel_text, ENV_CHANNEL))
        line = channel.line(within)
        if line is None:
            raise SeatError("the formation channel closed before its first line")
        seat = parse_first(line)
        if seat.formation_id != formation_id:
            raise SeatError(f"the formation channel seats this session in formation "
                            f"{seat.formation_id}, not {formation_id} ({ENV_ID})")
    warning = None
    if lifeline is None and ENV_SPAWNER not in environ:
        warning = (f"{ENV_ID} is set but there is no {ENV_LIFELINE}: this session was started "
                   f"by hand as a member of {formation_id}, and the formation's end will not "
                   f"end it [{BY_HAND}]")
    return Membership(formation_id, seat, channel, lifeline, warning)


def _pipe_fd(text: str, name: str) -> int:
    """The fd `text` names, checked to be an open pipe this process inherited."""
    try:
        fd = int(text.strip())
    except ValueError:
        raise SeatError(f"{name} is not a file descriptor number: {text[:40]!r}") from None
    if fd < 3:
        raise SeatError(f"{name} names fd {fd}, one of the standard streams, not a pipe")
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        raise SeatError(f"{name} names fd {fd}, which is not open in this process") from None
    if not stat.S_ISFIFO(mode):
        raise SeatError(f"{name} names fd {fd}, which is not a pipe")
    os.set_inheritable(fd, False)  # the session's own commands do not hold it
    return fd


def record_keys(membership: Membership, launcher: Mapping[str, Any] | None
                ) -> dict[str, Any]:
    """The formation keys of the member's running record (spec §7.6, §4.1); as Murmur,
    `formation_lifeline` only when it is true."""
    keys: dict[str, Any] = {"formation_id": membership.formation_id}
    if membership.lifeline is not None:
        keys["formation_lifeline"] = True
    if membership.seat is not None:
        keys["formation_member"] = membership.seat.member
        keys["formation_entry"] = membership.seat.entry
    if launcher is not None:
        keys["formation_launcher"] = dict(launcher)
    return keys
