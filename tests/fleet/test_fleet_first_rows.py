"""The fleet lists every running record at once, before any door has answered: a row says
connecting… while its door is checked, and then what the check found (docs/fleet.md, "Hosts").
A fleet of many sessions is on the screen in the time it takes to read the records, not in the
time the slowest door takes to answer its card."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from tests.fleet.test_fleet_edges import screen_lines
from tests.fleet.test_ps import record
from tests.waits import wait_until
from tui.app.fleet.app import FleetApp
from tui.core import ids


class HeldDoor:
    """A loopback port that takes connections and never answers, until released."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.held: list[socket.socket] = []
        self.released = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.released.is_set():
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(connection)

    def release(self) -> None:
        self.released.set()
        for connection in self.held:
            connection.close()
        self.sock.close()


async def test_a_record_is_a_row_while_its_door_is_still_being_asked(
        tmp_path: Path, murmur_home: Path) -> None:
    door = HeldDoor()
    session = ids.session_id()
    record(murmur_home, session, door.url, tmp_path / "w")
    app = FleetApp(murmur_home)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_until(pilot, lambda: session in app.fleet.lines)
            await wait_until(pilot, lambda: door.held)  # its card is asked for, never given
            row = app.sessions[session]
            assert row.connection == "connecting"
            await wait_until(pilot, lambda: "connecting" in " ".join(screen_lines(app)),
                             what=lambda: screen_lines(app))
            assert not door.released.is_set()
            door.release()  # the card never comes: the check says so on the same row
            await wait_until(pilot, lambda: app.sessions[session].connection != "connecting",
                             what=lambda: app.sessions[session].connection)
            assert list(app.sessions) == [session]
    finally:
        door.release()
