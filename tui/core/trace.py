"""`trace.jsonl`: Murmur's session trace, written from the event stream (spec §2).

Every line starts with the envelope `event_type`, `event_id`, `parent_id`, `session_id`,
`timestamp`. The tree: session_start -> task_start -> inference (the turn node) -> that turn's
tool_call / shell lines; task_failed / task_end parent to the task, session_end to the session.
A line is written and flushed as its event happens (file mode 0600; every line through the one
redaction, `secrets.py`); a failed write raises `TraceWriteError`, which ends the session.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core import events as ev
from tui.core import ids
from tui.core.secrets import redact
from tui.core.strict_json import NotJson, loads_line

TRACE_FILE = "trace.jsonl"


class TraceWriteError(Exception):
    """The trace could not be written (Murmur's E-RUN-007): the session ends."""


class TraceWriter:
    """An event sink that appends Murmur trace lines to `path`."""

    def __init__(self, path: Path, capture: str = "meta") -> None:
        self.path = path
        self.capture = capture
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise TraceWriteError(f"cannot open trace {path}: {exc}") from exc
        self._guard = threading.Lock()
        self._ids_written: list[str] = []  # the message_ids of the last inference line
        self._ids_json = ""  # ... as JSON array items, reused while the context only grows
        self._session_node: str | None = None
        self._task_node: str | None = None
        self._turn_node: str | None = None

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
            raise TraceWriteError(f"cannot write trace {self.path}: {exc}") from exc
        return event_id

    # -- event -> line ----------------------------------------------------------------------
    def _session_start(self, event: ev.SessionStarted) -> None:
        fields: dict[str, Any] = {
            "capsule_name": event.capsule_name,
            "capsule_version": event.capsule_version,
            "model": event.model,
            "max_turns": event.max_turns,
            "max_session_tokens": event.max_session_tokens,
            "machine_tokens_per_day": None,
            "capabilities": list(event.capabilities),
            "tools_declared": list(event.tools),
            "tool_refresh": "compaction",
            "runtime_artifacts": [],
            "containment_declared": "advisory",
            "containment_achieved": "advisory",
            "userns_grant": False,
            "workdir_exec": False,
            "resumed_from": None,
            "context_id": event.context_id,
            "system_prompt_source": event.system_prompt_source,
            "system_prompt_sha256": event.system_prompt_sha256,
            "credential_source": event.credential_source,
            "gateways": [],
            "effective_grants": {},
        }
        self._session_node = self.write("session_start", None, event.ts_ms, fields,
                                        event.session_id)

    def _task_start(self, event: ev.TaskStarted) -> None:
        fields = {
            "task_id": event.task_id,
            "context_id": event.context_id,
            "source": event.source,
            "origin": "user",
            "trust": "trusted",
            "lane": "user",
            "message_parts_bytes": event.message_parts_bytes,
        }
        self._task_node = self.write("task_start", self._session_node, event.ts_ms, fields,
                                     event.session_id)
        self._turn_node = None

    def _inference(self, event: ev.TurnCompleted) -> None:
        fields: dict[str, Any] = {
            "turn": event.turn,
            "task_id": event.task_id,
            "input_tokens": event.input_tokens,
        }
        if event.output_tokens is not None:
            fields["output_tokens"] = event.output_tokens
        fields["decision"] = event.decision
        fields["stop_reason"] = event.stop_reason
        fields["tool_name"] = event.tool_name
        for key in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens",
                    "thinking_tokens"):
            if key in event.usage:
                name = f"{key}_actual" if key in ("input_tokens", "output_tokens") else key
                fields[name] = event.usage[key]
        if event.origin is not None:
            fields["origin"] = event.origin
            fields["model"] = event.model
        if self.capture != "none":
            for key in ("system_sha", "tools_sha", "response_sha"):
                value = getattr(event, key)
                if value is not None:
                    fields[key] = value
            if event.message_shas:
                fields["message_shas"] = list(event.message_shas)
        if event.error_code is not None:
            fields["error_code"] = event.error_code
        if event.error is not None:
            fields["error"] = _bounded(event.error)
        tail = f',"message_ids":[{self._message_ids_json(event.message_ids)}]'
        node = self.write("inference", self._task_node, event.ts_ms, fields, event.session_id,
                          tail)
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
        if event.kind == "skill":
            fields: dict[str, Any] = {
                "turn": event.turn, "task_id": event.task_id, "skill_name": event.tool_name,
                "output_bytes": event.output_bytes, "duration_ms": event.duration_ms,
                "status": event.status, "origin": "operator", "trust": "trusted",
            }
            self.write("skill_call", self._turn_node or self._task_node, event.ts_ms, fields,
                       event.session_id)
            return
        fields = {
            "turn": event.turn,
            "task_id": event.task_id,
            "tool_name": event.tool_name,
            "tool_call_id": event.call_id,
            "input": event.input,
            "input_bytes": event.input_bytes,
        }
        if self.capture == "content":
            fields["output"] = event.output
        fields.update({
            "output_bytes": event.output_bytes,
            "duration_ms": event.duration_ms,
            "status": event.status,
        })
        if event.state_effect in ("read", "mutate"):
            fields["state_effect"] = event.state_effect
        if event.resource_id:
            fields["resource_id"] = event.resource_id
        self.write("tool_call", self._turn_node or self._task_node, event.ts_ms, fields,
                   event.session_id)

    def _shell(self, event: ev.ShellExecuted) -> None:
        fields = {
            "turn": event.turn,
            "task_id": event.task_id,
            "binary": event.binary,
            "command": event.command,
            "exit_code": event.exit_code,
            "stdout_bytes": event.stdout_bytes,
            "stderr_bytes": event.stderr_bytes,
            "duration_ms": event.duration_ms,
        }
        self.write("shell", self._turn_node or self._task_node, event.ts_ms, fields,
                   event.session_id)

    def _task_failed(self, event: ev.TaskFailed) -> None:
        fields: dict[str, Any] = {"task_id": event.task_id}
        if event.turn is not None:
            fields["turn"] = event.turn
        fields["cause"] = event.cause
        fields["reason"] = _bounded(event.reason)
        self.write("task_failed", self._task_node, event.ts_ms, fields, event.session_id)

    def _task_end(self, event: ev.TaskEnded) -> None:
        fields = {
            "task_id": event.task_id,
            "exit_status": event.exit_status,
            "duration_ms": event.duration_ms,
            "turns": event.turns,
            "input_tokens": event.input_tokens,
            "output_tokens": event.output_tokens,
            "tool_calls": event.tool_calls,
            "shell_calls": event.shell_calls,
            "reopen_count": event.reopen_count,
        }
        self.write("task_end", self._task_node, event.ts_ms, fields, event.session_id)
        self._task_node = None
        self._turn_node = None

    def _session_end(self, event: ev.SessionEnded) -> None:
        fields = {
            "total_turns": event.total_turns,
            "total_input_tokens": event.total_input_tokens,
            "total_output_tokens": event.total_output_tokens,
            "total_tool_calls": event.total_tool_calls,
            "total_shell_calls": event.total_shell_calls,
            "duration_ms": event.duration_ms,
            "exit_status": event.exit_status,
        }
        self.write("session_end", self._session_node, event.ts_ms, fields, event.session_id)


def _hook_fault(writer: TraceWriter, event: ev.HookFault) -> None:
    if not event.traced:
        return
    fields: dict[str, Any] = {"hook_name": event.hook, "event": event.handler,
                              "arm": event.arm or "error"}
    if event.error:
        fields["error"] = _bounded(event.error)
    writer.write("hook_dispatch_error", writer.session_node, event.ts_ms, fields,
                 event.session_id)


def _task_reopened(writer: TraceWriter, event: ev.TaskReopened) -> None:
    fields = {"task_id": event.task_id, "hook_name": event.hook_name, "reason": event.reason,
              "reopen_number": event.reopen_number, "attempt_context": "continued",
              "turns_remaining": event.turns_remaining}
    writer.write("task_reopened", writer.task_node, event.ts_ms, fields, event.session_id)


def _compacted(writer: TraceWriter, event: ev.Compacted) -> None:
    fields = {"turn": event.turn, "task_id": event.task_id,
              "tokens_before": event.tokens_before, "tokens_after": event.tokens_after}
    writer.write("compaction", writer.task_node, event.ts_ms, fields, event.session_id)


def _compaction_declined(writer: TraceWriter, event: ev.CompactionDeclined) -> None:
    fields = {"turn": event.turn, "task_id": event.task_id, "tokens": event.tokens,
              "reason": event.reason}
    writer.write("compaction_declined", writer.task_node, event.ts_ms, fields,
                 event.session_id)


_HANDLERS: dict[type[ev.Event], Any] = {
    ev.Compacted: _compacted,
    ev.CompactionDeclined: _compaction_declined,
    ev.HookFault: _hook_fault,
    ev.TaskReopened: _task_reopened,
    ev.SessionStarted: TraceWriter._session_start,
    ev.TaskStarted: TraceWriter._task_start,
    ev.TurnCompleted: TraceWriter._inference,
    ev.ToolCallFinished: TraceWriter._tool_call,
    ev.ShellExecuted: TraceWriter._shell,
    ev.TaskFailed: TraceWriter._task_failed,
    ev.TaskEnded: TraceWriter._task_end,
    ev.SessionEnded: TraceWriter._session_end,
}


def _bounded(text: str, limit: int = 2000) -> str:
    """At most `limit` bytes of UTF-8, cut on a character boundary."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


class TraceFormatError(Exception):
    """A trace line is not a JSON object (Murmur's E-TRC-001), naming file and line."""

    code = "E-TRC-001"


@dataclass
class TraceLines:
    """A trace's lines as dicts (iterating gives them), and the number of its last line when
    that was cut short (a writer that died mid-line) and so skipped."""

    events: list[dict[str, Any]]
    cut_line: int | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    @property
    def skipped(self) -> int:
        return 0 if self.cut_line is None else 1


def read_trace(path: Path) -> TraceLines:
    """Every line of a trace as a dict. A line that is not a JSON object (as Murmur reads
    JSON: `strict_json`) raises TraceFormatError naming file and line — except a last line
    that no newline ends and that begins an object it does not finish: a line cut short by a
    writer that died, skipped and counted (`cut_line`). (Murmur's `mur trace` refuses that
    line too; the trace of a killed session is still worth reading.)"""
    events: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            terminated = raw.endswith(b"\n")
            line = raw[:-1] if terminated else raw
            if not line.strip():
                continue
            try:
                value = loads_line(line)
            except NotJson as exc:
                if not terminated and line.lstrip().startswith(b"{"):
                    return TraceLines(events, cut_line=number)  # an object begun, never ended
                raise TraceFormatError(f"{path}:{number}: not JSON ({exc})") from None
            if not isinstance(value, dict):
                raise TraceFormatError(f"{path}:{number}: not a JSON object")
            events.append(value)
    return TraceLines(events)
