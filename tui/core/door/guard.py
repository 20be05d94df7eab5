"""What keeps the door up under load: its limits, the connections it holds, and the one line it
says about trouble.

A connection is counted from accept to close, in one of four phases: `reading` (its request has
not fully arrived), `answering`, `streaming` (an SSE stream: served work a caller asked for)
and `closing` (answered; what the peer still sends is read and dropped). A connection reading
(or closing), with nothing arrived that the door has not read, is *slow* once it has been
silent too long: `SILENT_AFTER` (0.1 s) for one that has not sent a byte since it came — a
client sends its request as its connection opens, and the bytes arrive with it — and
`SLOW_AFTER` (0.5 s) since the last bytes of one that has (half a second covers a long round
trip between two of a client's packets). Only a slow connection is ever closed to make room:
a client sending its request never is, and a request that has arrived (its bytes in the
kernel or in its transport's buffer, not yet read) is about to be served.

- **Per peer**: a peer holds at most `per_peer` slow connections. When a new one comes, its
  oldest slow ones beyond that are closed. A burst of quick requests is never cut, and on a
  loopback door — where every local program is the same peer — a program that trickles
  cannot shut the others out.
- **In total**: at most `connections` at once. A new one past it takes the place of the
  oldest slow connection, whoever's; when there is none (every place is served work or a
  connection still sending), it is answered 503 (`accept.BUSY`) with `retry-after`.

So a flood of silent or trickling peers cannot keep a quick request out for long: each place
they hold is given up after a tenth of a second of silence (half a second once they have sent
something), and every request is bounded by the deadline anyway.

Everything here runs on the door's event loop thread; nothing needs a lock.
"""

from __future__ import annotations

import fcntl
import os
import resource
import socket
import struct
import termios
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

CONNECTIONS = 256  # connections open at once, all peers together
PER_PEER = 64  # slow ones from one peer address
SILENT_AFTER = 0.1  # seconds after which a connection that never sent a byte is slow
SLOW_AFTER = 0.5  # seconds of silence after its last bytes after which a reading one is slow
READ_TIMEOUT = 30.0  # seconds a request may go without sending a byte
DEADLINE = 30.0  # seconds for a request's whole head and body
WRITE_TIMEOUT = 60.0  # seconds a stream may wait for its peer to take what it was sent
ACCEPT_PAUSE = 0.1  # seconds accepting pauses when the process is out of descriptors (doubled
ACCEPT_PAUSE_MAX = 2.0  # on each failure in a row, up to this)
LINGER = 1.0  # seconds an answered connection's unread body is read and dropped before closing
NOTE_EVERY = 60.0  # seconds between two lines about the same kind of trouble


@dataclass(frozen=True)
class ConnectionLimits:
    connections: int = CONNECTIONS
    per_peer: int = PER_PEER
    silent_after: float = SILENT_AFTER
    slow_after: float = SLOW_AFTER
    read_timeout: float = READ_TIMEOUT
    deadline: float = DEADLINE
    write_timeout: float = WRITE_TIMEOUT
    accept_pause: float = ACCEPT_PAUSE
    linger: float = LINGER

    def within_descriptors(self) -> ConnectionLimits:
        """These limits, with the total held to half the descriptors the process has free
        when the door starts (`ulimit -n` less those open): the session keeps descriptors for
        its own files, pipes, imports and sockets however many peers connect."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self
        try:
            in_use = len(os.listdir("/proc/self/fd")) - 1  # less the one listing them
        except OSError:  # no /proc: count none open
            in_use = 0
        most = max(1, (soft - in_use) // 2)
        return replace(self, connections=min(self.connections, most),
                       per_peer=min(self.per_peer, most))


@dataclass(eq=False)
class HeldConnection:
    """One counted connection."""

    peer: str
    since: float
    close: Callable[[], None]
    sock: socket.socket | None = None
    phase: str = "reading"  # reading | answering | streaming | closing
    heard: float = 0.0  # when bytes last came from it (0: never)
    arrived: int = 0  # bytes its transport took from the kernel
    taken: int = 0  # of them, bytes the request's reader has consumed

    def slow(self, now: float, limits: ConnectionLimits) -> bool:
        """Reading or closing, silent too long (see the module's doc), and nothing arrived
        that the door has not read yet — in the kernel, or in its transport's buffer (a loop
        running late has not got to it: that is the door's delay, not the peer's)."""
        silent = now - self.since >= limits.silent_after if not self.heard else \
            now - self.heard >= limits.slow_after
        return silent and self.phase in ("reading", "closing") and \
            self.arrived == self.taken and unread(self.sock) == 0


def unread(sock: socket.socket | None) -> int:
    """Bytes the kernel holds for `sock` that nobody has read (0 once it is closed)."""
    if sock is None or sock.fileno() < 0:
        return 0
    try:
        return int(struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD,
                                                  b"\0\0\0\0"))[0])
    except OSError:
        return 0


class Guard:
    def __init__(self, limits: ConnectionLimits,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._held: dict[HeldConnection, None] = {}  # insertion order: the oldest first
        self._peers: Counter[str] = Counter()  # connections held, by peer
        self.evicted = 0
        self.refused = 0

    @property
    def open(self) -> int:
        return len(self._held)

    def holds(self, held: HeldConnection) -> bool:
        return held in self._held

    def admit(self, peer: str, close: Callable[[], None], sock: socket.socket | None = None
              ) -> HeldConnection | None:
        """Count a new connection from `peer` (None: refuse it, no place can be made). To
        make room, slow connections are closed (`close` is called on each)."""
        now, limits = self._clock(), self.limits
        if self._peers[peer] >= limits.per_peer:  # only then can it hold too many slow
            mine = [held for held in self._held if held.peer == peer and held.slow(now, limits)]
            for held in mine[:max(0, len(mine) - self.limits.per_peer + 1)]:
                self._evict(held)
        if len(self._held) >= self.limits.connections:
            victim = next((held for held in self._held if held.slow(now, limits)), None)
            if victim is None:
                self.refused += 1
                return None
            self._evict(victim)
        held = HeldConnection(peer, now, close, sock)
        self._held[held] = None
        self._peers[peer] += 1
        return held

    def release(self, held: HeldConnection) -> None:
        """The connection is gone (idempotent)."""
        if self._held.pop(held, 0) is None:
            self._peers[held.peer] -= 1
            if not self._peers[held.peer]:
                del self._peers[held.peer]

    def _evict(self, held: HeldConnection) -> None:
        self.release(held)
        self.evicted += 1
        held.close()


class Notes:
    """At most one line per kind of trouble per `every` seconds, however often it happens;
    the next line says how many were not written."""

    def __init__(self, write: Callable[[str], None], every: float = NOTE_EVERY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._write = write
        self._every = every
        self._clock = clock
        self._last: dict[str, float] = {}
        self._quiet: Counter[str] = Counter()

    def note(self, kind: str, line: str) -> None:
        now = self._clock()
        last = self._last.get(kind)
        if last is not None and now - last < self._every:
            self._quiet[kind] += 1
            return
        self._last[kind] = now
        quiet = self._quiet.pop(kind, 0)
        if quiet:
            line += f" ({quiet} more like it not shown)"
        self._write(line)
