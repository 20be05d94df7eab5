"""The event vocabulary: what a session reports, to every sink alike (ARCHITECTURE §4).

Events are frozen dataclasses, built with their own constructors where they happen
(`ev.TurnStarted(task_id=..., turn=...)`), so mypy checks every field. The stamp — the
`session_id`, a per-session `seq` (from 1) and a timestamp in Unix milliseconds — is filled in
by the `EventStream` that delivers the event (`tui.core.events.stream`). `to_dict()` /
`event_from_dict()` give the JSON form used by `launch --headless --json`: the fields plus
`"event": <class name>`.

This module is the vocabulary's one name (`from tui.core.events import vocabulary as ev`); the
events live by what they tell of: `event` (the base), `task_events` (the session, its tasks
and turns, the person, hooks), `tool_events` (tool calls and shell commands). Their closed sets
are in `kinds`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from tui.core.events.event import Event, JsonObject
from tui.core.events.formation_events import (
    DelegationEnded,
    DelegationStarted,
    FormationEnded,
    MemberCallBusy,
    MemberCallEnded,
    MemberCallStarted,
    SpawnerEnded,
    TaskContinued,
)
from tui.core.events.task_events import (
    Compacted,
    CompactionDeclined,
    Delegated,
    HookFault,
    InferenceRetry,
    InputAnswered,
    InputRequested,
    Progress,
    SessionEnded,
    SessionStarted,
    TaskCanceled,
    TaskEnded,
    TaskFailed,
    TaskReopened,
    TaskStarted,
    TextDelta,
    ThinkingDelta,
    TurnCompleted,
    TurnStarted,
    Warning,  # noqa: A004 - the vocabulary's name for it
)
from tui.core.events.tool_events import (
    CallDenied,
    ShellAbandoned,
    ShellCompleted,
    ShellDetached,
    ShellExecuted,
    ShellLost,
    ShellOutput,
    ToolCallComposing,
    ToolCallFinished,
    ToolCallRestored,
    ToolCallStarted,
    ToolProgress,
)

__all__ = [
    "CallDenied", "Compacted", "CompactionDeclined", "Delegated", "DelegationEnded",
    "DelegationStarted", "Event", "FormationEnded", "HookFault", "InferenceRetry", "InputAnswered",
    "InputRequested", "JsonObject", "MemberCallBusy", "MemberCallEnded", "MemberCallStarted",
    "Progress", "SessionEnded", "SessionStarted", "ShellAbandoned", "ShellCompleted",
    "ShellDetached", "ShellExecuted", "ShellLost", "ShellOutput", "SpawnerEnded", "TaskCanceled",
    "TaskContinued",
    "TaskEnded", "TaskFailed", "TaskReopened", "TaskStarted", "TextDelta", "ThinkingDelta",
    "ToolCallComposing", "ToolCallFinished", "ToolCallRestored", "ToolCallStarted", "ToolProgress",
    "TurnCompleted", "TurnStarted", "Warning", "event_from_dict",
]


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """The inverse of `Event.to_dict()`; raises ValueError for an unknown event."""
    kind = data.get("event")
    cls = Event.registry.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event {kind!r}")
    names = {item.name for item in fields(cls)}
    return cls(**{key: value for key, value in data.items() if key in names})
