"""A WebAssembly tool: one fresh instance per call, its result turned into a tool message.

A trap is never a crash: it becomes an error result naming the reason (out of time, out of
memory, the trap message) and the instance is discarded. `request-input` running past
`lifecycle.input_timeout_secs` raises StopOnInputTimeout out of `call`: the task fails.

The result is lifted within `conversion.RESULT_CAPS`: its text (`data`, else the `data-path`
file, else `summary`) is at most `RESULT_BYTES` (1 MiB); a longer one is cut there and says
`truncated: true` and how big it was in a note (a file is kept where it is, and the note
names it). `metadata` keeps its first 64 entries; attachments are checked by `attachments.py`
(at most 16 a call). A `data-path` that is not a regular file beneath the work folder, reached
without following a link, is refused with a note naming it and why.
"""

from __future__ import annotations

import codecs
import dataclasses
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui.core.artifacts.resolve import ResolvedArtifact
from tui.core.cancel import CancelToken
from tui.core.errors import FileRefused, GuestFailure, NoAnswer, StopOnInputTimeout, TrapGuest
from tui.core.events.kinds import ToolStatus
from tui.core.fs import beneath
from tui.core.inference.driver import StreamSink
from tui.core.manifest.model import Capsule
from tui.core.record import attachments
from tui.core.tools.contracts import MAX_ERROR_BYTES, MAX_PROGRESS_BYTES, cut
from tui.core.tools.table import SILENT, CallProgress, ToolCall, ToolOutcome, ToolSpec, refusal
from tui.core.wasm import versions
from tui.core.wasm.calls import CallContext, HostServices
from tui.core.wasm.conversion import RESULT_BYTES, RESULT_CAPS, CutList, CutStr
from tui.core.wasm.guest import Guest, Sandbox
from tui.core.wasm.runtime import WasmRuntime
from tui.core.wasm.sandbox import sandbox
from tui.core.wasm.values import field, record

# a tool-result status the host knows; any other a guest returns is an error
_STATUSES: dict[str, ToolStatus] = {"passed": "passed", "failed": "failed", "error": "error"}


class WasmToolHandler:
    def __init__(self, runtime: WasmRuntime, resolved: ResolvedArtifact, capsule: Capsule,
                 workdir: Path, logs: Path, services: HostServices | None,
                 attachment_store: attachments.AttachmentStore,
                 extra_env: Mapping[str, str], stream: StreamSink | None = None) -> None:
        self.runtime = runtime
        self.resolved = resolved
        self.loaded = runtime.load(resolved.wasm)
        self.export = versions.check(resolved.wasm, "tool", self.loaded.imports,
                                     self.loaded.exports)
        self.spec = ToolSpec(resolved.name, resolved.description or
                             f"The {resolved.name} tool.", resolved.input_schema, "wasm")
        self.sandbox: Sandbox = sandbox(capsule, resolved.entry, workdir=workdir, logs=logs,
                                        extra_env=extra_env)
        self.workdir = workdir
        self.max_image_bytes = capsule.context.images_max_bytes
        self.services = services
        self.store = attachment_store
        self.stream = stream

    def call(self, call: ToolCall, cancel: CancelToken,
             progress: CallProgress = SILENT) -> ToolOutcome:
        started = time.perf_counter()
        deadline = time.monotonic() + self.sandbox.deadline_seconds
        stream = self.stream if progress is SILENT else _ProgressStream(progress, self.stream)
        context = CallContext(self.resolved.name, "tool", self.services, stream)
        guest: Guest | None = None
        unsubscribe = cancel.subscribe(
            lambda: self.runtime.interrupt_all(self.sandbox.deadline_seconds))
        try:
            guest = Guest(self.runtime, self.loaded, self.export, self.sandbox,
                          self.resolved.name)
            result = guest.call("run", record(data=call.data, log_path=None), context=context,
                                caps=RESULT_CAPS, cancel=cancel)
        except StopOnInputTimeout:
            raise
        except GuestFailure as failure:
            if cancel.is_set():
                return refusal("error: canceled", "wasm", _ms(started))
            text = cut(f"error: {failure.reason}", MAX_ERROR_BYTES, "the error text")
            return dataclasses.replace(refusal(text, "wasm", _ms(started)), trapped=True)
        except (TrapGuest, NoAnswer) as exc:
            return refusal(f"error: {self.resolved.name} stopped: {exc}", "wasm", _ms(started))
        finally:
            unsubscribe()
            if guest is not None:
                guest.close()
        return self._outcome(result, _ms(started), deadline)

    def _outcome(self, result: Any, duration_ms: int, deadline: float) -> ToolOutcome:
        status = _STATUSES.get(str(field(result, "status", "error")), "error")
        notes: list[str] = []
        text = _text(field(result, "data"), "the result's data", notes)
        if text is None and field(result, "data-path"):
            text = self._read_data_path(field(result, "data-path"), deadline, notes)
        if text is None:
            text = _text(field(result, "summary"), "the result's summary", notes)
        if text is None:
            text = "tool returned no data"
        listed = field(result, "metadata", []) or []
        metadata = tuple((str(k), str(v)) for k, v in listed)
        if isinstance(listed, CutList):
            notes.append(f"[metadata: {listed.full_length} entries; only the first "
                         f"{len(listed)} were kept]")
        named = field(result, "attachments", []) or []
        checked = attachments.check_all(
            self.workdir, [(str(field(item, "media-type")), str(field(item, "path")))
                           for item in named],
            named.full_length if isinstance(named, CutList) else len(named),
            self.max_image_bytes, self.store)
        accepted = [{"media_type": kept.media_type, "path": kept.path, "sha256": kept.sha256,
                     "bytes": kept.size} for kept in checked.images]
        images = [kept.record_block() for kept in checked.images]
        notes.extend(checked.notes)
        truncated = field(result, "truncated", False) is True or \
            any(note.startswith("[truncated: true") for note in notes)
        if notes:
            text = text + "\n\n" + "\n".join(notes)
        return ToolOutcome(status=status, text=text, fenced=True, kind="wasm",
                           duration_ms=duration_ms, metadata=metadata,
                           attachments=tuple(accepted), images=tuple(images),
                           truncated=truncated, summary=_own(field(result, "summary")),
                           data=_own(field(result, "data")),
                           data_path=_own(field(result, "data-path")))

    def _read_data_path(self, name: Any, deadline: float, notes: list[str]) -> str:
        if isinstance(name, CutStr):
            return f"[data-path refused: its name is {name.full_bytes} bytes long]"
        try:
            read = beneath.read_beneath(self.workdir, str(name), RESULT_BYTES, deadline)
        except FileRefused as refused:
            return f"[data-path {name} refused: {refused}]"
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text: str = decoder.decode(read.data, final=not read.truncated)
        if read.truncated:
            notes.append(f"[truncated: true — data-path {name} is {read.size} bytes; the "
                         f"first {_size(RESULT_BYTES)} is above (the result cap); the whole "
                         f"file is kept at {read.path}]")
        return text


class _ProgressStream:
    """A tool's `emit-chunk` text while its call runs is the call's progress (each chunk one
    message); its thinking stays the turn's, as before."""

    def __init__(self, progress: CallProgress, turn: StreamSink | None) -> None:
        self._progress = progress
        self._turn = turn

    def text(self, chunk: str) -> None:
        self._progress.progress(cut(chunk, MAX_PROGRESS_BYTES, "this progress message"))

    def thinking(self, chunk: str) -> None:
        if self._turn is not None:
            self._turn.thinking(chunk)


def _text(value: Any, what: str, notes: list[str]) -> str | None:
    """A lifted string as plain text; a cut one adds its `truncated: true` note."""
    if value is None:
        return None
    if isinstance(value, CutStr):
        notes.append(f"[truncated: true — {what} was {value.full_bytes} bytes; the first "
                     f"{_size(RESULT_BYTES)} is above (the result cap)]")
    return str(value)


def _own(value: Any) -> str | None:
    return None if value is None else str(value)


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count % (1 << 20) == 0 else f"{count} bytes"


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
