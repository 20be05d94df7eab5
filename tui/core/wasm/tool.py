"""A WebAssembly tool: one fresh instance per call, its result turned into a tool message.

A trap is never a crash: it becomes an error result naming the reason (out of time, out of
memory, the trap message) and the instance is discarded. `request-input` running past
`lifecycle.input_timeout_secs` raises InputTimeout out of `call`: the task fails.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui.core import attachments
from tui.core.artifacts import ResolvedArtifact
from tui.core.asking import InputTimeout, NoAnswer
from tui.core.cancel import CancelToken
from tui.core.inference.driver import StreamSink
from tui.core.manifest import Capsule
from tui.core.tools import ToolCall, ToolOutcome, ToolSpec, refusal
from tui.core.wasm import versions
from tui.core.wasm.calls import CallContext, HostServices, HostTrap
from tui.core.wasm.guest import Guest, GuestFailure, Sandbox
from tui.core.wasm.runtime import WasmRuntime
from tui.core.wasm.sandbox import sandbox
from tui.core.wasm.values import field, record


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

    def call(self, call: ToolCall, cancel: CancelToken) -> ToolOutcome:
        started = time.perf_counter()
        context = CallContext(self.resolved.name, "tool", self.services, self.stream)
        guest: Guest | None = None
        unsubscribe = cancel.subscribe(
            lambda: self.runtime.interrupt_all(self.sandbox.deadline_seconds))
        try:
            guest = Guest(self.runtime, self.loaded, self.export, self.sandbox,
                          self.resolved.name)
            result = guest.call("run", record(data=call.data, log_path=None), context=context)
        except InputTimeout:
            raise
        except GuestFailure as failure:
            reason = "canceled" if cancel.is_set() else failure.reason
            return refusal(f"error: {reason}", "wasm", _ms(started))
        except (HostTrap, NoAnswer) as exc:
            return refusal(f"error: {self.resolved.name} stopped: {exc}", "wasm", _ms(started))
        finally:
            unsubscribe()
            if guest is not None:
                guest.close()
        return self._outcome(result, _ms(started))

    def _outcome(self, result: Any, duration_ms: int) -> ToolOutcome:
        status = str(field(result, "status", "error"))
        text = field(result, "data")
        if text is None and field(result, "data-path"):
            text = self._read_data_path(str(field(result, "data-path")))
        if text is None:
            text = field(result, "summary")
        if text is None:
            text = "tool returned no data"
        metadata = tuple((str(k), str(v)) for k, v in field(result, "metadata", []) or [])
        accepted: list[dict[str, Any]] = []
        images: list[dict[str, Any]] = []
        notes: list[str] = []
        for item in field(result, "attachments", []) or []:
            media_type, path = str(field(item, "media-type")), str(field(item, "path"))
            checked = attachments.check(self.workdir, media_type, path, self.max_image_bytes)
            if isinstance(checked, attachments.Refused):
                notes.append(checked.note())
                continue
            digest = self.store.put(checked)
            kept = attachments.Accepted(media_type, path, digest, len(checked))
            accepted.append({"media_type": media_type, "path": path, "sha256": digest,
                             "bytes": len(checked)})
            images.append(kept.record_block())
        if notes:
            text = text + "\n\n" + "\n".join(notes)
        return ToolOutcome(status=status, text=str(text), fenced=True, kind="wasm",
                           duration_ms=duration_ms, metadata=metadata,
                           attachments=tuple(accepted), images=tuple(images))

    def _read_data_path(self, name: str) -> str:
        root = self.workdir.resolve()
        target = Path(os.path.normpath(root / name))
        if Path(name).is_absolute() or not (target == root or root in target.parents):
            return f"[data-path {name} is outside the work folder]"
        try:
            return target.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"[data-path {name} cannot be read: {exc.strerror}]"


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
