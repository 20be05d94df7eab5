"""Test helpers that tests in several folders share: a sink that keeps every event, a
conversation record written with the real writer, and a session attached to the real app."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tui.core import events as ev
from tui.core.loop.session import LaunchOptions, Session
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
