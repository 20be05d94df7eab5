"""A remote session's stream frames as events (`tui.core.events.vocabulary`), so the supervisor
screen shows an attached session as it shows one of its own.

Every event goes out through an `EventStream`, which stamps it and redacts every value (a door
may echo a key back). What the stream does not carry is left at its empty value: a model the
card does not name is "", token counts are 0. Unknown frames are skipped and a malformed frame
never raises: it is counted in `skipped`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui.core.events import vocabulary as ev
from tui.core.events.kinds import ToolKind
from tui.core.remote.told import ToldEvents, told

if TYPE_CHECKING:
    from tui.core.a2a.client import Card
    from tui.core.events.kinds import ExitStatus, FailureCause
    from tui.core.events.stream import EventStream
    from tui.core.remote.trace_fill import TraceFill
    from tui.core.remote.watch import StreamFrame

_TURN = re.compile(r"inference turn (\d+)\Z")
_COMMAND = re.compile(r"^\$ (.*)$", re.MULTILINE)


@dataclass
class _Task:
    context_id: str
    started: float
    turn: int = 0
    turns: int = 0
    chunks: int = 0  # text chunks in the current turn
    tool_calls: int = 0
    shell_calls: int = 0
    ended: bool = False
    attempts: int = 0
    tools: dict[str, str] = field(default_factory=dict)  # call id → tool name


def _str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class RemoteAdapter:
    """Turns frames (`frame`) into events emitted on `stream`. Not thread-safe: feed it from
    the watcher's thread only."""

    def __init__(self, stream: EventStream, card: Card, *, workdir: str = "",
                 model: str = "", fill: TraceFill | None = None) -> None:
        self.stream = stream
        self.card = card
        self.workdir = workdir
        self.model = model
        self.fill = fill  # the session's trace, on this machine: shell lines come from it
        self.shell_from_trace = fill is not None
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
        self.told = ToldEvents(stream)
        self.door_tells: bool | None = None  # the door tells its events (murmur-tui's)

    def started(self) -> ev.SessionStarted:
        card = self.card
        return self.stream.emit(ev.SessionStarted(
            capsule_name=card.name, capsule_version=card.version, model=self.model,
            workdir=self.workdir, trace_path="", context_id="", record_path=None,
            max_turns=0, tools=()))

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
            self._told(frame, items)
            return
        if frame.event in ("status", "artifact") and self.door_tells is None:
            self.door_tells = False
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
        if self.fill is not None and self.door_tells is False and frame.event in (
                "artifact", "gap", "status", "capsule-closed"):
            self.fill.fill()

    def _told(self, frame: StreamFrame, items: list[Any]) -> None:
        """A frame of murmur-tui's door: the session's own events, then a text frame's text
        (what the door did not repeat)."""
        self.door_tells = True
        body = frame.body or {}
        artifact = body.get("artifact")
        output = artifact.get("content") if isinstance(artifact, dict) else None
        for event in self.told.tell(items, output if isinstance(output, str) else ""):
            self._note(event)
        if frame.event in ("text", "thinking") and frame.task_id is not None:
            self._text(frame.task_id, frame.event, body)
        elif frame.event == "capsule-closed":
            self._closed()

    def _note(self, event: ev.Event) -> None:
        """What a told event changes in what this adapter knows of the session."""
        task_id = getattr(event, "task_id", None) or ""
        task = self.tasks.get(task_id)
        match event:
            case ev.TaskStarted():
                self.tasks[task_id] = _Task(event.context_id, time.monotonic())
            case ev.TurnStarted() if task is not None:
                task.turn, task.chunks = event.turn, 0
                task.turns = max(task.turns, event.turn + 1)
                self._turns += 1
            case ev.ToolCallFinished():
                self._tool_calls += 1
            case ev.ShellExecuted():
                self._shell_calls += 1
            case ev.InputRequested():
                self.waiting[task_id] = event.prompt
            case ev.InputAnswered():
                self.waiting.pop(task_id, None)
            case ev.TaskReopened() if task is not None:
                task.ended = False
            case ev.TaskEnded():
                self.waiting.pop(task_id, None)
                self.last_status = event.exit_status
                if task is not None:
                    task.ended = True
            case ev.SessionEnded():
                self.ended = True

    # -- frames ---------------------------------------------------------------------------
    def _task(self, task_id: str, body: dict[str, Any], text: str = "") -> _Task:
        task = self.tasks.get(task_id)
        context = _str(body, "context_id") or ""
        if task is None:
            task = self.tasks[task_id] = _Task(context, time.monotonic())
            self.stream.emit(ev.TaskStarted(task_id=task_id, context_id=context, text=text,
                                            source="a2a"))
        elif context and not task.context_id:
            task.context_id = context
        if task.ended and not self.door_tells:  # frames after a final status: a reopen
            task.ended = False
            task.attempts += 1
            self.stream.emit(ev.TaskReopened(task_id=task_id, hook_name="", reason="",
                                             reopen_number=task.attempts, turns_remaining=0))
        return task

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
                                               prompt=message, tool_name="request-input",
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
                cause: FailureCause = ("driver_error" if message.startswith("driver")
                                       else "runtime_error")
                self.stream.emit(ev.TaskFailed(task_id=task_id, cause=cause, reason=message,
                                               turn=task.turn))
        self.last_status = exit_status
        self.stream.emit(ev.TaskEnded(
            task_id=task_id, exit_status=exit_status,
            result=response if isinstance(response, str) else "",
            duration_ms=int((time.monotonic() - task.started) * 1000), turns=task.turns,
            input_tokens=0, output_tokens=0, tool_calls=task.tool_calls,
            shell_calls=task.shell_calls, reopen_count=task.attempts))

    def _text(self, task_id: str, kind: str, body: dict[str, Any]) -> None:
        text = _str(body, "text")
        if text is None:
            self.skipped += 1
            return
        task = self._task(task_id, body)
        if body.get("final") is True:
            if not text or task.chunks:  # the end of a turn's chunks, or a reply already shown
                return
        elif kind == "text":
            task.chunks += 1
        if not text:
            return
        if kind == "text":
            self.stream.emit(ev.TextDelta(task_id=task_id, turn=task.turn, text=text))
        else:
            self.stream.emit(ev.ThinkingDelta(task_id=task_id, turn=task.turn, text=text))

    def _tool_started(self, task_id: str, body: dict[str, Any]) -> None:
        name = _str(body, "tool_name") or "unknown"
        call = _str(body, "tool_call_id")
        task = self._task(task_id, body)
        if call is not None:
            task.tools[call] = name
        self.stream.emit(ev.ToolCallStarted(task_id=task_id, turn=task.turn, call_id=call,
                                            tool_name=name, kind="unknown", input={}))

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
        name = artifact["tool_name"]
        content = _str(artifact, "content") or ""
        call = _str(artifact, "tool_call_id")
        exit_code = _int(artifact.get("exit_code"))
        duration = _int(artifact.get("duration_ms")) or 0
        truncated = artifact.get("truncated") is True
        kind: ToolKind = "shell" if exit_code is not None else "unknown"
        if call is not None:
            task.tool_calls += 1
            self._tool_calls += 1
        self.stream.emit(ev.ToolCallFinished(
            task_id=task_id, turn=task.turn, call_id=call, tool_name=name, kind=kind,
            status="error" if artifact.get("is_error") is True else "ok", duration_ms=duration,
            input={}, input_bytes=0, output=content, output_bytes=len(content.encode()),
            truncated=truncated))
        if exit_code is None:
            return
        task.shell_calls += 1
        self._shell_calls += 1
        if self.shell_from_trace:
            return
        command = _COMMAND.search(content)
        stdout, stderr = _sections(content)
        self.stream.emit(ev.ShellExecuted(
            task_id=task_id, turn=task.turn, call_id=call, binary=name,
            command=command.group(1) if command else "", exit_code=exit_code, stdout=stdout,
            stderr=stderr, stdout_bytes=len(stdout.encode()), stderr_bytes=len(stderr.encode()),
            duration_ms=duration, truncated=truncated))

    def _closed(self) -> None:
        if self.ended:
            return
        self.ended = True
        live = [task for task in self.tasks.values() if not task.ended]
        # a session ends as its last task did (Murmur's)
        self.stream.emit(ev.SessionEnded(
            exit_status="canceled" if live else self.last_status,
            duration_ms=int((time.monotonic() - self._started_at) * 1000),
            total_turns=self._turns, total_input_tokens=0, total_output_tokens=0,
            total_tool_calls=self._tool_calls, total_shell_calls=self._shell_calls))


def _sections(content: str) -> tuple[str, str]:
    """A shell result's stdout and stderr, as Murmur writes them inside the fence
    (`Stdout:\\n…\\n\\nStderr:\\n…`); the whole content as stdout when it is shaped otherwise."""
    out_at, err_at = content.find("Stdout:\n"), content.find("\nStderr:\n")
    if out_at < 0 or err_at < out_at:
        return content, ""
    stdout = content[out_at + len("Stdout:\n"):err_at].removesuffix("\n")
    stderr = content[err_at + len("\nStderr:\n"):]
    stderr = stderr.removesuffix("</untrusted-content>").removesuffix("\n").removesuffix("\n")
    return stdout, stderr
