"""Hook dispatch: the nine lifecycle handlers, in manifest order, with Murmur's honored arms.

Each hook's own `murmur.yaml` sets its contract: `binding` (one handler, absent = all),
`execution_mode` (`blocking` runs inline; `async` runs on a bounded queue in the background and
never blocks a turn) and `commit_policy`. Returning `none` is silent; returning the arm the
handler honors (and the policy allows) is committed by the caller; any other arm, an `Err` or a
trap is a loud, non-fatal fault: a line in `logs/hook-<name>.log`, a `HookFault` event and —
for blocking hooks, except on-stage — a `hook_dispatch_error` trace line. The session goes on.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wasmtime.component import Variant

from tui.core.artifacts.resolve import ResolvedArtifact
from tui.core.errors import GuestFailure, LaunchError
from tui.core.fs.private_files import append_private
from tui.core.manifest.problems import describe
from tui.core.text.secrets import redact
from tui.core.wasm import versions
from tui.core.wasm.calls import CallContext, HostServices
from tui.core.wasm.guest import Guest, Sandbox
from tui.core.wasm.runtime import WasmRuntime

HANDLERS = ("on-stage", "on-session-start", "on-task-start", "on-inference", "on-tool-call",
            "on-shell", "on-compaction", "on-task-end", "on-session-end")
OPTIONAL = frozenset({"on-task-start", "on-task-end"})
HONORED = {"on-stage": "write-manifests", "on-inference": "artifact",
           "on-compaction": "replace-context", "on-task-end": "reopen-task"}
POLICY_FOR = {"on-stage": "write-manifests", "on-compaction": "replace-context",
              "on-task-end": "reopen-task", "on-task-start": "seed-context",
              "on-shell": "deny", "on-tool-call": "deny"}
QUEUE_SIZE = 64


@dataclass(frozen=True)
class Fault:
    hook: str
    handler: str
    arm: str | None  # the discarded arm, or None for an error / trap
    error: str | None  # for an arm: why it was discarded; else what failed
    blocking: bool

    def line(self) -> str:
        if self.arm is not None:
            return f"hook {self.hook}: {self.handler} returned {self.arm}: {self.error}"
        return f"hook {self.hook}: {self.handler} failed: {self.error}"


@dataclass
class Hook:
    name: str
    resolved: ResolvedArtifact
    binding: str | None
    execution_mode: str
    commit_policy: str
    sandbox: Sandbox
    conversation_read: bool
    task_io_read: bool = False
    export: str = ""
    loaded: Any = None
    guest: Guest | None = None
    jobs: queue.Queue[tuple[str, Any] | None] | None = None
    worker: threading.Thread | None = None
    exported: dict[str, bool] = field(default_factory=dict)

    def binds(self, handler: str) -> bool:
        return self.binding is None or self.binding == handler


def contract(resolved: ResolvedArtifact) -> tuple[str | None, str, str]:
    """(binding, execution_mode, commit_policy) from the hook's own manifest, checked; a
    refusal names the hook, the file, the line and the key."""
    manifest = resolved.manifest
    binding = manifest.get("binding")
    mode = manifest.get("execution_mode", "blocking")
    policy = manifest.get("commit_policy", "none")

    def refuse(key: str, message: str) -> LaunchError:
        return LaunchError(f"hook {resolved.name!r}: {resolved.locate(key)}: {message}")

    if binding is not None and binding not in HANDLERS:
        raise refuse("binding", f"{describe(binding)} is not one of {', '.join(HANDLERS)}")
    if mode not in ("blocking", "async"):
        raise refuse("execution_mode", f"must be blocking or async, not {describe(mode)}")
    policies = ("none", "write-manifests", "replace-context", "reopen-task", "seed-context",
                "deny")
    if policy not in policies:
        raise refuse("commit_policy", f"{describe(policy)} is not one of {', '.join(policies)}")
    if mode == "async" and policy != "none":
        raise refuse("commit_policy", "an async hook must have commit_policy: none")
    if policy == "deny" and binding is None:
        raise refuse("commit_policy", "commit_policy: deny needs an explicit binding")
    if policy != "none":
        allowed = [h for h, p in POLICY_FOR.items() if p == policy]
        if binding is not None and binding not in allowed:
            raise refuse("commit_policy", f"{policy} pairs with {' or '.join(allowed)}, "
                         f"not {binding}")
    return binding, mode, policy


class HookRunner:
    def __init__(self, runtime: WasmRuntime, hooks: list[Hook], services: HostServices | None,
                 logs: Path, on_fault: Callable[[Fault], None]) -> None:
        self.runtime = runtime
        self.hooks = hooks
        self.services = services
        self.logs = logs
        self.on_fault = on_fault
        for hook in hooks:
            hook.loaded = runtime.load(hook.resolved.wasm)
            hook.export = versions.check(hook.resolved.wasm, "hook", hook.loaded.imports,
                                         hook.loaded.exports)

    def bound(self, handler: str) -> bool:
        return any(hook.binds(handler) for hook in self.hooks)

    def dispatch(self, handler: str, event: Any, failures: list[Fault] | None = None
                 ) -> list[tuple[Hook, Any]]:
        """Call every hook bound to `handler`; return the honored outputs to commit, in
        manifest order (async hooks are queued and never return any). A blocking hook's
        `Err` or trap is a fault, and is also added to `failures` when given (on-compaction
        fails the task on one)."""
        committed: list[tuple[Hook, Any]] = []
        for hook in self.hooks:
            if not hook.binds(handler):
                continue
            if hook.execution_mode == "async":
                self._enqueue(hook, handler, event)
                continue
            output = self._call(hook, handler, event, blocking=True, failures=failures)
            if output is not None:
                committed.append((hook, output))
        return committed

    def _call(self, hook: Hook, handler: str, event: Any, blocking: bool,
              failures: list[Fault] | None = None) -> Any:
        failed: Fault | None = None
        try:
            guest = self._guest(hook)
            if handler in OPTIONAL and not guest.has(handler):
                return None  # an optional export the hook does not have: never dispatched
            context = CallContext(hook.name, "hook", self.services,
                                  conversation_read=hook.conversation_read,
                                  task_io_read=hook.task_io_read)
            result = guest.call(handler, event, context=context)
        except GuestFailure as failure:
            self._discard(hook)
            failed = Fault(hook.name, handler, None, failure.reason, blocking)
        except Exception as exc:  # a host import's own failure stopped the hook
            self._discard(hook)
            failed = Fault(hook.name, handler, None, str(exc), blocking)
        else:
            if isinstance(result, str):
                failed = Fault(hook.name, handler, None, result, blocking)
        if failed is not None:
            self._fault(failed)
            if failures is not None:
                failures.append(failed)
            return None
        arm = result.tag if isinstance(result, Variant) else "none"
        if arm == "none":
            return None
        # the honored arm commits only from a blocking hook whose policy allows it
        # (on-inference's `artifact` needs no policy)
        honored = HONORED.get(handler)
        if arm != honored:
            why = (f"{handler} honors {honored} only" if honored else
                   f"{handler} commits no arm (only none is silent)")
        elif not blocking:
            why = "an async hook's output is never committed"
        elif handler != "on-inference" and hook.commit_policy != POLICY_FOR.get(handler):
            why = (f"committing it needs commit_policy: {POLICY_FOR.get(handler)} (this hook "
                   f"has {hook.commit_policy})")
        else:
            return result
        self._fault(Fault(hook.name, handler, arm, f"discarded; {why}", blocking))
        return None

    def _guest(self, hook: Hook) -> Guest:
        if hook.guest is None:
            hook.guest = Guest(self.runtime, hook.loaded, hook.export, hook.sandbox, hook.name)
        return hook.guest

    def _discard(self, hook: Hook) -> None:
        if hook.guest is not None:
            hook.guest.close()
            hook.guest = None

    def _fault(self, fault: Fault) -> None:
        try:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
            append_private(self.logs / f"hook-{fault.hook}.log",
                           redact(f"{stamp} {fault.line()}\n"))
        except OSError:
            pass
        self.on_fault(fault)

    # -- async hooks ------------------------------------------------------------------------
    def _enqueue(self, hook: Hook, handler: str, event: Any) -> None:
        if hook.jobs is None:
            jobs: queue.Queue[tuple[str, Any] | None] = queue.Queue(QUEUE_SIZE)
            hook.jobs = jobs
            hook.worker = threading.Thread(target=self._work, args=(hook, jobs),
                                           name=f"hook-{hook.name}", daemon=True)
            hook.worker.start()
        if hook.resolved.entry.on_overflow == "block":
            hook.jobs.put((handler, event))
            return
        try:
            hook.jobs.put_nowait((handler, event))
        except queue.Full:
            self._fault(Fault(hook.name, handler, None, "queue-overflow: the job was dropped "
                              f"(on_overflow: drop, {QUEUE_SIZE} jobs waiting)", False))

    def _work(self, hook: Hook, jobs: queue.Queue[tuple[str, Any] | None]) -> None:
        while (job := jobs.get()) is not None:
            self._call(hook, job[0], job[1], blocking=False)

    def close(self, drain_seconds: float = 5.0) -> None:
        """Let async hooks finish their queued jobs (bounded), then drop every guest."""
        deadline = time.monotonic() + drain_seconds
        for hook in self.hooks:
            if hook.jobs is not None and hook.worker is not None:
                try:
                    hook.jobs.put(None, timeout=max(0.01, deadline - time.monotonic()))
                except queue.Full:
                    continue
                hook.worker.join(max(0.0, deadline - time.monotonic()))
        for hook in self.hooks:
            if hook.worker is None or not hook.worker.is_alive():
                self._discard(hook)
