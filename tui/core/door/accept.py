"""The door's accept loop, in place of asyncio's.

asyncio's server, when `accept` fails with EMFILE (the process is out of descriptors), logs a
traceback through the loop's exception handler and goes on trying the rest of its backlog, each
try another traceback and another retry timer: 150 half-open connections under a low
descriptor limit printed tens of thousands of tracebacks in seconds. Here running out of
descriptors is back-pressure: accepting pauses (`Limits.accept_pause`, doubled on each failure
in a row up to `ACCEPT_PAUSE_MAX`), waiting peers stay in the kernel's backlog, and one line
says so (`Notes`). Every accepted socket is counted by the `Guard` before anything is read
from it; one over the caps is answered 503 at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Callable

from tui.core.door.guard import ACCEPT_PAUSE_MAX, Guard, Held, Notes

OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
BATCH = 64  # sockets accepted per wake-up, so a flood of peers cannot hog the loop
_SAID = b'{"error": "busy", "message": "this door holds all the connections it can; try again"}'
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1"
        b"\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_SAID), _SAID))

Serve = Callable[[socket.socket, Held], None]


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
        # until the server wraps it, giving this connection's place away marks it to be closed
        # there (closing the socket here would pull it from under its transport being made)
        held = self.guard.admit(peer, lambda: None)
        if held is None:
            with contextlib.suppress(OSError):
                conn.send(BUSY)
            conn.close()
            self.notes.note("busy", f"door: {self.guard.open} connections open: new ones "
                                    "are answered 503 until some close")
            return
        self.serve(conn, held)

    def _back_off(self, exc: OSError) -> None:
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
