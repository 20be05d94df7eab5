"""The one way the loop reports: events to the stream (which stamps, redacts and delivers
them), warnings, lines in the session's bootstrap log, and streamed text as deltas."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.fs.private_files import append_private
from tui.core.loop.state import Position
from tui.core.text.secrets import StreamRedactor, redact
from tui.core.tools.table import OutputStream

if TYPE_CHECKING:
    from tui.core.inference.retry import RetryNotice

LIVE_INTERVAL = 0.1  # seconds: one call's live output and progress go out at most this often
LIVE_LINES = 200  # of one stream, the newest lines one ShellOutput carries
LIVE_CHARS = 16 * 1024  # … and at most this much of their text
PROGRESS_BYTES = 4096  # one ToolProgress message (Spice's MaximumProgressBytes)

E = TypeVar("E", bound=ev.Event)
_Where = Callable[[], tuple[str | None, int]]  # the task and turn streamed text belongs to


class Report:
    def __init__(self, stream: EventStream, bootstrap_log: Path,
                 position: Position | None = None) -> None:
        self.stream = stream
        self.bootstrap_log = bootstrap_log
        self.position = position or Position()
        self._log_failed = False

    def emit(self, event: E) -> E:
        return self.stream.emit(event)

    def warn(self, code: str, text: str) -> None:
        self.stream.emit(ev.Warning(code=code, text=text))

    def log(self, line: str) -> None:
        """One line in `logs/bootstrap.log`, stamped and redacted. A log that cannot be
        written (a full disk; a link or FIFO put at its name) is said once, as a warning, and
        never stops the session."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        try:
            append_private(self.bootstrap_log, redact(f"{stamp} {line}\n"))
        except OSError as exc:
            if not self._log_failed:
                self._log_failed = True
                self.warn("W-LOG", f"{self.bootstrap_log} cannot be written: "
                                   f"{exc.strerror or exc}; the session goes on without it")

    def warn_and_log(self, code: str, text: str) -> None:
        self.log(text)
        self.warn(code, text)

    def progress(self, text: str) -> None:
        self.stream.emit(ev.Progress(text=text))

    def retrying(self, notice: RetryNotice) -> None:
        """A model call will be tried again (the built-in HTTP drivers, a driver component)."""
        position = self.position
        self.emit(ev.InferenceRetry(
            task_id=position.task_id, turn=position.turn, attempt=notice.attempt,
            max_attempts=notice.max_attempts, status=notice.status, reason=notice.reason,
            delay_ms=int(notice.delay_s * 1000)))

    def deltas(self, task_id: str, turn: int) -> DeltaSink:
        """A driver's stream for one call."""
        return DeltaSink(self, lambda: (task_id, turn))

    def call_feed(self, task_id: str, turn: int, call_id: str) -> CallFeed:
        """What one tool call shows while it runs; `close` it when the call returns."""
        return CallFeed(self, task_id, turn, call_id)

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


class _Pending:
    def __init__(self) -> None:
        self.lines: deque[str] = deque()
        self.chars = 0
        self.skipped = 0

    def add(self, lines: list[str]) -> None:
        for line in lines:
            self.lines.append(line)
            self.chars += len(line) + 1
        while len(self.lines) > 1 and (len(self.lines) > LIVE_LINES or self.chars > LIVE_CHARS):
            self.chars -= len(self.lines.popleft()) + 1
            self.skipped += 1


class CallFeed:
    """One running call's output lines and progress, turned into ShellOutput / ToolProgress
    events at a bounded rate: what arrives within `LIVE_INTERVAL` of the last batch waits for
    the next one (a timer sends it if nothing else arrives), so however fast a command writes,
    a call makes at most one event per stream every `LIVE_INTERVAL`. A batch keeps the newest
    `LIVE_LINES` lines of each stream (`skipped_lines` counts the rest; the whole output is in
    the result and the log). Progress text is a stream, as `emit-chunk` is: what arrived in
    one interval goes out as one ToolProgress, its newest `PROGRESS_BYTES` when it is longer.
    After `close` (the call returned) nothing more is sent."""

    def __init__(self, report: Report, task_id: str, turn: int, call_id: str,
                 interval: float = LIVE_INTERVAL) -> None:
        self._report = report
        self._where = (task_id, turn, call_id)
        self._interval = interval
        self._lock = threading.Lock()
        self._streams: dict[OutputStream, _Pending] = {}
        self._progress: str | None = None
        self._redactor = StreamRedactor()
        self._last = float("-inf")
        self._timer: threading.Timer | None = None
        self._closed = False

    def output(self, stream: OutputStream, lines: list[str]) -> None:
        if not lines:
            return
        with self._lock:
            if self._closed:
                return
            self._streams.setdefault(stream, _Pending()).add(lines)
            self._due()

    def progress(self, text: str) -> None:
        with self._lock:
            if self._closed:
                return
            safe = self._redactor.feed(text)  # a key split across two chunks is still caught
            if safe:
                self._progress = _newest((self._progress or "") + safe, PROGRESS_BYTES)
                self._due()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            tail = self._redactor.flush()
            if tail:
                self._progress = _newest((self._progress or "") + tail, PROGRESS_BYTES)
            self._send()

    def _due(self) -> None:
        """Send now if the last batch is old enough, else make sure a timer will."""
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            self._send()
        elif self._timer is None:
            self._timer = threading.Timer(wait, self._on_timer)
            self._timer.daemon = True
            self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._send()

    def _send(self) -> None:
        task_id, turn, call_id = self._where
        streams, self._streams = self._streams, {}
        progress, self._progress = self._progress, None
        if not streams and progress is None:
            return
        self._last = time.monotonic()
        for stream, pending in streams.items():
            self._report.emit(ev.ShellOutput(
                task_id=task_id, turn=turn, call_id=call_id, stream=stream,
                text="\n".join(pending.lines), skipped_lines=pending.skipped))
        if progress is not None:
            self._report.emit(ev.ToolProgress(task_id=task_id, turn=turn, call_id=call_id,
                                              text=progress))


def _newest(text: str, limit: int) -> str:
    """The last `limit` UTF-8 bytes of `text`, cut on a character boundary; "…" marks a cut."""
    data = text.encode()
    if len(data) <= limit:
        return text
    return "…" + data[len(data) - limit + 3:].decode("utf-8", errors="ignore")
