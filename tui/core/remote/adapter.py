"""A remote session's stream frames as events (`tui.core.events.vocabulary`), so the supervisor
screen shows an attached session as it shows one of its own.

murmur-tui's door tells the session's own events under each frame's `tui` key: they are
emitted as they were (tui/core/remote/told.py), stamped with the session's times. Murmur's
door does not: its frames are translated here, and what they leave out comes from the
session's trace when it is on this machine (`TraceFill`: inputs, usage, shell commands,
failure reasons, reopens, durations, each stamped with its line's time), else it is said to be
missing (from_trace.py) — never shown as an empty input or a blank reason.

Every event goes out through an `EventStream`, which stamps it and redacts every value (a door
may echo a key back). Unknown frames are skipped and a malformed frame never raises: it is
counted in `skipped`.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from tui.core.events import vocabulary as ev
from tui.core.remote import from_trace
from tui.core.remote.calls import call_events
from tui.core.remote.told import ToldEvents, told
from tui.core.remote.told_mode import Task as _Task
from tui.core.remote.told_mode import ToldMode

if TYPE_CHECKING:
    from tui.core.a2a.client import Card
    from tui.core.events.kinds import ExitStatus
    from tui.core.events.stream import EventStream
    from tui.core.remote.trace_fill import TraceFill
    from tui.core.remote.watch import StreamFrame

_TURN = re.compile(r"inference turn (\d+)\Z")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


# frames that mean something else from each door (a murmur-tui door's text frame between told
# events, or a Murmur door's turn), held until a status, artifact or told frame says which
UNDECIDED = frozenset({"text", "thinking", "tool-call-started", "tool-call-progress"})
UNDECIDED_LIMIT = 1024


def _str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class RemoteAdapter(ToldMode):
    """Turns frames (`frame`) into events emitted on `stream`. Not thread-safe: feed it from
    the watcher's thread only."""

    def __init__(self, stream: EventStream, card: Card, *, workdir: str = "",
                 model: str = "", fill: TraceFill | None = None,
                 started_ms: int | None = None) -> None:
        """`started_ms`: when the session started (its running record says), for the
        clock — the trace's `session_start` line wins when it is here."""
        self.stream = stream
        self.card = card
        self.workdir = workdir
        self.model = model
        self.fill = fill  # the session's trace, on this machine (Murmur's door: see above)
        self.started_ms = started_ms
        self.tasks: dict[str, _Task] = {}
        self.waiting: dict[str, str] = {}  # task id → the question it waits on
        self.answers: dict[str, str] = {}  # task id → an answer this supervisor sent
        self.skipped = 0
        self.gaps: list[int] = []
        self.conversation_mode: str | None = None
        self._turns = self._tool_calls = self._shell_calls = 0
        self._started_at = time.monotonic()
        self.ended = False
        self.last_status: ExitStatus = "ok"
        self.told = ToldEvents(stream, paths_here=fill is not None)
        self.door_tells: bool | None = None  # the door tells its events (murmur-tui's)
        self.unplaced = 0  # text frames older than the first turn the replay holds whole
        self._undecided: list[StreamFrame] = []

    def started(self) -> ev.SessionStarted:
        card = self.card
        line = None
        if self.fill is not None:  # whose door it is is not known yet: nothing is told
            self.fill.fill(keep=True)
            self.fill.before_attach()
            line = self.fill.find("session_start")
        model, max_turns, tools = self.model, 0, tuple[str, ...]()
        resumed_from: str | None = None  # the door does not say; the trace's first line does
        if line is not None:
            went_on = line.get("resumed_from")
            resumed_from = went_on if isinstance(went_on, str) and went_on else None
            named = line.get("model")
            model = named if isinstance(named, str) else model
            max_turns = _int(line.get("max_turns")) or 0
            declared = line.get("tools_declared")
            tools = tuple(str(t) for t in declared) if isinstance(declared, list) else ()
        return self.stream.emit(ev.SessionStarted(
            capsule_name=card.name, capsule_version=card.version, model=model,
            workdir=self.workdir, trace_path="", context_id="", record_path=None,
            max_turns=max_turns, tools=tools, resumed_from=resumed_from),
            at=from_trace.at(line) or self.started_ms)

    def context_of(self, task_id: str) -> str | None:
        task = self.tasks.get(task_id)
        return task.context_id or None if task is not None else None

    def note_answer(self, task_id: str, answer: str) -> None:
        """An answer this supervisor sent: InputAnswered names it when the task resumes."""
        self.answers[task_id] = answer

    def frame(self, frame: StreamFrame) -> None:
        body = frame.body
        items = told(body)
        if items is not None:
            if self.door_tells is None:
                self._decided(True)
            self._told(frame, items)
            return
        if self.door_tells is None:
            if frame.event in UNDECIDED and len(self._undecided) < UNDECIDED_LIMIT:
                self._undecided.append(frame)  # whose door it is decides what it is
                return
            if frame.event not in ("connection-ack", "gap", "lagged"):
                self._decided(False)
        elif self.door_tells and frame.event in ("text", "thinking") and \
                frame.task_id is not None and body is not None:
            self._told_text(frame.task_id, frame.event, body)
            return
        if frame.event in ("artifact", "gap", "status", "capsule-closed") or (
                frame.event == "text" and body is not None and body.get("final") is True):
            self._read_trace()  # a Murmur door's (a text frame: only a turn's last)
        try:
            if frame.event == "connection-ack" and body is not None:
                mode = body.get("conversation_mode")
                self.conversation_mode = mode if isinstance(mode, str) else None
            elif frame.event == "capsule-closed":
                self._closed()
            elif frame.event == "gap" and body is not None:
                first = _int(body.get("first_available_id"))
                if first is not None:
                    self.gaps.append(first)
            elif body is None or frame.task_id is None:
                self.skipped += frame.event not in ("gap", "connection-ack", "lagged")
            elif frame.event == "status":
                self._status(frame.task_id, body)
            elif frame.event in ("text", "thinking"):
                self._text(frame.task_id, frame.event, body)
            elif frame.event == "tool-call-started":
                self._tool_started(frame.task_id, body)
            elif frame.event == "tool-call-progress":
                self._tool_progress(frame.task_id, body)
            elif frame.event == "artifact":
                self._artifact(frame.task_id, body)
            else:
                self.skipped += 1
        except (TypeError, ValueError, AttributeError, KeyError):  # a frame shaped wrongly
            self.skipped += 1

    # -- frames ---------------------------------------------------------------------------
    def _read_trace(self) -> None:
        """Before a frame: its trace lines are written before it."""
        if self.fill is not None and self.door_tells is False:
            self.fill.fill()

    def _decided(self, tells: bool) -> None:
        """The door is murmur-tui's (its frames tell events) or Murmur's: the frames held
        until it was known are taken now, in their order."""
        self.door_tells = tells
        if self.fill is not None:
            self.fill.release(emit=not tells)
        held, self._undecided = self._undecided, []
        for frame in held:
            self.frame(frame)

    def _task(self, task_id: str, body: dict[str, Any], text: str = "") -> _Task:
        task = self.tasks.get(task_id)
        context = _str(body, "context_id") or ""
        if task is None:
            line = self._held("task_start", task_id=task_id, keep=True)
            source, origin = from_trace.task_fields(line)
            started = self.stream.emit(
                ev.TaskStarted(task_id=task_id, context_id=context, text=text, source=source,
                               origin=origin), at=from_trace.at(line))
            task = self.tasks[task_id] = _Task(context, started.ts_ms)
        elif context and not task.context_id:
            task.context_id = context
        if task.ended and not self.door_tells:  # frames after a final status: a reopen
            task.ended = False
            task.attempts += 1
            line = self._held("task_reopened", task_id=task_id)
            hook, reason, number, left = from_trace.reopen(line, task.attempts)
            self.stream.emit(ev.TaskReopened(task_id=task_id, hook_name=hook, reason=reason,
                                             reopen_number=number, turns_remaining=left),
                             at=from_trace.at(line))
        return task

    def _held(self, kind: str, keep: bool = False, **match: object) -> dict[str, Any] | None:
        """The trace's line of `kind` for a frame (None without a trace, or with no such
        line); `keep`: it stays held for the next frame that asks."""
        if self.fill is None or self.door_tells:
            return None
        return self.fill.find(kind, **match) if keep else self.fill.take(kind, **match)

    def _status(self, task_id: str, body: dict[str, Any]) -> None:
        status = body.get("status")
        if not isinstance(status, dict):
            self.skipped += 1
            return
        state = status.get("state")
        message = _str(status, "message") or ""
        if state == "rejected":
            return
        if state == "failed" and message == "input-timeout" and task_id in self.tasks:
            self.waiting.pop(task_id, None)  # the asking tool fails; the task goes on
            self.stream.emit(ev.Warning(code="W-INPUT-TIMEOUT",
                                        text=f"task {task_id}: the question timed out"))
            return
        task = self._task(task_id, body)
        if state in ("submitted", "working"):
            turn = _TURN.match(message)
            if turn is not None:
                task.turn = int(turn.group(1)) - 1
                task.turns = max(task.turns, task.turn + 1)
                task.chunks = 0
                self._turns += 1
                self.stream.emit(ev.TurnStarted(task_id=task_id, turn=task.turn, max_turns=0,
                                                input_tokens=0))
            elif message == "resumed" and task_id in self.waiting:
                del self.waiting[task_id]
                self.stream.emit(ev.InputAnswered(task_id=task_id, request_id=task_id,
                                                  answer=self.answers.pop(task_id, "")))
        elif state == "input-required":
            self.waiting[task_id] = message
            self.stream.emit(ev.InputRequested(task_id=task_id, request_id=task_id,
                                               prompt=message, tool_name=from_trace.ASKER,
                                               before_restart=status.get("before_restart") is True))
        elif body.get("final") is True:
            self._ended(task_id, task, str(state), message, status.get("response"))

    def _ended(self, task_id: str, task: _Task, state: str, message: str,
               response: Any) -> None:
        task.ended = True
        self.waiting.pop(task_id, None)
        exit_status: ExitStatus = {"completed": "ok", "canceled": "canceled"}.get(
            state, "failed")  # type: ignore[assignment]
        if state == "failed":
            if message.startswith("max_turns exceeded"):
                exit_status = "max_turns_reached"
            else:
                line = self._held("task_failed", task_id=task_id)
                cause, reason = from_trace.failure(line, message)
                self.stream.emit(ev.TaskFailed(task_id=task_id, cause=cause, reason=reason,
                                               turn=task.turn), at=from_trace.at(line))
        self.last_status = exit_status
        end = self._held("task_end", task_id=task_id)
        stamp = from_trace.at(end)
        self.stream.emit(ev.TaskEnded(
            task_id=task_id, exit_status=exit_status,
            result=response if isinstance(response, str) else "",
            duration_ms=(_int(end.get("duration_ms")) or 0) if end is not None
            else max(0, _now_ms() - task.started),
            turns=task.turns, input_tokens=_int(end and end.get("input_tokens")) or 0,
            output_tokens=_int(end and end.get("output_tokens")) or 0,
            tool_calls=task.tool_calls, shell_calls=task.shell_calls,
            reopen_count=task.attempts), at=stamp)

    def _text(self, task_id: str, kind: str, body: dict[str, Any]) -> None:
        text = _str(body, "text")
        if text is None:
            self.skipped += 1
            return
        task = self._task(task_id, body)
        if body.get("final") is True:
            if text and not task.chunks:  # a non-streamed reply, whole
                self.stream.emit(ev.TextDelta(task_id=task_id, turn=task.turn, text=text))
            self._turn_ended(task_id, task)
            return
        if kind == "text":
            task.chunks += 1
        if not text:
            return
        if kind == "text":
            self.stream.emit(ev.TextDelta(task_id=task_id, turn=task.turn, text=text))
        else:
            self.stream.emit(ev.ThinkingDelta(task_id=task_id, turn=task.turn, text=text))

    def _turn_ended(self, task_id: str, task: _Task) -> None:
        """The end of a turn: its usage (and a failed model call's error) from the trace."""
        line = self._held("inference", task_id=task_id, turn=task.turn)
        if line is None:
            return
        from tui.core.remote.trace_fill import line_event

        event = line_event(line)
        if event is not None:
            self.stream.emit(event, at=from_trace.at(line))

    def _tool_started(self, task_id: str, body: dict[str, Any]) -> None:
        """Murmur's `tool-call-started`: the driver began writing a call (its input comes
        later, with the call's artifact)."""
        name = _str(body, "tool_name") or "unknown"
        call = _str(body, "tool_call_id")
        task = self._task(task_id, body)
        if call is None:
            self.skipped += 1
            return
        task.tools[call] = name
        self.stream.emit(ev.ToolCallComposing(task_id=task_id, turn=task.turn, call_id=call,
                                              tool_name=name, input_bytes=0))

    def _tool_progress(self, task_id: str, body: dict[str, Any]) -> None:
        call = _str(body, "tool_call_id")
        size = _int(body.get("input_bytes"))
        if call is None or size is None:
            self.skipped += 1
            return
        task = self._task(task_id, body)
        self.stream.emit(ev.ToolCallComposing(task_id=task_id, turn=task.turn, call_id=call,
                                              tool_name=task.tools.get(call, "unknown"),
                                              input_bytes=size))

    def _artifact(self, task_id: str, body: dict[str, Any]) -> None:
        artifact = body.get("artifact")
        if not isinstance(artifact, dict) or not isinstance(artifact.get("tool_name"), str):
            self.skipped += 1
            return
        task = self._task(task_id, body)
        for event, at in call_events(task_id, task.turn, artifact, self._held):
            if isinstance(event, ev.ToolCallFinished) and event.call_id is not None:
                task.tool_calls += 1
                self._tool_calls += 1
            elif isinstance(event, ev.ShellExecuted):
                task.shell_calls += 1
                self._shell_calls += 1
            self.stream.emit(event, at=at)

    def _closed(self) -> None:
        if self.ended:
            return
        self.ended = True
        if self.fill is not None and self.door_tells is False:
            self.fill.fill()
            self.fill.flush()  # what no frame claimed (a frame lost on the way) is told now
        live = [task for task in self.tasks.values() if not task.ended]
        # a session ends as its last task did (Murmur's)
        self.stream.emit(ev.SessionEnded(
            exit_status="canceled" if live else self.last_status,
            duration_ms=int((time.monotonic() - self._started_at) * 1000),
            total_turns=self._turns, total_input_tokens=0, total_output_tokens=0,
            total_tool_calls=self._tool_calls, total_shell_calls=self._shell_calls))
