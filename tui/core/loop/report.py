"""The one way the loop reports: events to the stream (which stamps, redacts and delivers
them), warnings, lines in the session's bootstrap log, and streamed text as deltas."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tui.core import events as ev
from tui.core.event_stream import EventStream
from tui.core.loop.state import Position
from tui.core.private import append_private
from tui.core.secrets import StreamRedactor, redact

E = TypeVar("E", bound=ev.Event)
_Where = Callable[[], tuple[str | None, int]]  # the task and turn streamed text belongs to


class Report:
    def __init__(self, stream: EventStream, bootstrap_log: Path,
                 position: Position | None = None) -> None:
        self.stream = stream
        self.bootstrap_log = bootstrap_log
        self.position = position or Position()

    def emit(self, event: E) -> E:
        return self.stream.emit(event)

    def warn(self, code: str, text: str) -> None:
        self.stream.emit(ev.Warning(code=code, text=text))

    def log(self, line: str) -> None:
        """One line in `logs/bootstrap.log`, stamped and redacted."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        append_private(self.bootstrap_log, redact(f"{stamp} {line}\n"))

    def warn_and_log(self, code: str, text: str) -> None:
        self.log(text)
        self.warn(code, text)

    def progress(self, text: str) -> None:
        self.stream.emit(ev.Progress(text=text))

    def deltas(self, task_id: str, turn: int) -> DeltaSink:
        """A driver's stream for one call."""
        return DeltaSink(self, lambda: (task_id, turn))

    def current_turn_stream(self) -> DeltaSink:
        """Text a tool streams (`murmur:text/chunks`) belongs to the turn that called it."""
        position = self.position
        return DeltaSink(self, lambda: (position.task_id, position.turn))


class DeltaSink:
    """Streamed text turned into TextDelta / ThinkingDelta events. A key split across two
    chunks is still redacted: the tail of a chunk that could begin one waits for the next
    chunk (or `flush`, when the call ends)."""

    def __init__(self, report: Report, where: _Where) -> None:
        self._report = report
        self._where = where
        self._text = StreamRedactor()
        self._thinking = StreamRedactor()

    def text(self, chunk: str) -> None:
        self._send(False, self._text.feed(chunk))

    def thinking(self, chunk: str) -> None:
        self._send(True, self._thinking.feed(chunk))

    def tool_call_composing(self, call_id: str, tool_name: str, input_bytes: int) -> None:
        """The driver says the model is writing a tool call (`murmur:stream/events`). The
        text before it is complete, so what the redactor still holds of it goes out first."""
        self.flush()
        task_id, turn = self._where()
        if task_id is not None:
            self._report.emit(ev.ToolCallComposing(task_id=task_id, turn=turn, call_id=call_id,
                                                   tool_name=tool_name,
                                                   input_bytes=input_bytes))

    def flush(self) -> None:
        self._send(True, self._thinking.flush())
        self._send(False, self._text.flush())

    def _send(self, thinking: bool, text: str) -> None:
        if not text:
            return
        task_id, turn = self._where()
        if task_id is None:  # outside a task: nothing to attach the text to
            return
        event = ev.ThinkingDelta(task_id=task_id, turn=turn, text=text) if thinking \
            else ev.TextDelta(task_id=task_id, turn=turn, text=text)
        self._report.emit(event)
