"""Who is calling: the per-thread context host imports answer to, and trap-safe host functions.

A component call runs on the calling thread, and so do the host imports it makes. The guest
wrapper pushes a `CallContext` for the duration of each call; a host import reads the innermost
one (calls nest: a hook's `run-inference` calls the driver).

wasmtime-py parks a Python exception raised in a host function in a module global, which races
between threads (wasm-hosting §7, gotcha 3). `host_function` instead parks it per thread and
raises `WasmtimeError`; the guest wrapper re-raises the original when the export call fails.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import wasmtime

from tui.core.a2a.net_policy import Rule
from tui.core.errors import TrapGuest
from tui.core.inference.driver import StreamSink


class ArtifactServices(Protocol):
    """A script capsule's artifact manager (`murmur:artifact-manager`; wasm/artifact_store)."""

    def list(self) -> list[Any]: ...

    def describe(self, name: str) -> Any: ...

    def diagnostics(self) -> Any: ...

    def pull(self, name: str, version: str) -> Any: ...


class HostServices(Protocol):
    """What a running session offers components (implemented by the session)."""

    def ask(self, tool_name: str, prompt: str) -> str: ...

    def run_inference(self, hook_name: str, messages: list[dict[str, Any]],
                      system_prompt: str | None, model: str | None
                      ) -> tuple[str, str, int, int]: ...

    def read_messages(self, cursor: str | None, limit: int) -> Any: ...

    def invoke_tool(self, name: str, data: str | None) -> Any: ...

    def delegated(self, peer_url: str, message_id: str, peer_task_id: str,
                  peer_context_id: str, state: str) -> None:
        """A script capsule sent a task to a peer (`murmur:message/send`) and the peer took
        it as `peer_task_id`."""
        ...

    @property
    def artifacts(self) -> ArtifactServices | None:
        """A script capsule's artifact manager (`murmur:artifact-manager`), else None."""
        ...


@dataclass
class CallContext:
    artifact: str
    kind: str  # tool | driver | hook | capsule
    services: HostServices | None = None
    stream: StreamSink | None = None
    conversation_read: bool = False
    task_io_read: bool = False  # capabilities.task_io.read on a hook's entry
    # what the host may reach on the component's behalf (murmur:message/send): its
    # capabilities.network.allow, as its wasi:http requests are checked against
    network: tuple[Rule, ...] = ()
    notes: list[str] = field(default_factory=list)
    # tool calls a driver call announced (murmur:stream/events): id -> (name, bytes so far)
    composing: dict[str, tuple[str, int]] = field(default_factory=dict)


_local = threading.local()


def _stack() -> list[CallContext]:
    stack: list[CallContext] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current() -> CallContext:
    stack = _stack()
    if not stack:
        raise TrapGuest("a murmur host import was called outside a component call")
    return stack[-1]


def push(context: CallContext) -> None:
    _stack().append(context)


def pop() -> None:
    _stack().pop()


def take_parked() -> BaseException | None:
    parked: BaseException | None = getattr(_local, "parked", None)
    _local.parked = None
    return parked


def clear_parked() -> None:
    _local.parked = None


def host_function(implementation: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap `implementation(*args)` as a host function `(store, *args)` that never lets a
    Python exception reach wasmtime's shared global."""

    def call(store: Any, *args: Any) -> Any:
        try:
            return implementation(*args)
        except wasmtime.WasmtimeError:
            raise
        except BaseException as exc:
            _local.parked = exc
            raise wasmtime.WasmtimeError(f"host import failed: {exc}") from None

    return call
