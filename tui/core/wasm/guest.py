"""A guest: one store and one instance of a component, with its sandbox and its limits.

Every store gets WASI set (without it the process aborts on the first WASI call, gotcha 1), a
memory limit, and a fresh epoch deadline before instantiation and before every call (gotcha 2).
A trap poisons the instance (gotcha 4): the caller discards the guest. `close()` drops the store
at once (gotcha 5). The component's stdout and stderr are appended to its log file (0600),
redacted (`secrets.ByteStreamRedactor`).

Limits (`Sandbox`): wasmtime's store limits are per memory and per table, so the memory budget
is split evenly across the linear memories the component's modules define, and the table
budget across its tables (`runtime.Census`); the store may create no more memories or tables
than that (a module instantiated twice cannot double its share) and at most `instances` core
instances. A limit hit at start is a `limit` failure naming the manifest key; a memory growth
refused later is reported by the component itself (its trap), recognised as out of memory.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import wasmtime
from wasmtime.component import Func, Instance

from tui.core.a2a.net_policy import Rule
from tui.core.errors import GuestFailure
from tui.core.fs.private_files import open_append
from tui.core.manifest.model import Limits
from tui.core.text.secrets import ByteStreamRedactor
from tui.core.wasm import calls, conversion, http_gate
from tui.core.wasm.cache import LoadedComponent
from tui.core.wasm.runtime import WasmRuntime

_MEMORY_MARKERS = ("MemoryError", "memory allocation of", "out of memory", "Out of memory")


@dataclass(frozen=True)
class Sandbox:
    """What a component may touch and how long and how large it may run."""

    log_path: Path
    memory_bytes: int
    deadline_seconds: float
    limits_key: str  # where the limits come from, for messages: "capabilities.limits"
    table_elements: int = Limits.table_elements
    instances: int = Limits.instances
    preopen: Path | None = None  # mounted as "."
    read_only: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    # the rules each outgoing wasi:http request is checked against (none: every one refused)
    network: tuple[Rule, ...] = ()


class _Log:
    """Appends a component's output to its log file (created 0600), through a redactor per
    stream, so no registered key reaches the file even split across writes; keeps the tail of
    stderr. `close` writes what the redactors still hold."""

    def __init__(self, path: Path, artifact: str) -> None:
        self.path = path
        self.artifact = artifact
        self.stderr_tail = ""
        self._lock = threading.Lock()
        self._redactors = {"stdout": ByteStreamRedactor(), "stderr": ByteStreamRedactor()}
        self._fd: int | None = None

    def _append(self, data: bytes) -> None:
        if not data:
            return
        try:
            if self._fd is None:  # 0600 in a 0700 folder; never through a link or a FIFO
                self._fd = open_append(self.path)
                os.fchmod(self._fd, 0o600)
            os.write(self._fd, data)
        except OSError:
            pass  # a log that cannot be written must not fail the component

    def _write(self, stream: str, data: bytes) -> None:
        with self._lock:
            clean = self._redactors[stream].feed(data)
            if stream == "stderr":
                text = clean.decode("utf-8", errors="replace")
                self.stderr_tail = (self.stderr_tail + text)[-4000:]
            self._append(clean)

    def stdout(self, data: bytes) -> None:
        self._write("stdout", data)

    def stderr(self, data: bytes) -> None:
        self._write("stderr", data)

    def close(self) -> None:
        with self._lock:
            for stream, redactor in self._redactors.items():
                rest = redactor.flush()
                if stream == "stderr" and rest:
                    self.stderr_tail = (self.stderr_tail
                                        + rest.decode("utf-8", errors="replace"))[-4000:]
                self._append(rest)
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None


class Guest:
    def __init__(self, runtime: WasmRuntime, loaded: LoadedComponent, export: str,
                 sandbox: Sandbox, artifact: str) -> None:
        self.runtime = runtime
        self.export = export
        self.sandbox = sandbox
        self.artifact = artifact
        self._log = _Log(sandbox.log_path, artifact)
        self._lock = threading.Lock()
        self._funcs: dict[str, Func | None] = {}
        self.poisoned = False
        counted = runtime.census(loaded)
        self.memories = max(1, counted.memories)
        self.tables = max(1, counted.tables)
        store = wasmtime.Store(runtime.engine)
        wasi = wasmtime.WasiConfig()
        peers = runtime.peers  # a formation member's callees, at their virtual addresses
        wasi.env = list({**sandbox.env, **(peers.env if peers else {})}.items())
        wasi.stdout_custom = self._log.stdout
        wasi.stderr_custom = self._log.stderr
        if sandbox.preopen is not None:
            wasi.preopen_dir(str(sandbox.preopen), ".", not sandbox.read_only)
        store.set_wasi(wasi)
        # wasi:http only for a component that imports it; its gate adds its own instances
        # and one small memory to the store (not counted against the component's share)
        self.http = any(name.startswith("wasi:http/") for name in loaded.imports)
        extra_instances = extra_memories = 0
        if self.http:
            store.set_wasi_http()
            extra_instances, extra_memories = http_gate.GATE_INSTANCES, http_gate.GATE_MEMORIES
        store.set_limits(memory_size=sandbox.memory_bytes // self.memories,
                         table_elements=sandbox.table_elements // self.tables,
                         instances=sandbox.instances + extra_instances, tables=self.tables,
                         memories=self.memories + extra_memories)
        store.set_epoch_deadline(runtime.ticks(sandbox.deadline_seconds))
        self.store: wasmtime.Store | None = store
        try:
            if self.http:
                runtime.http_gate().attach(store, http_gate.Policy(sandbox.network,
                                                                   self._refused, peers))
            self.instance: Instance | None = runtime.linker(self.http).instantiate(
                store, loaded.component)
        except wasmtime.WasmtimeError as exc:
            message = str(exc)
            exc.__traceback__ = None
            self.close()
            del store  # the failure's traceback must not keep the Store alive
        else:
            self._export_index = self.instance.get_export_index(store, export)
            return
        raise self._failure(message, starting=True)

    def _refused(self, message: str) -> None:
        """A refused request is told in the component's log (the guest gets its error)."""
        self._log.stderr(f"murmur-tui: {message}\n".encode())

    def has(self, name: str) -> bool:
        return self._func(name) is not None

    def _func(self, name: str) -> Func | None:
        if name not in self._funcs:
            found: Func | None = None
            if self.instance is not None and self.store is not None:
                index = self.instance.get_export_index(self.store, name, self._export_index)
                if index is not None:
                    found = self.instance.get_func(self.store, index)
            self._funcs[name] = found
        return self._funcs[name]

    def call(self, name: str, *args: Any, context: calls.CallContext,
             deadline_seconds: float | None = None,
             caps: conversion.LiftCaps | None = None,
             cancel: threading.Event | None = None) -> Any:
        """Call an export of the interface. Raises the host import's own exception if one
        stopped the guest, else GuestFailure; either way the guest is then poisoned. With
        `caps`, the result is lifted only up to them (`conversion.CutStr`, `CutList`)."""
        function = self._func(name)
        if function is None or self.store is None:
            raise GuestFailure("start", f"{self.artifact} does not export {self.export}#{name}")
        with self._lock:
            if self.poisoned:
                raise GuestFailure("trap", f"{self.artifact} trapped earlier and was discarded")
            seconds = deadline_seconds or self.sandbox.deadline_seconds
            self.store.set_epoch_deadline(self.runtime.ticks(seconds))
            # a cancel from now on trips this deadline; one that came before, this check sees
            if cancel is not None and cancel.is_set():
                raise GuestFailure("canceled", f"{self.artifact} was canceled before it ran")
            calls.clear_parked()
            calls.push(context)
            try:
                try:
                    with conversion.limited(caps):
                        return function(self.store, *args)
                except wasmtime.WasmtimeError as exc:
                    self.poisoned = True
                    parked = calls.take_parked()
                    message = str(exc)
                    # the traceback's frames hold the Store: a Store alive at interpreter exit
                    # makes wasmtime's I/O threads abort the process (gotcha 5)
                    exc.__traceback__ = None
                # raised outside the except clause, so no exception chain keeps it alive either
                if parked is not None:
                    parked.__context__ = None
                    raise parked
                raise self._failure(message)
            finally:
                calls.pop()

    def _failure(self, message: str, starting: bool = False) -> GuestFailure:
        lines = [line.strip() for line in message.splitlines() if line.strip()]
        trap = next((line for line in reversed(lines) if line.startswith("wasm trap:")),
                    lines[-1] if lines else "trap")
        if "interrupt" in trap:
            return GuestFailure("deadline", f"out of time: {self.artifact} ran past its "
                                f"{self.sandbox.deadline_seconds:g} s deadline "
                                f"({self.sandbox.limits_key}.deadline_seconds)")
        tail = self._log.stderr_tail
        if any(marker in message or marker in tail for marker in _MEMORY_MARKERS) or \
                "exceeds memory limits" in message:
            share = "" if self.memories == 1 else (
                f", {_size(self.sandbox.memory_bytes // self.memories)} for each of its "
                f"{self.memories} memories")
            return GuestFailure("memory", f"out of memory: {self.artifact} hit its "
                                f"{_size(self.sandbox.memory_bytes)} limit "
                                f"({self.sandbox.limits_key}.memory_bytes{share})")
        limit = self._limit(message)
        if limit is not None:
            return GuestFailure("limit", f"{self.artifact} could not start: {limit}")
        if starting:
            first = lines[0] if lines else message
            return GuestFailure("start", f"{self.artifact} could not start: {first}")
        detail = trap.removeprefix("wasm trap: ")
        last = next((line for line in reversed(tail.splitlines()) if line.strip()), "")
        suffix = f" — stderr: {last.strip()}" if last else ""
        return GuestFailure("trap", f"{self.artifact} trapped: {detail}{suffix}")

    def _limit(self, message: str) -> str | None:
        """What a store limit refused, in the manifest's words, or None."""
        key = self.sandbox.limits_key
        table = re.search(r"table minimum size of (\d+) elements exceeds table limits", message)
        if table:
            share = "" if self.tables == 1 else (
                f", {self.sandbox.table_elements // self.tables} for each of its "
                f"{self.tables} tables")
            return (f"a table of {table.group(1)} elements is over {key}.table_elements "
                    f"({self.sandbox.table_elements}{share})")
        count = re.search(r"(instance|memory|table) count too high at (\d+)", message)
        if count is None:
            return None
        what = count.group(1)
        if what == "instance":
            return (f"it needs at least {count.group(2)} instances, over {key}.instances "
                    f"({self.sandbox.instances})")
        defined = self.memories if what == "memory" else self.tables
        plural = "memories" if what == "memory" else "tables"
        budget = "memory_bytes" if what == "memory" else "table_elements"
        return (f"it creates more {plural} than its modules define ({defined}); "
                f"{key}.{budget} is split across the {plural} a component defines")

    def close(self) -> None:
        self._funcs.clear()
        self.instance = None
        if self.store is not None and getattr(self, "http", False):
            http_gate.Gate.detach(self.store)
        self.store = None
        self._log.close()


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale} {unit}"
    return f"{count} bytes"
