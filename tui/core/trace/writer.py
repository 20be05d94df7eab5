"""`trace.jsonl`: Murmur's session trace, written from the event stream (spec §2).

Every line starts with the envelope `event_type`, `event_id`, `parent_id`, `session_id`,
`timestamp`; what follows is `lines.py`. The tree: session_start -> task_start -> inference (the
turn node) -> that turn's tool_call / shell lines; task_failed / task_end parent to the task,
session_end to the session. A line is written and flushed as its event happens (file mode 0600,
folders 0700, opened as `private.open_append` opens a file: never through a link, a line never
glued to a cut one; every line through the one redaction, `secrets.py`); a failed write raises
`TraceWriteError`, which ends the session.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui.core import ids
from tui.core.errors import TraceWriteError, Where
from tui.core.events import vocabulary as ev
from tui.core.fs.private_files import open_append
from tui.core.text.secrets import redact
from tui.core.trace import lines

TRACE_FILE = "trace.jsonl"


class TraceWriter:
    """An event sink that appends Murmur trace lines to `path`."""

    def __init__(self, path: Path, capture: str = "meta") -> None:
        self.path = path
        self.capture = capture
        try:  # never through a link or into a FIFO; a cut last line is closed off first
            self._fd = open_append(path)
        except OSError as exc:
            raise TraceWriteError(f"cannot open trace {path}: {exc.strerror or exc}",
                                  where=Where(path)) from exc
        self._guard = threading.Lock()
        self._ids_written: list[str] = []  # the message_ids of the last inference line
        self._ids_json = ""  # ... as JSON array items, reused while the context only grows
        self._session_node: str | None = None
        self._task_node: str | None = None
        self._turn_node: str | None = None
        self._denied: set[str] = set()  # calls refused before they ran: no tool_call line

    @property
    def session_node(self) -> str | None:
        return self._session_node

    @property
    def task_node(self) -> str | None:
        return self._task_node

    def close(self) -> None:
        """Close the file; later events are not written (after a failed write, too). Safe
        from any thread: the descriptor is closed once."""
        with self._guard:
            fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    # -- the sink ---------------------------------------------------------------------------
    def emit(self, event: ev.Event) -> None:
        if self._fd < 0:
            return
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def write(self, event_type: str, parent: str | None, timestamp: int,
              fields: dict[str, Any], session_id: str, tail: str = "") -> str:
        """Append one line: the envelope, `fields`, then `tail` (pre-encoded `,"key":value`
        members)."""
        event_id = ids.event_id()
        line: dict[str, Any] = {
            "event_type": event_type,
            "event_id": event_id,
            "parent_id": parent,
            "session_id": session_id,
            "timestamp": timestamp,
        }
        line.update(fields)
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
        if tail:
            text = text[:-1] + tail + "}"
        data = (redact(text) + "\n").encode()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            raise TraceWriteError(f"cannot write trace {self.path}: {exc}",
                                  where=Where(self.path)) from exc
        return event_id

    # -- event -> line in the tree ----------------------------------------------------------
    def _session_start(self, event: ev.SessionStarted) -> None:
        self._session_node = self.write("session_start", None, event.ts_ms,
                                        lines.session_start(event), event.session_id)

    def _task_start(self, event: ev.TaskStarted) -> None:
        if event.caller_member is not None:  # a formation member's call: who sent it
            self.write("a2a_task_received", self._session_node, event.ts_ms,
                       lines.a2a_task_received(event), event.session_id)
        self._task_node = self.write("task_start", self._session_node, event.ts_ms,
                                     lines.task_start(event), event.session_id)
        self._turn_node = None

    def _inference(self, event: ev.TurnCompleted) -> None:
        tail = f',"message_ids":[{self._message_ids_json(event.message_ids)}]'
        node = self.write("inference", self._task_node, event.ts_ms,
                          lines.inference(event, self.capture), event.session_id, tail)
        if event.origin is None:
            self._turn_node = node

    def _message_ids_json(self, message_ids: tuple[str, ...]) -> str:
        """The items of the `message_ids` array. Each turn's list usually extends the last
        one, so only the new ids are encoded (the array is written on every turn)."""
        known = len(self._ids_written)
        if known > len(message_ids) or list(message_ids[:known]) != self._ids_written:
            self._ids_written, self._ids_json, known = [], "", 0
        fresh = message_ids[known:]
        if fresh:
            encoded = ",".join(json.dumps(item, ensure_ascii=False) for item in fresh)
            self._ids_json = f"{self._ids_json},{encoded}" if self._ids_json else encoded
            self._ids_written.extend(fresh)
        return self._ids_json

    def _tool_call(self, event: ev.ToolCallFinished) -> None:
        if event.call_id is not None and event.call_id in self._denied:
            self._denied.discard(event.call_id)
            return
        event_type, fields = lines.tool_call(event, self.capture)
        self.write(event_type, self._turn_node or self._task_node, event.ts_ms, fields,
                   event.session_id)

    def _shell(self, event: ev.ShellExecuted) -> None:
        self.write("shell", self._turn_node or self._task_node, event.ts_ms,
                   lines.shell(event), event.session_id)

    def _shell_detached(self, event: ev.ShellDetached) -> None:
        self.write("shell_detached", self._turn_node or self._task_node, event.ts_ms,
                   lines.shell_detached(event), event.session_id)

    def _shell_completed(self, event: ev.ShellCompleted) -> None:  # the turn is over by now
        self.write("shell_completed", self._session_node, event.ts_ms,
                   lines.shell_completed(event), event.session_id)

    def _shell_abandoned(self, event: ev.ShellAbandoned) -> None:
        self.write("shell_abandoned", self._session_node, event.ts_ms,
                   lines.shell_abandoned(event), event.session_id)

    def _task_failed(self, event: ev.TaskFailed) -> None:
        self.write("task_failed", self._task_node, event.ts_ms, lines.task_failed(event),
                   event.session_id)

    def _task_end(self, event: ev.TaskEnded) -> None:
        self.write("task_end", self._task_node, event.ts_ms, lines.task_end(event),
                   event.session_id)
        self._task_node = None
        self._turn_node = None

    def _session_end(self, event: ev.SessionEnded) -> None:
        self.write("session_end", self._session_node, event.ts_ms, lines.session_end(event),
                   event.session_id)

    def _hook_fault(self, event: ev.HookFault) -> None:
        if event.traced:
            self.write("hook_dispatch_error", self._session_node, event.ts_ms,
                       lines.hook_dispatch_error(event), event.session_id)

    def _task_canceled(self, event: ev.TaskCanceled) -> None:
        self.write("task_canceled", self._task_node, event.ts_ms, lines.task_canceled(event),
                   event.session_id)

    def _task_reopened(self, event: ev.TaskReopened) -> None:
        self.write("task_reopened", self._task_node, event.ts_ms, lines.task_reopened(event),
                   event.session_id)

    def _compacted(self, event: ev.Compacted) -> None:
        self.write("compaction", self._task_node, event.ts_ms, lines.compaction(event),
                   event.session_id)

    def _compaction_declined(self, event: ev.CompactionDeclined) -> None:
        self.write("compaction_declined", self._task_node, event.ts_ms,
                   lines.compaction_declined(event), event.session_id)

    def _call_denied(self, event: ev.CallDenied) -> None:
        if event.call_id is not None:
            self._denied.add(event.call_id)
        self.write("call_denied", self._turn_node or self._task_node or self._session_node,
                   event.ts_ms, lines.call_denied(event), event.session_id)

    def _a2a_send(self, event: ev.Delegated) -> None:
        self.write("a2a_send", self._task_node or self._session_node, event.ts_ms,
                   lines.a2a_send(event), event.session_id)

    def _formation_ended(self, event: ev.FormationEnded) -> None:
        self.write("formation_ended", self._session_node, event.ts_ms,
                   lines.formation_ended(event), event.session_id)

    # -- delegate-task: the parent's two lines (under the task that delegated, else the
    # session), the child's spawner_ended (under its session)
    def _delegation_start(self, event: ev.DelegationStarted) -> None:
        self.write("delegation_start", self._task_node or self._session_node, event.ts_ms,
                   lines.delegation_start(event), event.session_id)

    def _delegation(self, event: ev.DelegationEnded) -> None:
        self.write("delegation", self._task_node or self._session_node, event.ts_ms,
                   lines.delegation(event), event.session_id)

    def _spawner_ended(self, event: ev.SpawnerEnded) -> None:
        self.write("spawner_ended", self._session_node, event.ts_ms,
                   lines.spawner_ended(event), event.session_id)

    # -- call-member and the task's continuation: under the turn that called, else the task --
    def _member_call_start(self, event: ev.MemberCallStarted) -> None:
        self.write("member_call_start", self._turn_node or self._task_node, event.ts_ms,
                   lines.member_call_start(event), event.session_id)

    def _member_call_busy(self, event: ev.MemberCallBusy) -> None:
        self.write("member_call_busy", self._task_node or self._session_node, event.ts_ms,
                   lines.member_call_busy(event), event.session_id)

    def _member_call(self, event: ev.MemberCallEnded) -> None:
        self.write("member_call", self._task_node or self._session_node, event.ts_ms,
                   lines.member_call(event), event.session_id)

    def _task_continued(self, event: ev.TaskContinued) -> None:
        self.write("task_continued", self._task_node, event.ts_ms,
                   lines.task_continued(event), event.session_id)


_HANDLERS: dict[type[ev.Event], Callable[[TraceWriter, Any], None]] = {
    ev.Compacted: TraceWriter._compacted,
    ev.CompactionDeclined: TraceWriter._compaction_declined,
    ev.HookFault: TraceWriter._hook_fault,
    ev.TaskReopened: TraceWriter._task_reopened,
    ev.TaskCanceled: TraceWriter._task_canceled,
    ev.SessionStarted: TraceWriter._session_start,
    ev.TaskStarted: TraceWriter._task_start,
    ev.TurnCompleted: TraceWriter._inference,
    ev.ToolCallFinished: TraceWriter._tool_call,
    ev.ShellExecuted: TraceWriter._shell,
    ev.ShellDetached: TraceWriter._shell_detached,
    ev.ShellCompleted: TraceWriter._shell_completed,
    ev.ShellAbandoned: TraceWriter._shell_abandoned,
    ev.TaskFailed: TraceWriter._task_failed,
    ev.TaskEnded: TraceWriter._task_end,
    ev.SessionEnded: TraceWriter._session_end,
    ev.CallDenied: TraceWriter._call_denied,
    ev.Delegated: TraceWriter._a2a_send,
    ev.FormationEnded: TraceWriter._formation_ended,
    ev.DelegationStarted: TraceWriter._delegation_start,
    ev.DelegationEnded: TraceWriter._delegation,
    ev.SpawnerEnded: TraceWriter._spawner_ended,
    ev.MemberCallStarted: TraceWriter._member_call_start,
    ev.MemberCallBusy: TraceWriter._member_call_busy,
    ev.MemberCallEnded: TraceWriter._member_call,
    ev.TaskContinued: TraceWriter._task_continued,
}
