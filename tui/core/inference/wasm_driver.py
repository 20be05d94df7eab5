"""A WebAssembly driver (`runtime: driver`): the request JSON goes in `tool-input.data`, the
response JSON comes back in `data`; text and thinking stream through `murmur:text/chunks`.

Drivers are instantiated afresh for every call (as in Murmur), so no state survives between
turns inside a driver; continuation state lives on the host. A trap fails the task
(`runtime_error`); cancelling trips the running call's deadline.
"""

from __future__ import annotations

import json
from typing import Any

from tui.core.artifacts import ResolvedArtifact
from tui.core.cancel import CancelToken
from tui.core.inference.driver import DriverError, DriverReply, InferenceCanceled, StreamSink
from tui.core.manifest import Capsule
from tui.core.wasm import versions
from tui.core.wasm.calls import CallContext, HostTrap
from tui.core.wasm.guest import Guest, GuestFailure
from tui.core.wasm.runtime import WasmRuntime
from tui.core.wasm.sandbox import sandbox
from tui.core.wasm.values import field, record


class WasmDriver:
    def __init__(self, runtime: WasmRuntime, resolved: ResolvedArtifact, capsule: Capsule,
                 workdir: Any, logs: Any, extra_env: dict[str, str]) -> None:
        self.name = resolved.name
        self.runtime = runtime
        self.resolved = resolved
        self.loaded = runtime.load(resolved.wasm)
        self.export = versions.check(resolved.wasm, "driver", self.loaded.imports,
                                     self.loaded.exports)
        self.sandbox = sandbox(capsule, resolved.entry, workdir=workdir, logs=logs,
                               extra_env=extra_env)

    def complete(self, request: dict[str, Any], stream: StreamSink,
                 cancel: CancelToken) -> DriverReply:
        data = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
        context = CallContext(self.name, "driver", None, stream)
        guest: Guest | None = None
        unsubscribe = cancel.subscribe(
            lambda: self.runtime.interrupt_all(self.sandbox.deadline_seconds))
        try:
            guest = Guest(self.runtime, self.loaded, self.export, self.sandbox, self.name)
            result = guest.call("run", record(data=data, log_path=None), context=context)
        except GuestFailure as failure:
            if cancel.is_set():
                raise InferenceCanceled() from None
            raise DriverError(f"driver {self.name}: {failure.reason}", "runtime_error") from None
        except HostTrap as exc:
            raise DriverError(f"driver {self.name}: {exc}", "runtime_error") from None
        finally:
            unsubscribe()
            if guest is not None:
                guest.close()
        metadata = tuple((str(k), str(v)) for k, v in field(result, "metadata", []) or [])
        return DriverReply(status=str(field(result, "status", "error")),
                           data=field(result, "data"), summary=field(result, "summary"),
                           metadata=metadata)

    def close(self) -> None:
        return None
