"""Murmur's stream frames (streaming-protocol.md): the frame, its SSE form, the replay buffer
and the subscribers that read from it, and the sink that turns a session's events into frames.

Frames with an id take it from one session-wide sequence starting at 1. The replay buffer keeps
the newest `REPLAY_FRAMES` of them; each connection reads live frames from a queue of
`QUEUE_FRAMES`, and one that falls behind loses the oldest and is told with a `lagged` frame
before the next frame it receives. DoorFrame text is already redacted: every event reaches a sink
after `EventStream` has passed it through the one redaction.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui.core.door.told import Told, as_json
from tui.core.events import vocabulary as ev

REPLAY_FRAMES = 512
QUEUE_FRAMES = 128
HEARTBEAT = b":heartbeat\n\n"


@dataclass(frozen=True)
class DoorFrame:
    event: str
    data: dict[str, Any]
    id: int | None = None

    def sse(self) -> bytes:
        """The frame's lines: `id:` (when it has one), `event:`, one `data:` line, a blank."""
        head = f"id: {self.id}\n" if self.id is not None else ""
        body = json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))
        return f"{head}event: {self.event}\ndata: {body}\n\n".encode()

    @property
    def final(self) -> bool:
        return self.event == "status" and bool(self.data.get("final"))


class Subscriber:
    """One connection's live frames: a bounded queue, filled from any thread; `wake` is called
    (from the publishing thread) after each put so the connection's loop can drain it."""

    def __init__(self, wake: Callable[[], None], limit: int = QUEUE_FRAMES) -> None:
        self._wake = wake
        self._limit = limit
        self._queue: deque[DoorFrame] = deque()
        self._missed = 0
        self._lock = threading.Lock()
        self.closed = False

    def put(self, frame: DoorFrame) -> None:
        with self._lock:
            if len(self._queue) >= self._limit:
                self._queue.popleft()
                self._missed += 1
            self._queue.append(frame)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def drain(self) -> list[DoorFrame]:
        """What arrived since the last drain, a `lagged` frame first when some were lost."""
        with self._lock:
            frames = list(self._queue)
            self._queue.clear()
            missed, self._missed = self._missed, 0
        if missed:
            frames.insert(0, DoorFrame("lagged", {"missed": missed}))
        return frames


class Broadcast:
    """The replay buffer and every open connection: `publish` numbers a frame, keeps it and
    hands it to each subscriber; `subscribe` replays from a Last-Event-ID and then goes live,
    with nothing lost or doubled between the two."""

    def __init__(self, replay: int = REPLAY_FRAMES) -> None:
        self._buffer: deque[DoorFrame] = deque(maxlen=replay)
        self._subscribers: list[Subscriber] = []
        self._next_id = 1
        self._lock = threading.Lock()
        self.closed = False
        self._closing: dict[str, Any] = {}  # the `capsule-closed` frame's data

    def publish(self, event: str, data: dict[str, Any]) -> DoorFrame:
        with self._lock:
            frame = DoorFrame(event, data, self._next_id)
            self._next_id += 1
            self._buffer.append(frame)
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            subscriber.put(frame)
        return frame

    def live(self, event: str, data: dict[str, Any]) -> None:
        """An unnumbered frame for the connections open now: not kept for a replay."""
        with self._lock:
            if self.closed:
                return
            subscribers = list(self._subscribers)
        frame = DoorFrame(event, data)
        for subscriber in subscribers:
            subscriber.put(frame)

    def close(self, data: dict[str, Any] | None = None) -> None:
        """The session's frames have ended: every connection gets `capsule-closed` (with
        `data`, `{}` unless given) and ends."""
        with self._lock:
            if not self.closed and data:
                self._closing = data
            self.closed = True
            subscribers, self._subscribers = list(self._subscribers), []
        for subscriber in subscribers:
            subscriber.put(DoorFrame("capsule-closed", self._closing))
            subscriber.close()

    def subscribe(self, subscriber: Subscriber, last_id: int | None) -> list[DoorFrame]:
        """Register `subscriber`; returns the replay from `last_id` (None: no replay)."""
        with self._lock:
            replay = self._replay(last_id) if last_id is not None else []
            if self.closed:
                replay.append(DoorFrame("capsule-closed", self._closing))
                subscriber.closed = True
            else:
                self._subscribers.append(subscriber)
        return replay

    def unsubscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

    def _replay(self, last_id: int) -> list[DoorFrame]:
        if not self._buffer:
            return []
        oldest = self._buffer[0].id or 0
        if last_id >= self._next_id or oldest > last_id + 1:
            return [DoorFrame("gap", {"first_available_id": oldest}), *self._buffer]
        return [frame for frame in self._buffer if (frame.id or 0) > last_id]

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)


def status(task_id: str, state: str, message: str, *, context_id: str | None = None,
           final: bool = False, response: str | None = None,
           before_restart: bool = False) -> dict[str, Any]:
    """A `status` frame's data, keys in Murmur's order (`before_restart` is murmur-tui's own,
    written only when true: a question asked again after a restart)."""
    data: dict[str, Any] = {"id": task_id}
    if context_id is not None:
        data["context_id"] = context_id
    body: dict[str, Any] = {"state": state, "message": message}
    if response is not None:
        body["response"] = response
    if before_restart:
        body["before_restart"] = True
    data["status"] = body
    data["final"] = final
    return data


FINAL_STATES = {"ok": "completed", "canceled": "canceled"}


def final_state(exit_status: str) -> str:
    """Murmur's word for how a task ended: completed, canceled, else failed."""
    return FINAL_STATES.get(exit_status, "failed")


def final_message(exit_status: str, result: str) -> str:
    """The final status's message, in Murmur's wording where it has one."""
    if exit_status == "ok":
        return "session ended"
    if exit_status == "canceled":
        return "task canceled"
    if exit_status == "no_answer":  # end-without-answer: failed, with the model's reason
        return result.removeprefix("no answer: ") or "no answer"
    reason = result.removeprefix("error: ")
    if reason.startswith("input-timeout"):
        return "input-timeout"
    return reason or "session ended"


class FrameSink:
    """An EventSink: each session event that has a frame becomes one on `broadcast` (a task
    sent through the door runs under the id the door answered with, so the ids are the
    session's own). A task's start writes no frame of its own (Murmur's first frame of a task
    is its first turn's `working`); each attempt of a task ends in exactly one final status,
    whoever ends it (`final`: the door, for a task it took out of the queue)."""

    def __init__(self, broadcast: Broadcast, on_event: Callable[[ev.Event], None] | None = None
                 ) -> None:
        self.broadcast = broadcast
        self.on_event = on_event
        self._contexts: dict[str, str] = {}
        self._shell_exit: dict[str | None, int] = {}
        self._ended: set[str] = set()  # tasks whose attempt has had its final status
        self._told = Told()  # murmur-tui's `tui` key (told.py)
        self._lock = threading.Lock()

    def emit(self, event: ev.Event) -> None:
        with self._lock:
            if self.on_event is not None:
                self.on_event(event)  # the task table first: a frame's reader may GetTask it
            told = self._told.keep(event)
            self._frame(event)
            if told is not None and self._told.waiting(told):  # no frame of its own: at once
                self.broadcast.live("tui", {"id": getattr(event, "task_id", None) or "",
                                            "tui": {"events": [told]}})

    def final(self, task_id: str, state: str, message: str, context_id: str | None,
              record: Callable[[], None] | None = None) -> bool:
        """The final status of a task the session will not end itself (canceled before it
        started), unless its attempt already had one; `record` (the task table's change)
        runs first, under the same lock as every event. Whether the frame was written."""
        with self._lock:
            if task_id in self._ended:
                return False
            if record is not None:
                record()
            self._ended.add(task_id)
            self.broadcast.publish("status", status(task_id, state, message,
                                                    context_id=context_id, final=True))
            return True

    def _publish(self, event: str, data: dict[str, Any]) -> None:
        self.broadcast.publish(event, self._told.onto(data))

    def _frame(self, event: ev.Event) -> None:
        publish = self._publish
        if isinstance(event, ev.TaskStarted):
            self._contexts[event.task_id] = event.context_id
        elif isinstance(event, ev.TurnStarted):
            publish("status", status((event.task_id or ""), "working",
                                     f"inference turn {event.turn + 1}",
                                     context_id=self._contexts.get(event.task_id)))
        elif isinstance(event, ev.TextDelta):
            if event.text:
                publish("text", {"id": (event.task_id or ""), "text": event.text,
                                 "final": False})
        elif isinstance(event, ev.ThinkingDelta):
            if event.text:
                publish("thinking", {"id": (event.task_id or ""), "text": event.text,
                                     "final": False})
        elif isinstance(event, ev.TurnCompleted):
            publish("text", {"id": (event.task_id or ""), "text": "", "final": True})
        elif isinstance(event, ev.ToolCallComposing):
            self._composing(event)
        elif isinstance(event, ev.ShellOutput):
            self._live(event)
        elif isinstance(event, ev.ShellExecuted):
            self._shell_exit[event.call_id] = event.exit_code
        elif isinstance(event, ev.ToolCallFinished):
            exit_code = self._shell_exit.pop(event.call_id, None) \
                if event.kind == "shell" else None
            fenced = event.kind in ("shell", "wasm")
            publish("artifact", {"id": (event.task_id or ""), "artifact": {
                "tool_name": event.tool_name, "content": event.output,
                "fence_source": f"tool:{event.tool_name}" if fenced else None,
                "tool_call_id": event.call_id or None, "is_error": event.status == "error",
                "duration_ms": event.duration_ms, "exit_code": exit_code,
                "truncated": event.truncated}})
        elif isinstance(event, ev.InputRequested):
            publish("status", status((event.task_id or ""), "input-required",
                                     event.prompt, before_restart=event.before_restart))
        elif isinstance(event, ev.InputAnswered) and not event.journaled:
            publish("status", status((event.task_id or ""), "working", "resumed"))
        elif isinstance(event, ev.Progress) and event.task_id:  # waiting on call-member
            publish("status", status(event.task_id, "working", event.text,
                                     context_id=self._contexts.get(event.task_id)))
        elif isinstance(event, ev.TaskContinued):  # Murmur's stream words for it
            publish("status", status(event.task_id, "working", f"continuing with "
                                     f"{len(event.member_calls)} member answer(s)",
                                     context_id=self._contexts.get(event.task_id)))
        elif isinstance(event, ev.TaskReopened):
            self._ended.discard(event.task_id)  # a new attempt: it ends in a status of its own
        elif isinstance(event, ev.TaskEnded):
            self._ended_frame(event)
        elif isinstance(event, ev.SessionEnded):
            self.broadcast.close(self._told.onto({}))

    def _composing(self, event: ev.ToolCallComposing) -> None:
        """The driver's own word that the model is writing a call (`murmur:stream/events`):
        its start is `tool-call-started`, each larger size `tool-call-progress`. A call the
        driver never announced (a driver that does not stream calls) has neither, as in
        Murmur, and no frame ever names a call by a null id."""
        if not event.call_id:
            return
        task_id = event.task_id or ""
        if event.input_bytes == 0:
            self._publish("tool-call-started", {
                "id": task_id, "tool_call_id": event.call_id, "tool_name": event.tool_name})
        else:
            self._publish("tool-call-progress", {
                "id": task_id, "tool_call_id": event.call_id,
                "input_bytes": event.input_bytes})

    def _live(self, event: ev.ShellOutput) -> None:
        """The lines a command writes while it runs, told at once to the connections
        watching now: a `tui` frame, unnumbered and not replayed (told.py). Murmur's frames
        stay as they were: its clients ignore a frame type they do not know."""
        self.broadcast.live("tui", {"id": event.task_id, "tui": {"events": [as_json(event)]}})

    def _ended_frame(self, event: ev.TaskEnded) -> None:
        task_id = event.task_id or ""
        if task_id in self._ended:  # the door already ended it (canceled before it started)
            return
        self._ended.add(task_id)
        state = final_state(event.exit_status)
        self._publish("status", status(
            task_id, state, final_message(event.exit_status, event.result),
            context_id=self._contexts.get(event.task_id), final=True,
            response=event.result if state == "completed" else None))
