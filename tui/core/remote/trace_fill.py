"""What an attached session's stream lacks, read from its `trace.jsonl` when the session's
workdir is on this machine and its door is Murmur's (murmur-tui's door tells its own events:
tui/core/remote/told.py). Hook faults (`hook_dispatch_error`), compactions (`compaction`) and
delegations (`a2a_send`) have no frame: they are emitted as they are read. The rest is kept
for the frame it belongs to (`held`): a turn's usage and its model call's error (`inference`)
for the frame that ends the turn, a shell command (`shell`) and a call's input
(`tool_call`) for the call's artifact, a failure's reason (`task_failed`), a reopen's hook
and reason (`task_reopened`) and a task's own duration (`task_end`) for its statuses, the
session's start (`session_start`) for the attaching screen's clock. What no frame claimed is
emitted when the stream closes.

Only the attached session's lines are read: a resumed session's workdir can hold the trace
of the session it resumed, whose turns are not this one's.

The file is read from where the last read stopped; each line is taken once (its `event_id`
is remembered), so reading again after a gap or a reconnect adds nothing twice. A line that
is not JSON, or a last line still being written, is left for the next read.

The session's own shell can write its workdir, so the trace is opened as tui/core/fs/safe_read.py
opens every session file: a link, a FIFO or a device at its name is not read (and never
waited on), at most MAX_READ_BYTES are read at a time, and a line is parsed without recursion
(a line nested 100,000 deep is one bad line).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from tui.core.errors import FileRefused, NotJson
from tui.core.events import vocabulary as ev
from tui.core.events.kinds import TurnDecision
from tui.core.fs.safe_read import open_regular
from tui.core.text.strict_json import loads_line

if TYPE_CHECKING:
    from tui.core.events.stream import EventStream

MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_READ_BYTES = 64 * 1024 * 1024  # at most this much of the trace per read


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _decision(value: Any) -> TurnDecision:
    for decision in get_args(TurnDecision):
        if value == decision:
            return decision  # type: ignore[no-any-return]
    return "end_turn"


def line_event(line: dict[str, Any]) -> ev.Event | None:
    """The event a trace line gives the screen, or None for a line the stream carries."""
    kind = line.get("event_type")
    task = _str(line.get("task_id"))
    if kind == "shell":
        return ev.ShellExecuted(
            task_id=task, turn=_int(line.get("turn")), call_id=None,
            binary=_str(line.get("binary")), command=_str(line.get("command")),
            exit_code=_int(line.get("exit_code")), stdout="", stderr="",
            stdout_bytes=_int(line.get("stdout_bytes")),
            stderr_bytes=_int(line.get("stderr_bytes")),
            duration_ms=_int(line.get("duration_ms")), truncated=False)
    if kind == "hook_dispatch_error":
        return ev.HookFault(hook=_str(line.get("hook_name")), handler=_str(line.get("event")),
                            arm=_str(line.get("arm")) or None,
                            error=_str(line.get("error")) or None, task_id=task or None)
    if kind == "inference":  # the stream carries no usage: the trace has every turn's
        output = line.get("output_tokens")
        return ev.TurnCompleted(
            task_id=task, turn=_int(line.get("turn")),
            input_tokens=_int(line.get("input_tokens")),
            output_tokens=_int(output) if output is not None else None,
            decision=_decision(line.get("decision")), stop_reason=_str(line.get("stop_reason")),
            tool_name=_str(line.get("tool_name")) or None, model=_str(line.get("model")),
            error=_str(line.get("error")) or None, error_code=_str(line.get("error_code")) or None)
    if kind == "a2a_send":  # the line's ids are the peer's task and context
        return ev.Delegated(task_id="", peer_url=_str(line.get("peer_url")),
                            message_id=_str(line.get("message_id")), peer_task_id=task,
                            peer_context_id=_str(line.get("context_id")), state="sent")
    if kind == "compaction":
        return ev.Compacted(task_id=task, turn=_int(line.get("turn")),
                            tokens_before=_int(line.get("tokens_before")),
                            tokens_after=_int(line.get("tokens_after")))
    return None


HELD_LIMIT = 20_000  # lines kept for a frame; the oldest go first
HELD = frozenset({"inference", "shell", "tool_call", "task_failed", "task_reopened",
                  "task_end", "task_start", "session_start"})


class TraceFill:
    """Reads `trace` on each `fill()`: emits what has no frame on `stream`, holds the rest."""

    def __init__(self, trace: Path, stream: EventStream, session_id: str = "") -> None:
        self.trace = trace
        self.stream = stream
        self.session_id = session_id  # "": every line
        self.offset = 0
        self.seen: set[str] = set()
        self.held: list[dict[str, Any]] = []  # lines kept for their frame, in the trace's order
        self._past = 0  # the first held lines, from before the attach (never flushed)
        self.kept: list[tuple[ev.Event, int | None]] = []  # fill(keep=True)'s events
        self.bad_lines = 0
        self.problem: str | None = None  # why the trace was last not read

    @classmethod
    def for_workdir(cls, workdir: str, stream: EventStream,
                    session_id: str = "") -> TraceFill | None:
        """A fill for a workdir on this machine that holds a trace; None otherwise."""
        if not workdir:
            return None
        trace = Path(workdir) / "trace.jsonl"
        try:
            os.close(open_regular(trace))
        except FileRefused:
            return None
        return cls(trace, stream, session_id)

    def take(self, kind: str, **match: object) -> dict[str, Any] | None:
        """The first held line of `kind` whose fields equal `match`, no longer held."""
        for at, line in enumerate(self.held):
            if line.get("event_type") == kind and all(line.get(key) == value
                                                      for key, value in match.items()):
                self._past -= at < self._past
                return self.held.pop(at)
        return None

    def find(self, kind: str, **match: object) -> dict[str, Any] | None:
        """Like `take`, the line staying held (a session's start is asked for more than once)."""
        for line in self.held:
            if line.get("event_type") == kind and all(line.get(key) == value
                                                      for key, value in match.items()):
                return line
        return None

    def before_attach(self) -> None:
        """The lines read so far were written before the screen attached: a replayed frame
        may still claim one, but what none claims is not told at the end (it happened
        before the screen's first frame, and would come out of its place)."""
        self._past = len(self.held)

    def flush(self) -> int:
        """Emit, in the trace's order, every held line no frame claimed (but those from
        before the attach); how many."""
        lines, self.held = self.held[self._past:], []
        self._past = 0
        emitted = 0
        for line in lines:
            event = line_event(line)
            if event is not None:
                self.stream.emit(event, at=_int(line.get("timestamp")) or None)
                emitted += 1
        return emitted

    def fill(self, keep: bool = False) -> int:
        """Emit the new lines' events; how many were emitted. `keep`: hold them in `kept`
        instead (whether the door tells them itself is not known yet: `release`)."""
        try:
            data = self._read()
        except FileRefused as exc:
            self.problem = str(exc)
            return 0
        self.problem = None
        emitted = 0
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                if len(data) - start > MAX_LINE_BYTES:  # a line too long to hold: skip it
                    self.bad_lines += 1
                    start = len(data)
                break
            raw = data[start:end]
            start = end + 1
            try:
                line = loads_line(raw)
            except NotJson:
                self.bad_lines += 1
                continue
            if not isinstance(line, dict) or (
                    self.session_id and line.get("session_id") != self.session_id):
                continue
            kind = line.get("event_type")
            event = None if kind in HELD else line_event(line)
            if event is None and kind not in HELD:  # the stream carries it: nothing is kept
                continue
            key = _str(line.get("event_id")) or raw.decode("utf-8", "replace")
            if key in self.seen:
                continue
            self.seen.add(key)
            if event is None:
                self.held.append(line)
                if len(self.held) > HELD_LIMIT:  # the oldest no frame will claim now
                    self._past -= self._past > 0
                    del self.held[0]
                continue
            if keep:
                self.kept.append((event, _int(line.get("timestamp")) or None))
                continue
            self.stream.emit(event, at=_int(line.get("timestamp")) or None)
            emitted += 1
        self.offset += start
        return emitted

    def release(self, emit: bool) -> None:
        """The events `fill(keep=True)` held: emitted (a Murmur door does not tell them) or
        dropped (murmur-tui's door does)."""
        kept, self.kept = self.kept, []
        for event, at in kept if emit else ():
            self.stream.emit(event, at=at)

    def _read(self) -> bytes:
        """At most MAX_READ_BYTES from where the last read stopped."""
        fd = open_regular(self.trace)
        try:
            pieces: list[bytes] = []
            got = 0
            while got < MAX_READ_BYTES:
                piece = os.pread(fd, min(1 << 20, MAX_READ_BYTES - got), self.offset + got)
                if not piece:
                    break
                pieces.append(piece)
                got += len(piece)
            return b"".join(pieces)
        except OSError as exc:
            raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None
        finally:
            os.close(fd)
