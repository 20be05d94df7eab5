"""A served session that waits for its first task takes the first one the door is sent, however
early it comes: before the session's thread has started to wait for it, or after; and a
session canceled or stopped while it waits stops waiting."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.capsules import write_capsule
from tests.responses import text_response
from tui.core.asking.questions import QuestionBoard
from tui.core.cancel import CancelToken
from tui.core.door import Door
from tui.core.door.tasks import DoorTask
from tui.core.loop.build import SessionSpec, build_session
from tui.core.loop.launch import LaunchOptions
from tui.core.manifest.reader import load_capsule


@pytest.fixture
def door(tmp_path: Path, murmur_home: Path) -> Iterator[Door]:
    capsule = load_capsule(write_capsule(tmp_path / "c", [text_response("done")]))
    door = Door(capsule, QuestionBoard())
    session = build_session(SessionSpec(capsule, LaunchOptions(home=murmur_home)))
    door.attach(session, wait_for_first=True)
    yield door
    session.close_unstarted()


def test_a_task_sent_before_the_session_waits_for_it_is_its_first_task(door: Door) -> None:
    early = DoorTask("tsk_early", "ctx_1", text="the early one")
    assert door.submit(early) is None
    assert door.first_task(CancelToken()) is early  # handed over, not lost


def test_a_task_sent_while_the_session_waits_is_its_first_task(door: Door) -> None:
    taken: list[DoorTask | None] = []
    waiter = threading.Thread(target=lambda: taken.append(door.first_task(CancelToken())))
    waiter.start()
    task = DoorTask("tsk_late", "ctx_1", text="the late one")
    assert door.submit(task) is None
    waiter.join(timeout=60)
    assert taken == [task]


@pytest.mark.parametrize("how", ["canceled", "stopped"])
def test_a_session_canceled_or_stopped_while_it_waits_stops_waiting(door: Door,
                                                                      how: str) -> None:
    cancel = CancelToken()
    taken: list[DoorTask | None] = []
    waiter = threading.Thread(target=lambda: taken.append(door.first_task(cancel)))
    waiter.start()
    if how == "canceled":
        cancel.set()
    else:
        door.stop()
    waiter.join(timeout=60)
    assert not waiter.is_alive() and taken == [None]
