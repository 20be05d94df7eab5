"""Test helpers that tests in several folders share: a sink that keeps every event, a
conversation record written with the real writer, a session attached to the real app, and a
driver that answers from a list and records what it was sent."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core.cancel import CancelToken
from tui.core.events import vocabulary as ev
from tui.core.inference.driver import DriverReply, StreamSink
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule
from tui.core.record.writer import RecordWriter, record_path

if TYPE_CHECKING:
    from tui.app.app import SupervisorApp


class Collect:
    """An event sink that keeps what it is given, in order."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)

    def of(self, cls: type[ev.E]) -> list[ev.E]:
        return [e for e in self.events if isinstance(e, cls)]


def write_conversation(home: Path, record: str, context: str,
                       messages: list[dict[str, object]], mtime: float | None = None) -> Path:
    """A conversation record under `home`, as a session writes it; `mtime` dates it."""
    path = record_path(home, record, context)
    assert path is not None
    writer = RecordWriter(home, path, lambda _: None)
    for message in messages:
        writer.append(message)
    writer.close()
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def start_session(app: SupervisorApp, root: Path) -> Session:
    """The capsule at `root` as the app's session, reporting to the app's bridge."""
    session = Session(load_capsule(root), LaunchOptions(task="t"), sinks=[app.bridge],
                      responder=app.responder, cancel=app.cancel)
    app.attach(session)
    return session


class RecordingDriver:
    """A driver that answers from a list of §4.3 responses (or DriverReply / exceptions) and
    keeps every request it was sent."""

    name = "recording"

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []

    def complete(self, request: dict[str, Any], stream: StreamSink,
                 cancel: CancelToken) -> DriverReply:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, DriverReply):
            return answer
        for block in answer.get("content", []):  # type: ignore[attr-defined]
            if block.get("type") == "text":
                stream.text(block["text"])
        return DriverReply("passed", json.dumps(answer))

    def close(self) -> None:
        return None
