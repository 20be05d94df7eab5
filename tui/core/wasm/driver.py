"""A WebAssembly driver (`runtime: driver`): the request JSON goes in `tool-input.data`, the
response JSON comes back in `data`; text and thinking stream through `murmur:text/chunks`.

Drivers are instantiated afresh for every call (as in Murmur), so no state survives between
turns inside a driver; continuation state lives on the host. A trap fails the task
(`runtime_error`); cancelling trips the running call's deadline.

A driver with a `gateway:` reaches its provider through the credential gateway
(`gateway.py`). A failed call is made again after a backoff (`inference.retry`) when the
driver's `transient` metadata says so, or — without that key — when the gateway saw a 408,
429 or retryable 5xx, or could not reach the provider; `transient: "false"` vetoes a retry. A
key the provider rejected (and that did not change) fails the task `credential_rejected`.

A driver's result is lifted within `conversion.RESULT_CAPS`: response JSON over
`RESULT_BYTES` (1 MiB) would be cut, so it fails the turn (`malformed_response`) saying how big
it was, without ever being copied whole into Python.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tui.core.a2a import net_policy
from tui.core.artifacts.resolve import ResolvedArtifact
from tui.core.cancel import CancelToken
from tui.core.errors import DriverError, GuestFailure, StopOnCancel, TrapGuest
from tui.core.inference.driver import DriverReply, StreamSink
from tui.core.inference.gateway import CredentialGateway, Seen
from tui.core.inference.retry import RETRYABLE, RetryNotice, RetryPolicy
from tui.core.manifest.model import Capsule, Retry
from tui.core.wasm import versions
from tui.core.wasm.calls import CallContext
from tui.core.wasm.conversion import RESULT_BYTES, RESULT_CAPS, CutStr
from tui.core.wasm.guest import Guest
from tui.core.wasm.runtime import WasmRuntime
from tui.core.wasm.sandbox import sandbox
from tui.core.wasm.values import field, record


class WasmDriver:
    def __init__(self, runtime: WasmRuntime, resolved: ResolvedArtifact, capsule: Capsule,
                 workdir: Any, logs: Any, extra_env: dict[str, str],
                 gateway: CredentialGateway | None = None,
                 on_retry: Callable[[RetryNotice], None] | None = None) -> None:
        self.name = resolved.name
        self.runtime = runtime
        self.resolved = resolved
        self.gateway = gateway
        self.retry = RetryPolicy(capsule.inference.retry if capsule.inference else Retry())
        self.on_retry = on_retry
        self.loaded = runtime.load(resolved.wasm)
        self.export = versions.check(resolved.wasm, "driver", self.loaded.imports,
                                     self.loaded.exports)
        env = dict(extra_env)
        if gateway is not None:
            env.update(gateway.environment())
        self.sandbox = sandbox(capsule, resolved.entry, workdir=workdir, logs=logs,
                               extra_env=env)
        if gateway is not None:
            # its own gateway is always reachable; any other host only as network.allow says
            own = net_policy.parse_rule(gateway.origin)
            self.sandbox = replace(self.sandbox, network=(*self.sandbox.network, own))

    def complete(self, request: dict[str, Any], stream: StreamSink,
                 cancel: CancelToken) -> DriverReply:
        attempt = 1
        while True:
            if self.gateway is not None:
                self.gateway.last = Seen()
            reply = self._call(request, stream, cancel)
            if reply.status == "passed":
                return reply
            seen = self.gateway.last if self.gateway is not None else Seen()
            if seen.rejected is not None:
                raise DriverError(f"driver {self.name}: {seen.rejected} "
                                  f"({_first_line(reply.error_text)})",
                                  cause="credential_rejected", provider_status=401)
            if not self._retryable(reply, seen) or self.retry.pause(
                    attempt, seen.status, _first_line(reply.error_text), cancel,
                    self.on_retry) is not None:
                return reply
            attempt += 1

    @staticmethod
    def _retryable(reply: DriverReply, seen: Seen) -> bool:
        transient = reply.meta("transient")
        if transient in ("true", "false"):
            return transient == "true"
        return seen.forwarded and (seen.status is None or seen.status in RETRYABLE)

    def _call(self, request: dict[str, Any], stream: StreamSink,
              cancel: CancelToken) -> DriverReply:
        data = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
        context = CallContext(self.name, "driver", None, stream)
        guest: Guest | None = None
        unsubscribe = cancel.subscribe(
            lambda: self.runtime.interrupt_all(self.sandbox.deadline_seconds))
        try:
            guest = Guest(self.runtime, self.loaded, self.export, self.sandbox, self.name)
            result = guest.call("run", record(data=data, log_path=None), context=context,
                                caps=RESULT_CAPS, cancel=cancel)
        except GuestFailure as failure:
            if cancel.is_set():
                raise StopOnCancel() from None
            raise DriverError(f"driver {self.name}: {failure.reason}", "runtime_error") from None
        except TrapGuest as exc:
            raise DriverError(f"driver {self.name}: {exc}", "runtime_error") from None
        finally:
            unsubscribe()
            if guest is not None:
                guest.close()
        for name in ("data", "summary"):
            value = field(result, name)
            if isinstance(value, CutStr):
                raise DriverError(
                    f"driver {self.name}: its result's {name} is {value.full_bytes} bytes, "
                    f"over the {RESULT_BYTES >> 20} MiB result cap; the response JSON would "
                    "be cut, so the turn fails", "malformed_response")
        metadata = tuple((str(k), str(v)) for k, v in field(result, "metadata", []) or [])
        data, summary = field(result, "data"), field(result, "summary")
        return DriverReply(status=str(field(result, "status", "error")),
                           data=None if data is None else str(data),
                           summary=None if summary is None else str(summary),
                           metadata=metadata)

    def close(self) -> None:
        if self.gateway is not None:
            self.gateway.close()


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:500]
