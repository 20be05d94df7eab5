"""What the session index (`$MURMUR_HOME/tui/sessions.jsonl`) says of each conversation: its
newest session (outcome, duration, capsule — and the one `r` resumes) and the tasks summed over
every session that wrote it. A conversation no murmur-tui session wrote (Murmur's `mur`, or a
record older than the index) has no entry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui.core.session_index import Entry, entries


@dataclass(frozen=True, slots=True)
class Sessions:
    latest: Entry  # the newest session that wrote the conversation
    tasks: int  # over every session
    count: int

    @property
    def outcome(self) -> str:
        """The newest session's exit status; `running` while it has not ended (or when it
        stopped without writing its end)."""
        status = self.latest.exit_status
        if isinstance(status, str) and status:
            return status
        return "running" if self.latest.ended_ms is None else ""

    @property
    def duration_ms(self) -> int | None:
        latest = self.latest
        if not isinstance(latest.ended_ms, int):  # not ended, or a line someone edited
            return None
        return max(0, latest.ended_ms - latest.started_ms)


def by_conversation(home: Path) -> dict[str, Sessions]:
    """`record/context` (a `Conversation.key`) -> its sessions."""
    found: dict[str, Sessions] = {}
    for entry in entries(home):  # newest first: the first seen is the latest
        if entry.record is None:
            continue
        key = f"{entry.record}/{entry.context_id}"
        tasks = entry.tasks if isinstance(entry.tasks, int) and entry.tasks > 0 else 0
        known = found.get(key)
        if known is None:
            found[key] = Sessions(entry, tasks, 1)
        else:
            found[key] = Sessions(known.latest, known.tasks + tasks, known.count + 1)
    return found


def human_duration(ms: int) -> str:
    """`2 min 5 s`, `3.4 s`, `1 h 12 min`, `2 d 3 h`."""
    if ms < 10_000:
        return f"{ms / 1000:.1f} s"
    seconds = ms // 1000
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"
