"""What the headless log says of `delegate-task` (docs/formations.md, "Delegation"): a child
started, a delegation's outcome, and — in a child — its parent gone."""

from __future__ import annotations

from tui.core.events import vocabulary as ev
from tui.core.events.words import duration


def delegation_line(event: ev.Event) -> str | None:
    match event:
        case ev.DelegationStarted():
            return (f"⇢ delegated to {event.capsule}@{event.version} · {event.delegation_id} · "
                    f"child {event.child_session_id}\n  workdir {event.child_workdir}")
        case ev.DelegationEnded():
            who = f"{event.capsule}@{event.version}" if event.version else event.capsule
            ident = f" {event.delegation_id}" if event.delegation_id else ""
            said = f"⇠ delegation{ident} to {who} {event.outcome}"
            if event.delegation_id is not None:
                said += f" · {duration(event.duration_ms)}"
            return f"{said}: {event.reason}" if event.reason else said
        case ev.SpawnerEnded():
            return (f"the session that delegated this one ({event.spawned_by}) ended: "
                    "winding down")
    return None
