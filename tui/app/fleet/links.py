"""The supervisor's tie to one session over its door: the client (answers, tasks, cancel,
stop), the stream watcher, and the adapter that turns frames into events
(`tui.core.events.vocabulary`) —
handed to `deliver` in the batch each frame makes, on the watcher's thread.

No Textual here: the fleet screen and the attached supervisor screen both use it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core.errors import MurmurTuiError
from tui.core.events import vocabulary as ev
from tui.core.text.secrets import redact

if TYPE_CHECKING:
    from tui.core.a2a.client import DoorClient
    from tui.core.a2a.task import RemoteTask
    from tui.core.remote.adapter import RemoteAdapter
    from tui.core.remote.watch import StreamFrame, Watcher, WatchState


@dataclass(frozen=True)
class LinkState:
    """connecting | live | reconnecting | closed | gone, and why (gone, reconnecting)."""

    state: str
    why: str = ""


ANSWERS = "answers.jsonl"
TEXT_FRAMES = frozenset({"text", "thinking"})  # what the fleet's rows never show
Deliver = Callable[[str, "list[ev.Event] | LinkState"], None]


class _Collect:
    """An EventSink that keeps what one frame made, for one hand-over."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)

    def take(self) -> list[ev.Event]:
        events, self.events = self.events, []
        return events


class Link:
    def __init__(self, home: Path, session_id: str, url: str, record: Any,
                 deliver: Deliver, token: str | None = None, text: bool = True,
                 heartbeat: float | None = None) -> None:
        """`text=False` (the fleet's rows): the model's streamed text and thinking are
        dropped as they arrive, before they cost a redaction and an event each. `heartbeat`:
        the door's heartbeat period (None: Murmur's, 15 s)."""
        self.home, self.session_id, self.url, self.record = home, session_id, url, record
        self.deliver = deliver
        self.token = token
        self.text = text
        self.heartbeat = heartbeat
        self.door: DoorClient | None = None
        self.watcher: Watcher | None = None
        self.adapter: RemoteAdapter | None = None
        self.card_name: str | None = None  # the name the door's card gives the session
        self._collect = _Collect()
        self._ready = threading.Event()
        self._closed = threading.Event()
        self._failure: str | None = None

    # -- watching -----------------------------------------------------------------------------
    def start(self) -> None:
        threading.Thread(target=self._open, name=f"link {self.url}", daemon=True).start()

    def _open(self) -> None:
        from tui.core.a2a.client import DoorClient
        from tui.core.events.stream import EventStream
        from tui.core.remote.adapter import RemoteAdapter
        from tui.core.remote.trace_fill import TraceFill
        from tui.core.remote.watch import HEARTBEAT_SECONDS, Watcher

        # the token is the caller's to give: it has checked that `url` is the session's own
        # socket (tui/core/running/records.py, Verdict.address); a record's token is never read here
        door = DoorClient(self.url, self.token)
        try:
            card = door.card()
        except MurmurTuiError as exc:
            self._failure = exc.text
            self._ready.set()
            self.deliver(self.session_id, LinkState("gone", exc.text))
            return
        self.session_id = self.session_id or card.session_id or self.url
        self.card_name = card.session_name
        workdir = str(getattr(self.record, "workdir", "") or "")
        stream = EventStream(self.session_id, sinks=[self._collect])
        adapter = RemoteAdapter(stream, card, workdir=workdir, model=_model(workdir),
                                fill=TraceFill.for_workdir(workdir, stream,
                                                           card.session_id or self.session_id),
                                started_ms=_started_ms(self.record))
        self.door, self.adapter = door, adapter
        adapter.started()
        self._hand_over()
        self.watcher = Watcher(door, self._frame, self._state,
                               heartbeat=self.heartbeat or HEARTBEAT_SECONDS,
                               session_id=card.session_id or None,
                               skip=frozenset() if self.text else TEXT_FRAMES)
        self._ready.set()
        if self._closed.is_set():
            return
        self.watcher.start()

    def _frame(self, frame: StreamFrame) -> None:
        assert self.adapter is not None
        self.adapter.frame(frame)
        self._hand_over()

    def _hand_over(self) -> None:
        events = self._collect.take()
        if events:
            self.deliver(self.session_id, [self._with_text(event) for event in events])

    def _with_text(self, event: ev.Event) -> ev.Event:
        """The stream does not say what a task was asked: its door does (GetTask's history)."""
        if not isinstance(event, ev.TaskStarted) or event.text or self.door is None:
            return event
        try:
            text = self.door.get_task(event.task_id).text
        except MurmurTuiError:
            return event
        return dataclasses.replace(event, text=redact(text)) if text else event

    @property
    def heard(self) -> float | None:
        """When its door was last heard, a new frame or a heartbeat (monotonic; None: no
        stream yet) — read by the fleet's redraw, never handed over per heartbeat."""
        watcher = self.watcher
        return watcher.heard if watcher is not None else None

    def _state(self, state: WatchState) -> None:
        self.deliver(self.session_id, LinkState(state.kind, state.reason))

    def close(self) -> None:
        self._closed.set()
        watcher = self.watcher
        if watcher is not None:
            watcher.close(wait=1.0)
        if self.door is not None:
            self.door.close()

    # -- acting -------------------------------------------------------------------------------
    def _door(self) -> DoorClient:
        self._ready.wait(10.0)
        if self.door is None:
            raise MurmurTuiError(self._failure or f"the door at {self.url} is not reachable")
        return self.door

    def answer(self, task_id: str | None, text: str) -> None:
        door = self._door()
        if task_id is None:
            raise MurmurTuiError("the question names no task to answer")
        context = self.adapter.context_of(task_id) if self.adapter is not None else None
        prompt = self.adapter.waiting.get(task_id, "") if self.adapter is not None else ""
        if self.adapter is not None:  # InputAnswered names it when the task resumes
            self.adapter.note_answer(task_id, text)
        door.answer(task_id, context, text)
        self._remember_answer(task_id, prompt, text)

    def _remember_answer(self, task_id: str, prompt: str, text: str) -> None:
        """`$MURMUR_HOME/tui/answers.jsonl` (0600): what this supervisor answered, where —
        never in a workdir it does not own (a `mur` session's is Murmur's)."""
        import hashlib
        import json
        import time

        from tui.core.fs.private_files import append_private

        line = {"session_id": self.session_id, "task_id": task_id,
                "prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
                "answer": redact(text), "at_ms": time.time_ns() // 1_000_000}
        with contextlib.suppress(OSError):  # the answer went; a full disk loses only its note
            append_private(self.home / "tui" / ANSWERS, json.dumps(line) + "\n")

    def send_task(self, text: str) -> RemoteTask:
        """The task as the door answered for it: taken (`submitted`, `working`) or
        `rejected` with its reason — a rejected task never runs (`rejection`)."""
        waiting = None
        if self.adapter is not None and self.adapter.waiting:
            waiting = next(iter(self.adapter.waiting))
        return self._door().send_task(text, waiting=waiting)

    def task(self, task_id: str) -> RemoteTask:
        """The task as its door says it is now (`GetTask`)."""
        return self._door().get_task(task_id)

    def cancel(self, task_id: str) -> None:
        self._door().cancel(task_id)

    def stop(self) -> None:
        self._door().stop()


def _model(workdir: str) -> str:
    """The model the session's trace names, when its workdir is on this machine (the card does
    not say)."""
    if not workdir:
        return ""
    from tui.core.trace.glance import trace_facts

    facts = trace_facts(Path(workdir) / "trace.jsonl")
    return facts.model or "" if facts is not None else ""


def _started_ms(record: Any) -> int | None:
    """When the session started, as its running record says (Unix ms); None unknown."""
    from datetime import datetime

    started = getattr(record, "started_at", None)
    if not isinstance(started, str):
        return None
    try:
        return int(datetime.fromisoformat(started).timestamp() * 1000)
    except ValueError:
        return None
