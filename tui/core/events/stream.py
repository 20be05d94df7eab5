"""Delivery of a session's events: the stamp, the one redaction, the sinks in order."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import fields
from typing import Protocol, TypeVar

from tui.core.events.vocabulary import Event
from tui.core.text.secrets import redact_value


class EventSink(Protocol):
    """Receives every event; `emit` must be safe to call from any thread."""

    def emit(self, event: Event) -> None: ...


E = TypeVar("E", bound=Event)

_STAMP = frozenset(("session_id", "seq", "ts_ms"))
_FIELDS: dict[type[Event], tuple[str, ...]] = {}


def _value_fields(cls: type[Event]) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in fields(cls)
                                     if f.name not in _STAMP and f.name not in cls.unredacted)
    return names


def _seal(event: Event, session_id: str, seq: int, ts_ms: int) -> None:
    """Stamp a just-built event and redact each value, before any sink sees it (the event is
    frozen from then on; nothing else holds it yet)."""
    put = object.__setattr__
    for name in _value_fields(type(event)):
        value = getattr(event, name)
        if isinstance(value, (str, tuple, list, dict)):
            clean = redact_value(value)
            if clean is not value:
                put(event, name, clean)
    put(event, "session_id", session_id)
    put(event, "seq", seq)
    put(event, "ts_ms", ts_ms)


class EventStream:
    """Stamps events for one session and hands them to each sink in order.

    Every value passes through the one redaction (`secrets.redact_value`) before any sink sees
    it. The `primary` sink (the trace writer) may raise: its error reaches the session, which ends
    (a failed trace write ends a session, spec §2). Any other sink that raises stops nothing:
    the error is kept in `sink_errors`. Stamping and delivery share one lock, so `seq` order is
    delivery order even when several threads emit.
    """

    def __init__(
        self, session_id: str, sinks: Iterable[EventSink] = (), primary: EventSink | None = None
    ) -> None:
        self.session_id = session_id
        self._primary = primary
        self._sinks = list(sinks)
        self._seq = 0
        self._lock = threading.RLock()
        self.sink_errors: list[BaseException] = []
        self.closed = False

    def close(self) -> None:
        """Deliver nothing more (the session's files were finished); waits for an event being
        delivered on another thread."""
        with self._lock:
            self.closed = True

    def exclusive(self) -> threading.RLock:
        """Hold it to emit several events no other thread's event comes between."""
        return self._lock

    def add(self, sink: EventSink) -> None:
        self._sinks.append(sink)

    def set_primary(self, sink: EventSink) -> None:
        with self._lock:
            self._primary = sink

    def emit(self, event: E, at: int | None = None) -> E:
        """Stamp `event` (built by its own constructor, stamp fields left empty) and deliver
        it; after `close()` it is returned unstamped and delivered to no one. `at`: the time
        it happened (Unix ms), when that was not now — an attached session's own stamp."""
        with self._lock:
            if self.closed:
                _seal(event, self.session_id, 0, 0)
                return event
            self._seq += 1
            _seal(event, self.session_id, self._seq,
                  time.time_ns() // 1_000_000 if at is None else at)
            failure: Exception | None = None
            if self._primary is not None:
                try:
                    self._primary.emit(event)
                except Exception as exc:  # raised below, once every sink has the event
                    failure = exc
            for sink in self._sinks:
                try:
                    sink.emit(event)
                except Exception as exc:  # a broken printer or bridge must not end the session
                    self.sink_errors.append(exc)
            if failure is not None:
                raise failure
        return event


def monotonic_at(ts_ms: int) -> float:
    """The `time.monotonic()` reading of the moment an event's stamp `ts_ms` names: a clock
    that counts from when the session says something began (an attached session's start,
    a call that was already running), not from when this screen heard of it. A stamp not set
    (0) or ahead of this machine's clock is now."""
    now = time.monotonic()
    if ts_ms <= 0:
        return now
    return now - max(0, time.time_ns() // 1_000_000 - ts_ms) / 1000
