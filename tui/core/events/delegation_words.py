"""What the headless log says in a delegated child when its parent is gone (docs/formations.md,
"Delegation"); a delegation's start and outcome are worded with a member's calls
(`tui.core.events.formation_wording`), the same on the screen and in the log."""

from __future__ import annotations

from tui.core.events import vocabulary as ev


def delegation_line(event: ev.Event) -> str | None:
    match event:
        case ev.SpawnerEnded() if event.canceled:
            return (f"the task that delegated this one (in {event.spawned_by}) was canceled: "
                    "winding down")
        case ev.SpawnerEnded():
            return (f"the session that delegated this one ({event.spawned_by}) ended: "
                    "winding down")
    return None
