"""Script capsules: a `capsule.wasm` beside `murmur.yaml` whose `murmur:capsule/run` export is
the whole session. It runs with the session workdir preopened as `.` (it reads `task.md` there
and writes `out/result.txt` itself) and calls declared tools through `tool-registry.invoke`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tui.core.cancel import CancelToken
from tui.core.manifest.model import Artifact, Capsule
from tui.core.wasm import versions
from tui.core.wasm.calls import CallContext, HostServices
from tui.core.wasm.guest import Guest
from tui.core.wasm.runtime import WasmRuntime
from tui.core.wasm.sandbox import sandbox

NAME = "capsule"


class ScriptCapsule:
    def __init__(self, runtime: WasmRuntime, path: Path, capsule: Capsule, workdir: Path,
                 logs: Path, extra_env: Mapping[str, str]) -> None:
        self.runtime = runtime
        self.path = path
        self.loaded = runtime.load(path)
        self.export = versions.check(path, "capsule", self.loaded.imports, self.loaded.exports)
        # the capsule itself, as if it were a tool entry inheriting the capsule-wide grants
        entry = Artifact(name=NAME, version=capsule.version, runtime="tool", line=None)
        self.sandbox = sandbox(capsule, entry, workdir=workdir, logs=logs,
                               extra_env=extra_env)

    def run(self, services: HostServices, cancel: CancelToken) -> None:
        """Run the session; raises GuestFailure (or StopOnInputTimeout from a tool) on failure."""
        guest = Guest(self.runtime, self.loaded, self.export, self.sandbox, self.path.name)
        unsubscribe = cancel.subscribe(
            lambda: self.runtime.interrupt_all(self.sandbox.deadline_seconds))
        try:
            context = CallContext(NAME, "capsule", services, network=self.sandbox.network)
            guest.call("run", context=context, cancel=cancel)
        finally:
            unsubscribe()
            guest.close()
