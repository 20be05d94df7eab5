"""What a session still runs that a cancel does not stop: its background shell commands (a
command demoted after `lifecycle.shell_grace_secs`), kept from the session's events. `CancelTask`
answers them as the task's `residue` artifact and `session/stop` as its `residue` list, one item
each, in Murmur's keys (agent-card.md "GetTask": `{"kind": "detached_shell", "work_id",
"binary", "command", "started_at_ms"}`, e.g. `"binary": "sleep", "command": "sleep 30"`: the
binary by its name, the command as the line that runs — an interpreter's (`bash`, `sh`, …) is
its script, any other binary's is its name and arguments). No other kind of item is listed:
`stop` and `cancel` find a session's delegations from its children's running records
(tui/core/formation/live_children.py). The command is as the event holds it: already
redacted."""

from __future__ import annotations

import os
import threading
from typing import Any

from tui.core.events import vocabulary as ev
from tui.core.manifest.model import INTERPRETERS


class Residue:
    def __init__(self) -> None:
        self._running: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def follow(self, event: ev.Event) -> None:
        """Follow one session event: a demotion adds an item, its end takes it away."""
        if isinstance(event, ev.ShellDetached):
            name = os.path.basename(event.binary) or event.binary  # the event's is resolved
            line = event.command if name in INTERPRETERS else f"{name} {event.command}".strip()
            with self._lock:
                self._running[event.work_id] = {
                    "kind": "detached_shell", "work_id": event.work_id, "binary": name,
                    "command": line, "started_at_ms": event.ts_ms}
        elif isinstance(event, (ev.ShellCompleted, ev.ShellAbandoned)):
            with self._lock:
                self._running.pop(event.work_id, None)

    def items(self) -> list[dict[str, Any]]:
        """What still runs, oldest first (each item a copy)."""
        with self._lock:
            return [dict(item) for item in self._running.values()]


def residue_artifact(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The `residue` artifact of a CancelTask answer: one data part per item."""
    return {"artifactId": "residue", "name": "residue",
            "parts": [{"data": item, "mediaType": "application/json"} for item in items]}
