"""The session's own events, as murmur-tui's door tells them under a frame's `tui` key
(tui/core/door/told.py): rebuilt here as they were emitted, each stamped with the time the
session gave it, each once.

An event is known by its `seq` in the session: a reconnect's replay, or a call's start told
both live and again with the next numbered frame, shows nothing twice. A told event that is
not one murmur-tui knows (a newer door's), or is shaped wrongly, is skipped and counted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from tui.core.events import vocabulary as ev

if TYPE_CHECKING:
    from tui.core.events.stream import EventStream

SEEN_LIMIT = 4096  # events remembered by seq (the door replays at most 512 frames)
_TUPLES: dict[type[ev.Event], frozenset[str]] = {}
_NAMES: dict[type[ev.Event], frozenset[str]] = {}


def told(body: dict[str, Any] | None) -> list[Any] | None:
    """The events a frame's `tui` key tells; None for a frame without them (Murmur's)."""
    extra = body.get("tui") if body is not None else None
    events = extra.get("events") if isinstance(extra, dict) else None
    return events if isinstance(events, list) else None


def _tuple_fields(cls: type[ev.Event]) -> frozenset[str]:
    names = _TUPLES.get(cls)
    if names is None:
        names = _TUPLES[cls] = frozenset(item.name for item in fields(cls)
                                         if str(item.type).startswith("tuple"))
    return names


def rebuild(data: Any, output: str = "") -> ev.Event | None:
    """The event `data` is the JSON form of; `output`: a finished call's (its artifact's
    content: the door does not repeat it). None when it is not an event murmur-tui knows."""
    if not isinstance(data, dict):
        return None
    if data.get("event") == "ToolCallFinished" and "output" not in data:
        data = {**data, "output": output}
    cls = ev.Event.registry.get(str(data.get("event")))
    if cls is None:
        return None
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = frozenset(item.name for item in fields(cls))
    try:
        event = cls(**{key: value for key, value in data.items() if key in names})
        for name in _tuple_fields(cls):
            value = getattr(event, name)
            if isinstance(value, list):
                object.__setattr__(event, name, tuple(value))
    except (TypeError, ValueError):
        return None
    return event


class ToldEvents:
    """Emits what frames tell on `stream`, each event once."""

    def __init__(self, stream: EventStream, paths_here: bool = False) -> None:
        """`paths_here`: the session's files are on this machine (its start's paths are kept;
        else they name another machine's and are left out)."""
        self.stream = stream
        self.paths_here = paths_here
        self.seen: set[int] = set()
        self._order: deque[int] = deque()
        self.skipped = 0

    def tell(self, items: list[Any], output: str = "",
             before: Callable[[ev.Event], None] | None = None) -> list[ev.Event]:
        """The events emitted (new ones), in the order told; `before(event)` is called
        before each is emitted."""
        out: list[ev.Event] = []
        for item in items:
            event = rebuild(item, output)
            if event is None:
                self.skipped += 1
                continue
            if isinstance(event, ev.SessionStarted) and not self.paths_here:
                event = replace(event, workdir="", trace_path="", record_path=None)
            seq, at = event.seq, event.ts_ms
            if isinstance(seq, int) and seq > 0:
                if seq in self.seen:
                    continue
                self._remember(seq)
            if before is not None:
                before(event)
            out.append(self.stream.emit(event, at=at if isinstance(at, int) and at > 0
                                        else None))
        return out

    def _remember(self, seq: int) -> None:
        self.seen.add(seq)
        self._order.append(seq)
        if len(self._order) > SEEN_LIMIT:
            self.seen.discard(self._order.popleft())
