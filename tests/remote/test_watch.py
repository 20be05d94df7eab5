"""The watcher on real loopback HTTP: reconnects without repeating a line, stays up through
heartbeats, reports closed and gone, stops promptly."""

from __future__ import annotations

import threading
import time

from tests.door_fake import FakeDoor, ack, closed, frame, heartbeats, serving, silence, status
from tui.core.a2a.client import DoorClient
from tui.core.remote.watch import StreamFrame, Watcher, WatchState

T1, T2 = "tsk_" + "1" * 32, "tsk_" + "2" * 32


class Log:
    def __init__(self) -> None:
        self.frames: list[StreamFrame] = []
        self.states: list[WatchState] = []
        self.done = threading.Event()

    def frame(self, item: StreamFrame) -> None:
        self.frames.append(item)

    def state(self, item: WatchState) -> None:
        self.states.append(item)
        if item.kind in ("closed", "gone"):
            self.done.set()

    def texts(self) -> list[str]:
        return [f.body["text"] for f in self.frames if f.event == "text" and f.body]


def watch(door: FakeDoor, log: Log, **options: float) -> Watcher:
    options.setdefault("heartbeat", door.heartbeat)
    options.setdefault("backoff_first", 0.02)
    return Watcher(DoorClient(door.url, timeout=2), log.frame, log.state, **options).start()


def text(task: str, words: str, frame_id: int) -> tuple[str, object]:
    return frame("text", {"id": task, "text": words, "final": False}, frame_id)


FIRST = [ack(), status(T1, "working", "inference turn 1", 1), text(T1, "a", 2),
         text(T1, "b", 3)]  # then the stream is cut: no capsule-closed
# the replay after the reconnect repeats what was seen, then goes on; the second task's ids
# start again at 0 and repeat the first task's: they are not duplicates
SECOND = [ack(), status(T1, "working", "inference turn 1", 1), text(T1, "a", 2),
          text(T1, "b", 3), text(T1, "c", 4), status(T2, "working", "inference turn 1", 1),
          text(T2, "a", 2), text(T2, "a", 3), closed()]


def test_a_dropped_stream_is_reconnected_without_a_repeated_line() -> None:
    log = Log()
    with serving(FakeDoor("C", [FIRST, SECOND])) as door:
        watcher = watch(door, log)
        assert log.done.wait(30)
        watcher.close()
    assert log.texts() == ["a", "b", "c", "a", "a"]
    assert [s.kind for s in log.states] == ["live", "reconnecting", "live", "closed"]
    assert log.states[1].attempt == 1 and "without capsule-closed" in log.states[1].reason
    assert all(r.headers.get("last-event-id") == "0" for r in door.rpc("stream/watch"))
    assert watcher.dedup.repeats == 3


def test_a_gap_comes_through_and_frames_are_passed_on_in_order() -> None:
    script = [ack(), frame("gap", {"first_available_id": 37}), text(T1, "x", 38),
              frame("unknown-kind", "not json at all", 39), closed()]
    log = Log()
    with serving(FakeDoor("B", [script])) as door:
        watch(door, log)
        assert log.done.wait(30)
    assert [f.event for f in log.frames] == ["connection-ack", "gap", "text", "unknown-kind",
                                             "capsule-closed"]
    assert log.frames[1].body == {"first_available_id": 37} and log.frames[3].body is None


def test_heartbeats_keep_an_idle_stream_up() -> None:
    script = [ack(), heartbeats(8), text(T1, "after the idle", 1), closed()]
    log = Log()
    with serving(FakeDoor("A", [script], heartbeat=0.1)) as door:
        watch(door, log, heartbeat=0.1)  # 0.8 s of heartbeats, the read cap is 0.2 s
        assert log.done.wait(30)
    assert [s.kind for s in log.states] == ["live", "closed"]
    assert log.texts() == ["after the idle"]
    assert door.watches == 1


def test_silence_past_two_heartbeats_reconnects() -> None:
    log = Log()
    with serving(FakeDoor("C", [[ack(), text(T1, "one", 1), silence(3)],
                                [ack(), text(T1, "one", 1), text(T1, "two", 2), closed()]],
                          heartbeat=0.1)) as door:
        watch(door, log, heartbeat=0.1)
        assert log.done.wait(30)
    assert log.texts() == ["one", "two"]
    assert log.states[1].kind == "reconnecting" and "no heartbeat" in log.states[1].reason


def test_a_door_that_vanishes_is_gone_with_why() -> None:
    log = Log()
    door = FakeDoor("C", [[ack(), text(T1, "one", 1), heartbeats(1000)]]).start()
    watcher = watch(door, log, gone_after=1.0, backoff_max=0.2)
    deadline = time.monotonic() + 30
    while not log.frames and time.monotonic() < deadline:
        time.sleep(0.01)
    door.vanish()
    assert log.done.wait(30)
    gone = log.states[-1]
    assert gone.kind == "gone" and "connection refused" in gone.reason
    assert any(s.kind == "reconnecting" and s.attempt >= 2 for s in log.states)
    watcher.join(5)


def test_a_refused_watch_is_gone_at_once() -> None:
    log = Log()
    with serving(FakeDoor("C", [[ack()]], token="the-right-token-1234")) as door:
        watch(door, log)
        assert log.done.wait(30)
    assert log.states[-1].kind == "gone"
    assert "HTTP 401 unauthenticated" in log.states[-1].reason
    assert len(door.rpc("stream/watch")) == 1


def test_a_different_session_at_the_address_is_gone() -> None:
    log = Log()
    with serving(FakeDoor("C", [[ack(), closed()]])) as door:
        Watcher(DoorClient(door.url), log.frame, log.state,
                session_id="ses_someone_else").start()
        assert log.done.wait(30)
    assert log.states[-1].kind == "gone" and "not ses_someone_else" in log.states[-1].reason
    assert door.rpc("stream/watch") == []


def test_close_stops_a_live_watch_promptly() -> None:
    log = Log()
    with serving(FakeDoor("C", [[ack(), heartbeats(10_000)]], heartbeat=1.0)) as door:
        watcher = watch(door, log, heartbeat=1.0)
        deadline = time.monotonic() + 30
        while not log.states and time.monotonic() < deadline:
            time.sleep(0.01)
        watcher.close(wait=10)
        assert not watcher._thread.is_alive()
