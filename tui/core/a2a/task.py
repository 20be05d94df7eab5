"""A task as a door reports it, read the one way whatever the door's generation: a bare task on
doors A and B, `{"task": …}` on C; `input-required` and `TASK_STATE_INPUT_REQUIRED` alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui.core.errors import DoorError

TERMINAL = frozenset({"completed", "failed", "canceled", "rejected"})


@dataclass(frozen=True)
class RemoteTask:
    """A task as a door reports it, in Murmur's words for its state (`input-required`, …)."""

    id: str
    context_id: str
    state: str
    prompt: str | None = None  # the question it waits on (the `prompt` artifact)
    response: str | None = None  # a completed task's answer (the `response` artifact)
    message: str | None = None  # a terminal task's status message
    text: str | None = None  # what it was asked: its history's first user message
    no_answer: bool = False  # ended by end-without-answer (`metadata.murmur.noAnswer`)


def task_state(value: Any) -> str:
    """Murmur's word for a task state: `TASK_STATE_INPUT_REQUIRED` → `input-required`."""
    text = str(value or "")
    if text.startswith("TASK_STATE_"):
        text = text[len("TASK_STATE_"):].lower().replace("_", "-")
    return text


def parts_text(parts: Any) -> str | None:
    """The text parts of a message or an artifact, joined by newlines (None: no text part)."""
    if not isinstance(parts, list):
        return None
    texts = [part["text"] for part in parts if isinstance(part, Mapping)
             and isinstance(part.get("text"), str)]
    return "\n".join(texts) if texts else None


def artifact_text(task: Mapping[str, Any], name: str) -> str | None:
    """The text of the artifact named `name` (by `artifactId` on C, `name` on A/B)."""
    artifacts = task.get("artifacts")
    for item in artifacts if isinstance(artifacts, list) else []:
        if isinstance(item, Mapping) and name in (item.get("artifactId"), item.get("name")):
            return parts_text(item.get("parts")) or ""
    return None


def unwrap(value: Any) -> Any:
    """The task in an answer: `{"task": …}` (C) or the bare task (A/B)."""
    if isinstance(value, Mapping) and isinstance(value.get("task"), Mapping):
        return value["task"]
    return value


def parse_task(value: Any, url: str) -> RemoteTask:
    """A door's task as a RemoteTask; a DoorError naming `url` when it is not a task."""
    task = value.get("task", value) if isinstance(value, Mapping) else value
    if not isinstance(task, Mapping) or not isinstance(task.get("id"), str):
        raise DoorError(f"the door at {url} answered with something that is not a task")
    status = task.get("status")
    status = status if isinstance(status, Mapping) else {}
    message = status.get("message")
    if isinstance(message, Mapping):  # C: a ROLE_AGENT message with one text part
        message = parts_text(message.get("parts"))
    context = task.get("contextId")
    return RemoteTask(task["id"], context if isinstance(context, str) else "",
                      task_state(status.get("state")), artifact_text(task, "prompt"),
                      artifact_text(task, "response"),
                      message if isinstance(message, str) else None, first_user_text(task),
                      _no_answer(task))


def _no_answer(task: Mapping[str, Any]) -> bool:
    metadata = task.get("metadata")
    murmur = metadata.get("murmur") if isinstance(metadata, Mapping) else None
    return isinstance(murmur, Mapping) and murmur.get("noAnswer") is True


REJECTED = "task rejected: "  # how Murmur's status message opens (`capsule is busy`, …)


def rejection(task: RemoteTask) -> str | None:
    """Why the door rejected the task it just answered for (`capsule is busy`), or None when
    it took it. A rejected task never runs: whoever sent it must say so."""
    if task.state != "rejected":
        return None
    reason = (task.message or "").strip().removeprefix(REJECTED).strip()
    return reason or "the door gave no reason"


def taken_as(task: RemoteTask, busy: bool) -> str:
    """What the door's answer says of a task it took, in a few words: `queued` when it waits
    behind a running task (`submitted` while `busy`), `sent` when it is about to start (a
    door answers a new task `submitted` at once, before the session starts it), `sent,
    running` once the door says it works. A state the door did not name is said as such."""
    state = task.state
    if state == "submitted":
        return "queued" if busy else "sent"
    if state == "working":
        return "sent, running"
    if state == "input-required":
        return "sent, it asks a question"
    if state in TERMINAL:
        return f"sent, already {state}"
    return "sent (the door named no state)" if not state else f"sent ({state})"


def first_user_text(task: Mapping[str, Any]) -> str | None:
    """The text of a task's first user message (`history`, either generation's role)."""
    history = task.get("history")
    for message in history if isinstance(history, list) else []:
        if isinstance(message, Mapping) and message.get("role") in ("user", "ROLE_USER"):
            return parts_text(message.get("parts"))
    return None


@dataclass(frozen=True)
class Stopped:
    """What a `session/stop` answered: the tasks it canceled and what the session still runs.
    Read the one way from Murmur's answer `{session_id, canceled, residue}` and from the one
    earlier murmur-tui doors gave, `{stopped, canceled, notStarted, residue}` (its
    `notStarted` tasks were canceled too)."""

    session_id: str | None
    canceled: tuple[str, ...]
    residue: tuple[Any, ...]


def parse_stop(value: Any) -> Stopped:
    """A `session/stop` result as `Stopped`; what is not a list of ids is left out."""
    body = value if isinstance(value, Mapping) else {}
    ids: list[str] = []
    for key in ("canceled", "notStarted"):
        listed = body.get(key)
        ids += [item for item in listed if isinstance(item, str)] \
            if isinstance(listed, list) else []
    residue = body.get("residue")
    session = body.get("session_id")
    return Stopped(session if isinstance(session, str) else None, tuple(ids),
                   tuple(residue) if isinstance(residue, list) else ())
