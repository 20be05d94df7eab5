"""One non-entry member of a launched formation (spec murmur-newest §7.3): its process —
`murmur-tui launch <capsule> --headless --serve 127.0.0.1:0 --json --workdir <its dir>` in its
own directory and process group — with its channel and lifeline, its readiness line, its output
handed on line by line, and how it ended.

The launcher holds the write ends of both pipes; the member inherits only its own read ends
(`pass_fds`), so a member never holds another's lifeline and the launcher's death closes them
all.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tui.core.formation.admission import AdmittedMember
from tui.core.formation.members import ENV_CHANNEL, ENV_ID, ENV_LIFELINE
from tui.core.formation.peer_words import PeerWords
from tui.core.formation.seat import Seat

Say = Callable[[str], None]  # one line of the launcher's (no newline)
MAX_OUTPUT_LINE = 64 * 1024


@dataclass(frozen=True)
class Ready:
    """A member's readiness line (`mur run --json`'s, murmur-tui's `launch --serve --json`)."""

    session_id: str
    url: str  # http://host:port
    pid: int
    workdir: str


@dataclass(eq=False)
class PeerProcess:
    member: AdmittedMember
    seat: Seat
    folder: Path  # $MURMUR_HOME/formations/<frm>/<member>/
    process: subprocess.Popen[bytes]
    channel: int | None  # write end of the channel; closed once the URLs are sent
    lifeline: int | None  # write end of the lifeline; closed when the formation ends
    ready: Ready | None = None
    ending: threading.Event = field(default_factory=threading.Event)  # the launcher ends it
    gone: str | None = None  # `exit N` / `signal S`, once it ended

    @property
    def name(self) -> str:
        return self.member.name

    def send(self, line: str) -> None:
        """A line on the member's channel (a closed channel is a member already gone)."""
        if self.channel is None:
            return
        with contextlib.suppress(OSError):
            os.write(self.channel, line.encode("utf-8"))

    def close_channel(self) -> None:
        _close(self.channel)
        self.channel = None

    def close_lifeline(self) -> None:
        self.ending.set()
        _close(self.lifeline)
        self.lifeline = None

    def kill_group(self) -> None:
        """SIGKILL the member's process group (its pid is the group's id)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)


def start(member: AdmittedMember, seat: Seat, folder: Path, say: Say,
          words: bool = True) -> PeerProcess:
    """Start the member's process in `folder`, its seat already on its channel; its output
    goes to `say`, each line prefixed `[<member>] ` (its events worded, or as JSON)."""
    channel_read, channel_write = os.pipe()
    lifeline_read, lifeline_write = os.pipe()
    try:
        os.write(channel_write, seat.first_line().encode("utf-8"))  # a pipe holds 64 KiB
        env = {**os.environ, ENV_ID: seat.formation_id, ENV_CHANNEL: str(channel_read),
               ENV_LIFELINE: str(lifeline_read)}
        process = subprocess.Popen(
            [sys.executable, "-m", "tui", "launch", str(member.folder), "--headless",
             "--serve", "127.0.0.1:0", "--json", "--workdir", str(folder)],
            cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, pass_fds=(channel_read, lifeline_read),
            start_new_session=True)
    except BaseException:
        for fd in (channel_write, lifeline_write):
            os.close(fd)
        raise
    finally:
        os.close(channel_read)
        os.close(lifeline_read)
    peer = PeerProcess(member, seat, folder, process, channel_write, lifeline_write)
    assert process.stdout is not None and process.stderr is not None
    threading.Thread(target=_stdout, args=(peer, process.stdout, say, words), daemon=True,
                     name=f"peer-{member.name}-out").start()
    threading.Thread(target=_lines, args=(peer, process.stderr, say), daemon=True,
                     name=f"peer-{member.name}-err").start()
    threading.Thread(target=_waiter, args=(peer, say), daemon=True,
                     name=f"peer-{member.name}-wait").start()
    return peer


def _stdout(peer: PeerProcess, stream: IO[bytes], say: Say, words: bool) -> None:
    """The first JSON object naming a session and a url is the readiness line, handed on as
    it is; every line after it is worded (`words`) or handed on as it is (`peer_words`)."""
    told = PeerWords(peer.name, say, words)
    for line in _read(stream):
        if peer.ready is None:
            peer.ready = _readiness(line)
            if peer.ready is not None:
                say(f"[{peer.name}] {line}")
                continue
        told.line(line)
    told.close()


def _lines(peer: PeerProcess, stream: IO[bytes], say: Say) -> None:
    for line in _read(stream):
        say(f"[{peer.name}] {line}")


def _read(stream: IO[bytes]) -> Any:
    with stream:
        for raw in iter(lambda: stream.readline(MAX_OUTPUT_LINE), b""):
            yield raw.decode("utf-8", "replace").rstrip("\r\n")


def _waiter(peer: PeerProcess, say: Say) -> None:
    """When the process ends: how, and — when the launcher was not ending it — say so."""
    code = peer.process.wait()
    peer.gone = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
    if not peer.ending.is_set():
        say(f"[{peer.name}] gone ({peer.gone})")


def _readiness(line: str) -> Ready | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    session_id, url, pid = data.get("session_id"), data.get("url"), data.get("pid")
    if not (isinstance(session_id, str) and isinstance(url, str) and isinstance(pid, int)):
        return None
    address = url if "://" in url else f"http://{url}"
    return Ready(session_id, address, pid, str(data.get("workdir") or ""))


def _close(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
