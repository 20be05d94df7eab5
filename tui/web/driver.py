"""The Textual driver of a fleet served in a browser (`murmur-tui fleet --web`, docs/fleet.md
"In a browser").

textual-serve runs one process per browser tab and speaks to it over stdin/stdout in
Textual's web-driver packets. Textual's own `WebDriver` assumes one app per process: it
writes the `__GANGLION__` prelude when its app starts, reads stdin on a thread of its own
until its app ends, and tells the server `exit` — which closes the tab's websocket — when its
app stops. The fleet is several apps in turn in one process (the fleet screen, the supervisor
screen Enter opens, the fleet again), so here:

- one `Pump` per process reads stdin for the whole run, parses packets and keys with one
  parser (a packet split across two reads is never lost between apps) and hands them to
  whichever app is running; a resize is remembered, so the next app starts at the tab's size;
- the prelude is written once, and `exit` only by `finish()`, at the end of the run;
- the server's `quit` (the tab was closed) or the end of stdin ends the running app and marks
  the run `ended`: the loop opens no further app.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
import signal
import sys
import threading
from codecs import getincrementaldecoder
from collections.abc import Iterable
from typing import Any

from textual import events, messages
from textual._xterm_parser import XTermParser
from textual.drivers._byte_stream import ByteStream
from textual.drivers.web_driver import WebDriver
from textual.geometry import Size
from textual.message import Message

PRELUDE = b"__GANGLION__\n"
TICK_SECONDS = 0.1  # a lone Esc is told apart from an escape sequence after this long


class Pump:
    """The process's one reader of stdin, and what outlives each app."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.driver: ServedDriver | None = None
        self.size: tuple[int, int] | None = None
        self.ended = threading.Event()
        self.started = False
        self.prelude_written = False
        self._parser = XTermParser()
        self._decode = getincrementaldecoder("utf-8")(errors="replace").decode

    def attach(self, driver: ServedDriver) -> None:
        with self.lock:
            self.driver = driver
            if not self.started:
                self.started = True
                threading.Thread(target=self._read, name="served-input", daemon=True).start()

    def detach(self, driver: ServedDriver) -> None:
        with self.lock:
            if self.driver is driver:
                self.driver = None

    def _read(self) -> None:
        stream = ByteStream()
        fileno = sys.__stdin__.fileno() if sys.__stdin__ is not None else 0
        with selectors.DefaultSelector() as selector:
            selector.register(fileno, selectors.EVENT_READ)
            while True:
                data = b""
                if selector.select(TICK_SECONDS):
                    try:
                        data = os.read(fileno, 4096)
                    except OSError:
                        data = b""
                    if not data:
                        self._end()
                        return
                for packet_type, payload in stream.feed(data) if data else ():
                    if packet_type == "D":
                        self._keys(self._parser.feed(self._decode(payload)))
                    else:
                        self._meta(payload)
                self._keys(self._parser.tick())

    def _keys(self, found: Iterable[Message]) -> None:
        for event in found:
            with self.lock:
                driver = self.driver
            if driver is not None:  # between two apps a key has nowhere to go: dropped
                driver.process_message(event)

    def _meta(self, payload: bytes) -> None:
        try:
            meta: Any = json.loads(payload)
        except ValueError:
            return
        kind = meta.get("type") if isinstance(meta, dict) else None
        with self.lock:
            driver = self.driver
        if kind == "resize":
            width, height = meta.get("width"), meta.get("height")
            if isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0:
                self.size = (width, height)
                if driver is not None:
                    size = Size(width, height)
                    driver.post(events.Resize(size, size))
        elif kind == "quit":
            self._end()
        elif kind in ("focus", "blur") and driver is not None:
            driver.post(events.AppFocus() if kind == "focus" else events.AppBlur())

    def _end(self) -> None:
        """The tab is gone: the running app ends, and no other is opened."""
        self.ended.set()
        with self.lock:
            driver = self.driver
        if driver is not None:
            driver.post(messages.ExitApp())


PUMP = Pump()


class ServedDriver(WebDriver):
    """Textual's web driver, one of several in turn in one process (the module's text)."""

    def __init__(self, app: Any, *, debug: bool = False, mouse: bool = True,
                 size: tuple[int, int] | None = None) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size or PUMP.size)

    def post(self, message: Message) -> None:
        """Hand a message to this driver's app from the pump's thread."""
        message.set_sender(self._app)
        self._app.post_message(message)

    def start_application_mode(self) -> None:
        loop = asyncio.get_running_loop()

        def do_exit() -> None:
            asyncio.run_coroutine_threadsafe(self._app._post_message(messages.ExitApp()),
                                             loop=loop)

        for each in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(each, do_exit)
        with PUMP.lock:
            if not PUMP.prelude_written:
                PUMP.prelude_written = True
                self._write(PRELUDE)
        self.write("\x1b[?1049h")  # the alternate screen
        self._enable_mouse_support()
        self.write("\x1b[?25l")  # no cursor
        size = Size(*(PUMP.size or self._size or (80, 24)))
        asyncio.run_coroutine_threadsafe(self._app._post_message(events.Resize(size, size)),
                                         loop=loop)
        self._request_terminal_sync_mode_support()
        self._enable_bracketed_paste()
        PUMP.attach(self)
        if PUMP.ended.is_set():  # the tab closed while no app ran
            self.post(messages.ExitApp())
        self._app.call_later(self._app.post_message, events.AppBlur())

    def stop_application_mode(self) -> None:
        """The app ends; the run may go on with another: no `exit` to the server here."""
        PUMP.detach(self)
        self.exit_event.set()
        self._input_reader.close()
        loop = asyncio.get_running_loop()
        for each in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(each)


def ended() -> bool:
    return PUMP.ended.is_set()


def finish() -> None:
    """The end of the run: the server closes the tab's websocket (the page says the session
    ended, and offers to start it again)."""
    data = json.dumps({"type": "exit"}).encode()
    with contextlib.suppress(OSError):
        os.write(sys.__stdout__.fileno() if sys.__stdout__ is not None else 1,
                 b"M" + len(data).to_bytes(4, "big") + data)
