"""Launching an admitted formation (spec murmur-newest §7.3–7.4), every step but the entry's
session, which the command runs in this process (`tui/commands/launch_roster.py`):

1. one formation id (`frm_…`) and one signing key, held in this process's memory only;
2. `$MURMUR_HOME/formations/<frm>/` with `formation.json` (0600: `project_dir`,
   `launcher_pid`, `launcher_start`) and one directory per non-entry member (0700, never
   reused: one that is already there refuses the launch, `E-RUN-045`);
3. every non-entry member started at once, each with its seat on its channel (`peers.py`);
4. each member's readiness line read, then its door's card probed every 100 ms until it
   answers naming that session (180 s for the whole formation, `E-RUN-045`);
5. each member sent its callees' door URLs; the entry's seat told them too.

An installed member whose archive changed since admission (its bytes no longer the sha256
admission bound it to, or its sidecar no longer saying so) refuses the launch just before that
member would start (`E-RUN-047`); every member already started is ended.

`end()` closes every lifeline (members wind down on their own), then SIGKILLs the process group
of any member still running `kill_after` seconds (25) later.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core import ids
from tui.core.errors import FormationError, MurmurTuiError
from tui.core.formation import peers, tokens
from tui.core.formation.admission import Admitted, AdmittedMember
from tui.core.formation.peers import PeerProcess, Say
from tui.core.formation.seat import Callee, Seat, urls_line
from tui.core.fs.private_files import make_private_dirs, write_private

READY_WITHIN = 180.0  # seconds for every member's door to answer
PROBE_EVERY = 0.1  # seconds between two probes of a door's card
KILL_AFTER = 25.0  # seconds from the lifelines' closing to SIGKILL
OUTPUT_LOG = "output.log"  # the members' output, when it is not the launcher's stderr
CHANGED = "E-RUN-047"  # an installed member's archive changed since admission


@dataclass(eq=False)
class Formation:
    admitted: Admitted
    formation_id: str
    folder: Path  # $MURMUR_HOME/formations/<frm>/
    entry_seat: Seat
    peers: list[PeerProcess] = field(default_factory=list)
    _signing: Any = field(default=None, repr=False)

    def line(self) -> str:
        """The formation line of `--json` (no token)."""
        return json.dumps({
            "entry": self.entry_seat.member, "formation_id": self.formation_id,
            "peers": [{"name": peer.name, "pid": peer.process.pid,
                       "session_id": peer.ready.session_id if peer.ready else None,
                       "url": peer.ready.url if peer.ready else None,
                       "workdir": str(peer.folder)} for peer in self.peers]})

    def block(self) -> list[str]:
        """The human `formation:` block, one line a string."""
        width = max(len(member.name) for member in self.admitted.members)
        lines = [f"formation: {self.formation_id}"]
        for peer in self.peers:
            capsule = peer.member.capsule
            ready = peer.ready
            lines.append(f"  peer   {peer.name:<{width}}  {capsule.name}@{capsule.version}  "
                         f"pid {peer.process.pid}  {ready.session_id if ready else '-'}  "
                         f"{ready.url if ready else '-'}")
            lines.append(f"         workdir {peer.folder}")
        lines.append(f"  entry  {self.entry_seat.member:<{width}}  starting")
        return lines

    def end(self, kill_after: float = KILL_AFTER) -> None:
        """Close every lifeline and drop the key; SIGKILL the group of a member still
        running `kill_after` seconds later. Returns once every member process has ended."""
        self._signing = None
        for peer in self.peers:
            peer.close_channel()
            peer.close_lifeline()
        ends = time.monotonic() + kill_after
        for peer in self.peers:
            try:
                peer.process.wait(max(0.0, ends - time.monotonic()))
            except subprocess.TimeoutExpired:
                peer.kill_group()
                peer.process.wait()


def launch(admitted: Admitted, home: Path, say: Say | None,
           stopped: Callable[[], bool] = lambda: False,
           ready_within: float = READY_WITHIN, words: bool = True) -> Formation:
    """Start every non-entry member and wait until each door answers for its session
    (FormationError when one does not; every member started is ended first). `say` takes the
    members' output lines (worded, or their JSON events: `words`) — None: they go to the
    formation's `output.log` (0600); `stopped`
    is asked between probes (a signal came)."""
    formation_id = ids.formation_id()
    signing, verify_key = tokens.new_keys()
    folder = home / "formations" / formation_id
    make_private_dirs(folder)
    write_private(folder / "formation.json", json.dumps(_launcher(admitted), indent=2) + "\n")
    if say is None:
        say = OutputLog(folder / OUTPUT_LOG)
    entry = admitted.entry
    formation = Formation(admitted, formation_id, folder,
                          _seat(admitted, entry, formation_id, signing, verify_key),
                          _signing=signing)
    try:
        for member in admitted.members:
            if member.entry:
                continue
            unchanged(member)
            place = folder / member.name
            try:
                place.mkdir(mode=0o700)
            except FileExistsError:
                raise FormationError(f"member {member.name}'s directory {place} is already "
                                     "there: a formation's directories are never reused"
                                     ) from None
            os.chmod(place, 0o700)
            seat = _seat(admitted, member, formation_id, signing, verify_key)
            formation.peers.append(peers.start(member, seat, place, say, words))
        _wait_ready(formation, home, stopped, ready_within)
        unchanged(entry)  # the entry starts next, in this process
    except BaseException:
        formation.end(kill_after=5.0)
        raise
    urls = {peer.name: peer.ready.url for peer in formation.peers if peer.ready}
    for peer in formation.peers:
        peer.send(urls_line({name: urls[name] for name in peer.seat.callee_names}))
        peer.close_channel()
    entry_seat = formation.entry_seat
    entry_seat.know_urls({name: urls[name] for name in entry_seat.callee_names})
    return formation


class OutputLog:
    """The members' output lines appended to one file (0600), for a launcher whose stderr
    is a screen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def __call__(self, line: str) -> None:
        with contextlib.suppress(OSError):
            os.write(self._fd, (line + "\n").encode("utf-8", "replace"))


def unchanged(member: AdmittedMember) -> None:
    """FormationError E-RUN-047 when `member`'s archive is not the one admission read (a
    `source:` member is read in place and never bound to bytes)."""
    if member.archive is None or member.sha256 is None:
        return
    from tui.core.artifacts.pins import sha256_hex
    from tui.core.artifacts.store import read_capped, store_hash

    def refuse(why: str) -> FormationError:
        return FormationError(f"member {member.name}: {member.label}'s archive {member.archive} "
                              f"changed since admission: {why}; the formation does not start "
                              "with bytes admission did not check", code=CHANGED)

    try:
        digest = sha256_hex(read_capped(member.archive))
        recorded = store_hash(member.archive.with_name(
            member.archive.name.removesuffix(".mur.zip") + ".sha256"))
    except MurmurTuiError as exc:
        raise refuse(exc.text) from None
    if digest != member.sha256:
        raise refuse(f"admitted at sha256 {member.sha256}, it is now {digest}")
    if recorded != member.sha256:
        raise refuse(f"its sidecar now says {recorded or 'nothing'}, admission read "
                     f"{member.sha256}")


def _seat(admitted: Admitted, member: AdmittedMember, formation_id: str, signing: Any,
          verify_key: str) -> Seat:
    callees = tuple(Callee(name, tokens.mint(signing, formation_id, member.name, name))
                    for name in admitted.callees(member.name))
    return Seat(formation_id, member.name, member.entry, verify_key, callees)


def _launcher(admitted: Admitted) -> dict[str, Any]:
    from tui.core.running.liveness import process_start_token

    return {"project_dir": str(admitted.roster.path.parent.resolve()),
            "launcher_pid": os.getpid(), "launcher_start": process_start_token(os.getpid())}


def _wait_ready(formation: Formation, home: Path, stopped: Callable[[], bool],
                within: float) -> None:
    """Every member's readiness line, then its door's card naming its session."""
    from tui.core.running.probe import verify

    ends = time.monotonic() + within
    waiting = list(formation.peers)
    while waiting:
        for peer in list(waiting):
            if peer.gone is not None:
                raise FormationError(f"member {peer.name} ended before its door was ready "
                                     f"({peer.gone}); its output is the lines prefixed "
                                     f"[{peer.name}]")
            if peer.ready is None:
                continue
            record = _record(home, peer.ready.session_id)
            if record is not None and verify(record, timeout=1.0).state == "live":
                waiting.remove(peer)
        if not waiting:
            return
        if stopped():
            raise FormationError("stopped before every member's door was ready")
        if time.monotonic() >= ends:
            names = ", ".join(peer.name for peer in waiting)
            raise FormationError(f"no answer from the door of {names} within {within:g} s "
                                 "(its agent card must name the session its readiness line "
                                 "reported)")
        time.sleep(PROBE_EVERY)


def _record(home: Path, session_id: str) -> Any:
    from tui.core.running.records import read_records

    for found in read_records(home):
        if found.record is not None and found.record.session_id == session_id:
            return found.record
    return None
