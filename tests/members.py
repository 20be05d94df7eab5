"""Formation members served in this process: a real Session with a seat (`LaunchOptions.seat`,
as the formation channel hands it) on a real door, its running record written as
`launch --headless --serve` writes it — what a launcher's member is, without the launcher."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.served import V1
from tui.core.asking.questions import QuestionBoard
from tui.core.cancel import CancelToken
from tui.core.door import Door
from tui.core.door.serving import Serving
from tui.core.formation.seat import Callee, Seat
from tui.core.headless import HeadlessResponder
from tui.core.loop.build import SessionSpec, build_session
from tui.core.loop.launch import LaunchOptions
from tui.core.manifest.reader import load_capsule


def seat(formation_id: str, member: str, entry: bool = False,
         callees: tuple[str, ...] = ()) -> Seat:
    return Seat(formation_id, member, entry, verify_key="key",
                callees=tuple(Callee(name, f"mft1.{member}.{name}") for name in callees))


class Member:
    """One member: its session serving its door on a thread of this process."""

    def __init__(self, root: Path, home: Path, place: Seat) -> None:
        capsule = load_capsule(root)
        board = QuestionBoard()
        board.door_only = True
        self.door = Door(capsule, board)
        self.cancel = CancelToken()
        self.session = build_session(SessionSpec(
            capsule, LaunchOptions(home=home, seat=place), sinks=(self.door.sink,),
            responder=HeadlessResponder([], board=board), cancel=self.cancel))
        self.serving = Serving.start(self.door, self.session)
        self.session_id = self.session.session_id
        self.url = self.serving.url if "://" in self.serving.url else \
            f"http://{self.serving.url}"
        self.runner = threading.Thread(target=self._run, name=f"member {place.member}",
                                       daemon=True)
        self.runner.start()

    def _run(self) -> None:
        if self.serving.waits and not self.serving.first_task(self.cancel):
            return
        self.session.run()

    def send(self, text: str) -> str:
        """A task through the door; its id."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}}
        reply = httpx.post(self.url, json=body, headers=V1, timeout=30).json()
        return str(reply["result"]["task"]["id"])

    def close(self) -> None:
        self.cancel.set()  # the running task ends canceled, the session ends
        self.session.inbox.close()
        self.runner.join(30)
        if self.runner.is_alive():
            self.session.finish_now("the test ended")
        self.serving.end()


@pytest.fixture
def members() -> Iterator[list[Member]]:
    running: list[Member] = []
    yield running
    for member in running:
        member.close()
