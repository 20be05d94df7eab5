"""The part of the remote adapter (adapter.py) that takes murmur-tui's door's frames: the
session's own events, told under a frame's `tui` key (told.py), and the text frames between
them. What each told event changes in what the adapter knows of the session is noted here.

A screen that attaches after the door's replay window starts each task with its first event
the window still tells (a `TaskStarted` is made for it, its text asked of the door by
tui/app/fleet/links.py); a text frame of a task none of whose events was told yet is left
out (`unplaced`): its turn is not known, and the screen begins with the first turn the
window holds whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui.core.events import vocabulary as ev

if TYPE_CHECKING:
    from tui.core.events.kinds import ExitStatus
    from tui.core.events.stream import EventStream
    from tui.core.remote.told import ToldEvents
    from tui.core.remote.watch import StreamFrame


@dataclass
class Task:
    context_id: str
    started: int  # Unix ms: the session's own time when the trace tells it
    turn: int = 0
    turns: int = 0
    chunks: int = 0  # text chunks in the current turn
    tool_calls: int = 0
    shell_calls: int = 0
    ended: bool = False
    attempts: int = 0
    tools: dict[str, str] = field(default_factory=dict)  # call id → tool name



class ToldMode:
    """Mixed into RemoteAdapter: what it does with a frame that tells events."""

    stream: EventStream
    told: ToldEvents
    tasks: dict[str, Task]
    waiting: dict[str, str]
    door_tells: bool | None
    unplaced: int
    ended: bool
    last_status: ExitStatus
    _turns: int
    _tool_calls: int
    _shell_calls: int
    _text: Callable[[str, str, dict[str, Any]], None]  # RemoteAdapter's: a text frame
    _closed: Callable[[], None]  # RemoteAdapter's: the session ended

    def _told(self, frame: StreamFrame, items: list[Any]) -> None:
        """A frame of murmur-tui's door: the session's own events, then a text frame's text
        (what the door did not repeat)."""
        self.door_tells = True
        body = frame.body or {}
        artifact = body.get("artifact")
        output = artifact.get("content") if isinstance(artifact, dict) else None
        for event in self.told.tell(items, output if isinstance(output, str) else "",
                                    self._unseen_task):
            self._note(event)
        if frame.event in ("text", "thinking") and frame.task_id is not None:
            self._told_text(frame.task_id, frame.event, body)
        elif frame.event == "capsule-closed":
            self._closed()

    def _unseen_task(self, event: ev.Event) -> None:
        """A told event of a task whose start the door's replay no longer held (a screen that
        attached late): the task starts here, its text asked of the door (links.py)."""
        task_id = getattr(event, "task_id", None)
        if not task_id or task_id in self.tasks:
            return
        if isinstance(event, ev.TaskStarted):  # known from now on, for the events after it
            self.tasks[task_id] = Task(event.context_id, event.ts_ms)
            return
        started = self.stream.emit(ev.TaskStarted(task_id=task_id, context_id="", text="",
                                                  source="a2a"), at=event.ts_ms or None)
        self.tasks[task_id] = Task("", started.ts_ms)

    def _told_text(self, task_id: str, kind: str, body: dict[str, Any]) -> None:
        """A text frame of murmur-tui's door. One of a task none of whose events was told
        yet (its turn's start is older than the replay) is left out: its turn is not known,
        and the screen begins with the first turn the replay holds whole."""
        if task_id not in self.tasks:
            self.unplaced += 1
            return
        self._text(task_id, kind, body)

    def _note(self, event: ev.Event) -> None:
        """What a told event changes in what this adapter knows of the session."""
        task_id = getattr(event, "task_id", None) or ""
        task = self.tasks.get(task_id)
        match event:
            case ev.TaskStarted():
                self.tasks[task_id] = Task(event.context_id, event.ts_ms)
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

