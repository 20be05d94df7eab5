"""murmur-tui's own addition to its door's frames: the session's events themselves, so a
murmur-tui supervisor that attaches (tui/core/remote/adapter.py) shows what a local screen
shows — tool inputs and kinds, live shell lines, failure reasons, reopens, the asking tool's
name, and every event's own time.

A frame that tells something carries one optional key, `tui`: `{"events": [event, …]}`, each
event in its JSON form (`Event.to_dict()`, stamp included: its `seq` and `ts_ms` are the
session's). They are the events since the last frame that told any, in the session's order,
the frame's own event last (a text or thinking frame's delta is not repeated: it is the
frame's text, after the events listed). Murmur's clients ignore a key they do not know
(streaming-protocol.md "Unknown frames"); every key Murmur writes is written as before.

An event that has no frame of its own (a task's start, a call about to run, a command's
result, a hook's fault, a compaction, a delegation, background work ending) is told at once
as well, in an unnumbered frame of murmur-tui's own type `tui` (`{"id": <task>, "tui":
{"events": [event]}}`) sent only to the connections open then and never replayed — and again
with the next numbered frame, so a later watcher has it (a watcher that had it live knows it
by its `seq`). The lines a command writes while it runs (`ShellOutput`) are told live only:
a live tail, which the call's result then holds whole. A frame type a client
does not know is ignored (same section), so Murmur's numbered frames and their ids are
exactly what they were.
docs/fleet.md ("What attach shows") says what each event is used for.
"""

from __future__ import annotations

import json
from typing import Any

from tui.core.events import vocabulary as ev

# events a frame itself carries (the session's start is told: an attaching screen made its
# own from the card, and takes what the session's adds — where it went on from, its context)
UNTOLD: tuple[type[ev.Event], ...] = (ev.TextDelta, ev.ThinkingDelta, ev.ShellOutput)


def as_json(event: ev.Event) -> dict[str, Any]:
    """The event as a JSON object; a finished call's output is left out (the artifact frame
    that carries it has it as `content`)."""
    data: dict[str, Any] = json.loads(event.to_json())
    if isinstance(event, ev.ToolCallFinished):
        data.pop("output", None)
    return data


class Told:
    """The events waiting for the next frame that tells them."""

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []

    def keep(self, event: ev.Event) -> dict[str, Any] | None:
        """The event's JSON form, kept for the next frame (None: one not told)."""
        if isinstance(event, UNTOLD):
            return None
        data = as_json(event)
        self.pending.append(data)
        return data

    def waiting(self, data: dict[str, Any]) -> bool:
        """Whether `data` (from `keep`) is still waiting for a frame."""
        return bool(self.pending) and self.pending[-1] is data

    def onto(self, data: dict[str, Any]) -> dict[str, Any]:
        """`data` with the waiting events (if any) under `tui`; they are told from now on."""
        if self.pending:
            data["tui"] = {"events": self.pending}
            self.pending = []
        return data
