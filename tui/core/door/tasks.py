"""The door's task table, kept from the session's events: every task the session has held, its
context, its state in A2A v1.0 spelling, its result, and the question it waits on — what
`GetTask`, `SendMessage` and `CancelTask` answer (agent-card.md "Tasks and messages").

A task's text is kept as it was sent (the session runs it), but everything the door says about
a task — its text and history, status message, result and prompt artifacts — passes the one
redaction first: a key or a door token in a task comes back `[redacted]` to whoever may read
it (a `watcher` credential reaches `GetTask`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from tui.core.door.frames import final_message, final_state
from tui.core.events import vocabulary as ev
from tui.core.events.kinds import TaskOrigin
from tui.core.text.secrets import redact_value

STATES = {"submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING",
          "input-required": "TASK_STATE_INPUT_REQUIRED", "completed": "TASK_STATE_COMPLETED",
          "failed": "TASK_STATE_FAILED", "rejected": "TASK_STATE_REJECTED",
          "canceled": "TASK_STATE_CANCELED"}
TERMINAL = frozenset({"completed", "failed", "rejected", "canceled"})


@dataclass
class DoorTask:
    task_id: str  # the id the door answers with
    context_id: str
    state: str = "submitted"  # Murmur's word
    message: str | None = None  # the final status's message
    result: str | None = None
    prompt: str | None = None  # the question a waiting task asks
    request_id: str | None = None
    loop_id: str | None = None  # the session's own id for it, once it started
    text: str = ""
    held: bool = False  # the door ended it (CancelTask, session/stop): events change nothing
    origin: TaskOrigin = "user"  # `peer`: sent with x-murmur-task-origin: peer
    caller_member: str | None = None  # sent with this formation member's mft1. token
    no_answer: bool = False  # ended by end-without-answer: `metadata.murmur.noAnswer`

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    def wire(self) -> dict[str, Any]:
        """The A2A v1.0 `Task` (ProtoJSON), redacted: what the door answers with."""
        body: dict[str, Any] = redact_value(self._wire())
        return body

    def _wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.task_id, "contextId": self.context_id}
        status: dict[str, Any] = {"state": STATES[self.state]}
        if self.terminal and self.message:
            status["message"] = {
                "messageId": f"msg_{self.task_id}_status", "contextId": self.context_id,
                "taskId": self.task_id, "role": "ROLE_AGENT",
                "parts": [{"text": self.message, "mediaType": "text/plain"}]}
        body["status"] = status
        if self.no_answer:
            body["metadata"] = {"murmur": {"noAnswer": True}}
        artifacts = []
        if self.state == "completed" and self.result:
            artifacts.append(_artifact("response", self.result))
        if self.state == "input-required" and self.prompt is not None:
            artifacts.append(_artifact("prompt", self.prompt))
        if artifacts:
            body["artifacts"] = artifacts
        if self.text:  # what it was asked: a watcher's stream does not say
            body["history"] = [{
                "messageId": f"msg_{self.task_id}_task", "contextId": self.context_id,
                "taskId": self.task_id, "role": "ROLE_USER",
                "parts": [{"text": self.text, "mediaType": "text/plain"}]}]
        return body


def _artifact(name: str, text: str) -> dict[str, Any]:
    return {"artifactId": name, "name": name,
            "parts": [{"text": text, "mediaType": "text/plain"}]}


class TaskTable:
    """Tasks by id. A task sent through the door runs under the door's id, so the session's
    events name it as the door answered it; a task the door did not send (the launch's, the
    prompt's) is added when it starts."""

    def __init__(self) -> None:
        self._tasks: dict[str, DoorTask] = {}
        self._lock = threading.RLock()

    def lock(self) -> threading.RLock:
        return self._lock

    def add_sent(self, task: DoorTask) -> None:
        with self._lock:
            self._tasks[task.task_id] = task

    def get(self, task_id: str) -> DoorTask | None:
        with self._lock:
            return self._tasks.get(task_id)

    def waiting_for_input(self) -> list[DoorTask]:
        with self._lock:
            return [t for t in self._tasks.values() if t.state == "input-required"]

    def live(self) -> list[DoorTask]:
        with self._lock:
            return [t for t in self._tasks.values() if not t.terminal]

    def apply(self, event: ev.Event) -> None:
        """Follow one session event."""
        with self._lock:
            if isinstance(event, ev.TaskStarted):
                self._started(event)
                return
            task_id = getattr(event, "task_id", None)
            task = self._tasks.get(task_id) if isinstance(task_id, str) else None
            if task is None or task.held:
                return
            if isinstance(event, ev.InputRequested):
                task.state, task.prompt, task.request_id = \
                    "input-required", event.prompt, event.request_id
            elif isinstance(event, ev.InputAnswered):
                task.state, task.prompt, task.request_id = "working", None, None
            elif isinstance(event, ev.TurnStarted) and task.state == "submitted":
                task.state = "working"
            elif isinstance(event, ev.TaskReopened):
                task.state, task.message, task.result = "working", None, None
            elif isinstance(event, ev.TaskEnded):
                task.state = final_state(event.exit_status)
                task.message = final_message(event.exit_status, event.result)
                task.result = event.result if task.state == "completed" else None
                task.no_answer = event.exit_status == "no_answer"
                task.prompt = task.request_id = None

    def _started(self, event: ev.TaskStarted) -> None:
        task = self._tasks.get(event.task_id)
        if task is None:
            task = DoorTask(event.task_id, event.context_id, text=event.text)
            self._tasks[task.task_id] = task
        task.loop_id = event.task_id
        if not task.held:
            task.state = "working"

    def cancel(self, task: DoorTask, message: str) -> None:
        """`task` reads canceled from now on, whatever the session still says of it (Murmur
        records a cancel at once; the loop notices when it can)."""
        with self._lock:
            task.state, task.message, task.held = "canceled", message, True
            task.prompt = task.request_id = None
