"""The door's accept loop, in place of asyncio's.

asyncio's server, when `accept` fails with EMFILE (the process is out of descriptors), logs a
traceback through the loop's exception handler and goes on trying the rest of its backlog, each
try another traceback and another retry timer: 150 half-open connections under a low
descriptor limit printed tens of thousands of tracebacks in seconds. Here running out of
descriptors is back-pressure: accepting pauses (`Limits.accept_pause`, doubled on each failure
in a row up to `ACCEPT_PAUSE_MAX`), waiting peers stay in the kernel's backlog, and one line
says so (`Notes`). Every accepted socket is counted by the `Guard` before anything is read
from it; one over the caps is answered 503 at once.

An accepted socket costs the door nothing more until its first bytes arrive: it waits as a bare
socket the loop watches (no task, no transport, no parser), so a flood of connections that
never send a byte is a flood of cheap descriptors, each closed at its first read timeout or
when its place is given to another.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Callable

from tui.core.door.guard import ACCEPT_PAUSE_MAX, Guard, HeldConnection, Notes

OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
BATCH = 16  # sockets accepted per wake-up, so a flood of peers cannot hog the loop
_SAID = b'{"error": "busy", "message": "this door holds all the connections it can; try again"}'
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1"
        b"\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_SAID), _SAID))

Serve = Callable[[socket.socket, HeldConnection], None]


class Listener:
    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop, guard: Guard,
                 serve: Serve, notes: Notes) -> None:
        self.sock = sock
        self.loop = loop
        self.guard = guard
        self.serve = serve
        self.notes = notes
        self._pause = guard.limits.accept_pause
        self._paused: asyncio.TimerHandle | None = None
        self._closed = False
        self._silent: dict[socket.socket, asyncio.TimerHandle] = {}  # accepted, nothing sent
        self.pauses = 0  # times accepting paused for want of descriptors

    def start(self) -> None:
        self.loop.add_reader(self.sock.fileno(), self._ready)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._paused is not None:
            self._paused.cancel()
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(self.sock.fileno())
        self.sock.close()
        for conn in list(self._silent):
            self._drop(conn)

    def _ready(self) -> None:
        for _ in range(BATCH):
            try:
                conn, address = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue  # the peer gave up before it was accepted
            except OSError as exc:
                if exc.errno in OUT_OF_DESCRIPTORS:
                    self._back_off(exc)
                else:
                    self.notes.note("accept", f"door: accepting a connection failed "
                                              f"({exc.strerror or exc})")
                return
            self._pause = self.guard.limits.accept_pause
            self._take(conn, address)

    def _take(self, conn: socket.socket, address: object) -> None:
        conn.setblocking(False)
        peer = str(address[0]) if isinstance(address, tuple) and address else "?"
        held = self.guard.admit(peer, lambda: self._drop(conn), conn)
        if held is None:
            with contextlib.suppress(OSError):
                conn.send(BUSY)
            conn.close()
            self.notes.note("busy", f"door: {self.guard.open} connections open: new ones "
                                    "are answered 503 until some close")
            return
        wait = min(self.guard.limits.read_timeout, self.guard.limits.deadline)
        self._silent[conn] = self.loop.call_later(wait, self._silence, conn, held)
        self.loop.add_reader(conn.fileno(), self._first_bytes, conn, held)

    def _first_bytes(self, conn: socket.socket, held: HeldConnection) -> None:
        """Something came (bytes, or the peer's close): the server takes the connection."""
        self._forget(conn)
        # giving its place away from now on is the server's to do, once it has wrapped it
        held.close = lambda: None
        self.serve(conn, held)

    def _silence(self, conn: socket.socket, held: HeldConnection) -> None:
        """Nothing came within the wait for a first byte: closed, with nothing to answer."""
        self._silent.pop(conn, None)
        self.guard.release(held)
        self._drop(conn)

    def _forget(self, conn: socket.socket) -> None:
        timer = self._silent.pop(conn, None)
        if timer is not None:
            timer.cancel()
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(conn.fileno())

    def _drop(self, conn: socket.socket) -> None:
        self._forget(conn)
        conn.close()

    def _back_off(self, exc: OSError) -> None:
        self.pauses += 1
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(self.sock.fileno())
        self.notes.note("descriptors", f"door: out of file descriptors ({exc.strerror}); "
                                       "accepting pauses until some close")
        self._paused = self.loop.call_later(self._pause, self._resume)
        self._pause = min(self._pause * 2, ACCEPT_PAUSE_MAX)

    def _resume(self) -> None:
        self._paused = None
        if not self._closed:
            self.loop.add_reader(self.sock.fileno(), self._ready)
