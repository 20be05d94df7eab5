"""The session's inbox wakes a waiting `take` on each thing it waits for — a task sent, the
inbox closed, the session canceled, the background work it expected ended — rather than
looking again every so often."""

from __future__ import annotations

import threading

from tui.core.cancel import CancelToken
from tui.core.loop.inbox import Inbox, Pending

WAIT = 60.0  # a hang fails; a loaded machine still passes


def waiting(inbox: Inbox, cancel: CancelToken) -> tuple[threading.Thread, list[Pending | None]]:
    taken: list[Pending | None] = []
    thread = threading.Thread(target=lambda: taken.append(inbox.take(True, cancel)))
    thread.start()
    return thread, taken


def test_a_task_sent_to_a_waiting_session_is_taken() -> None:
    inbox = Inbox(depth=4)
    thread, taken = waiting(inbox, CancelToken())
    task = Pending("next")
    assert inbox.send(task)
    thread.join(WAIT)
    assert taken == [task]


def test_a_cancel_ends_the_wait() -> None:
    inbox, cancel = Inbox(depth=4), CancelToken()
    thread, taken = waiting(inbox, cancel)
    cancel.set()
    thread.join(WAIT)
    assert not thread.is_alive() and taken == [None]


def test_a_closed_inbox_waits_for_expected_background_work_and_ends_when_it_does() -> None:
    inbox = Inbox(depth=4)
    running = threading.Event()
    running.set()
    inbox.expecting = running.is_set
    inbox.close()
    thread, taken = waiting(inbox, CancelToken())
    completion = Pending("the command ended", source="detached_shell", origin="completion")
    assert inbox.send(completion, lane="bg")  # work ended and sent its result
    thread.join(WAIT)
    assert taken == [completion]
    thread, taken = waiting(inbox, CancelToken())
    running.clear()  # the last work ended without a result to send
    inbox.wake()
    thread.join(WAIT)
    assert not thread.is_alive() and taken == [None]
