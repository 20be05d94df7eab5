"""What a Murmur door's frames leave out, from the session's trace lines (`TraceFill.held`):
each function takes the line (None when the trace is not on this machine or has no such
line) and gives the event's fields — or the wording that says the door did not send them.

Never an empty `{}` input, a blank reason or a nameless hook: a value the door cannot tell is
said to be missing (`NOT_SENT_*`), and the screen words it (tui/core/events/wording.py).
"""

from __future__ import annotations

from typing import Any, get_args

from tui.core.events.kinds import FailureCause, TaskOrigin, TaskSource

ASKER = "a tool (not named by the door)"  # Murmur's input-required frame does not name it
NO_REASON = "no reason was sent by the door"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def at(line: dict[str, Any] | None) -> int | None:
    """The line's timestamp (Unix ms), the session's own time for its event."""
    stamp = _int(line.get("timestamp")) if line is not None else 0
    return stamp or None


def task_fields(line: dict[str, Any] | None) -> tuple[TaskSource, TaskOrigin]:
    """A task_start line's source and origin (a2a, user without one)."""
    source: TaskSource = "a2a"
    origin: TaskOrigin = "user"
    if line is not None:
        for value in get_args(TaskSource):
            if line.get("source") == value:
                source = value
        for value in get_args(TaskOrigin):
            if line.get("origin") == value:
                origin = value
    return source, origin


def call_input(line: dict[str, Any] | None) -> tuple[dict[str, Any], int, bool]:
    """A tool_call line's input, its size and whether it was known at all."""
    if line is None or not isinstance(line.get("input"), dict):
        return {}, 0, False
    return dict(line["input"]), _int(line.get("input_bytes")), True


def failure(line: dict[str, Any] | None, message: str) -> tuple[FailureCause, str]:
    """A failed task's cause and reason: the trace's task_failed line, else the final
    status's message, else words saying the door sent none."""
    if line is not None and _str(line.get("reason")):
        cause = _str(line.get("cause"))
        for value in get_args(FailureCause):
            if cause == value:
                return value, _str(line.get("reason"))
    kind: FailureCause = "driver_error" if message.startswith("driver") else "runtime_error"
    return kind, message or NO_REASON


def reopen(line: dict[str, Any] | None, number: int) -> tuple[str, str, int, int]:
    """A reopen's hook, reason, number and turns left (hook "" when the door did not say:
    the transcript then says so)."""
    if line is None:
        return "", "", number, 0
    return (_str(line.get("hook_name")), _str(line.get("reason")),
            _int(line.get("reopen_number")) or number, _int(line.get("turns_remaining")))
