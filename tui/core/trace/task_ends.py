"""Which tasks a session's trace shows started and which ended — what `murmur-tui cancel` reads
to find the running task, and `murmur-tui stop` to wait for the canceled ones to be recorded
(and to name those whose end the trace never got)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui.core.errors import MurmurTuiError
from tui.core.trace.reader import read_trace


@dataclass(frozen=True)
class TaskEnds:
    started: list[str] = field(default_factory=list)  # in the order they started
    ended: set[str] = field(default_factory=set)

    @property
    def running(self) -> list[str]:
        """The tasks started and not ended, the latest last."""
        return [task for task in self.started if task not in self.ended]


def task_ends(trace: Path) -> TaskEnds | None:
    """The tasks `trace` shows started and ended; None when it cannot be read (not there yet,
    not a trace): nothing is known then, rather than "nothing runs"."""
    try:
        lines = read_trace(trace)
    except (OSError, MurmurTuiError):
        return None
    started: list[str] = []
    ended: set[str] = set()
    for value in lines:
        task = value.get("task_id")
        if not isinstance(task, str):
            continue
        kind = value.get("event_type")
        if kind == "task_start" and task not in started:
            started.append(task)
        elif kind == "task_end":
            ended.add(task)
    return TaskEnds(started, ended)
