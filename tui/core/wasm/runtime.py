"""One wasmtime engine per process, its epoch clock, its compile cache and its linkers.

The engine has epoch interruption on (the cheap wall-clock guard): a thread advances the epoch
every `TICK_SECONDS`, and every store gets a deadline in ticks before each call. Compiled code is
cached in `$MURMUR_HOME/cache/compiled/` (see `cache.py`).

Loading a component also counts the linear memories and tables its core modules define
(`Census`, read from the binary): wasmtime's store limits are per memory and per table, so a
guest splits `capabilities.limits.memory_bytes` and `table_elements` across them and may create
no more than it defines (guest.py).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import wasmtime
from wasmtime.component import Linker

from tui.core.errors import ComponentLoadError, MalformedComponent
from tui.core.wasm import conversion, http_gate
from tui.core.wasm.cache import CompileCache, LoadedComponent
from tui.core.wasm.formation_peers import PeerRelay
from tui.core.wasm.imports import define_murmur_imports

TICK_SECONDS = 0.01
ENGINE_FLAGS = "epoch_interruption=1"


@dataclass(frozen=True)
class Census:
    """What a component's core modules define: each is instantiated at least once."""

    memories: int
    tables: int
    modules: int


def _leb(data: bytes, at: int) -> tuple[int, int]:
    """An unsigned LEB128 at `at`: (value, offset after it)."""
    value = shift = 0
    while True:
        if at >= len(data) or shift > 35:
            raise MalformedComponent()
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _sections(data: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    """(id, start, end) of each section of the binary at data[start:end] (after its header)."""
    if data[start:start + 4] != b"\0asm" or end - start < 8:
        raise MalformedComponent()
    found = []
    at = start + 8
    while at < end:
        kind = data[at]
        size, body = _leb(data, at + 1)
        if body + size > end:
            raise MalformedComponent()
        found.append((kind, body, body + size))
        at = body + size
    return found


def census(data: bytes) -> Census:
    """Count the memories, tables and core modules a component binary defines (nested
    components included; imported memories and tables are someone else's)."""
    memories = tables = modules = 0
    pending = [(0, len(data))]
    while pending:
        start, end = pending.pop()
        for kind, body, stop in _sections(data, start, end):
            if kind == 1:  # a core module
                modules += 1
                for section, inner, _ in _sections(data, body, stop):
                    if section == 4:
                        tables += _leb(data, inner)[0]
                    elif section == 5:
                        memories += _leb(data, inner)[0]
            elif kind == 4:  # a nested component
                pending.append((body, stop))
    return Census(memories, tables, modules)


class WasmRuntime:
    """The shared engine. Thread-safe: stores made from it may run on any thread."""

    def __init__(self, cache_dir: Path, progress: Callable[[str], None] | None = None) -> None:
        conversion.install()
        config = wasmtime.Config()
        config.epoch_interruption = True
        self.engine = wasmtime.Engine(config)
        self.cache = CompileCache(self.engine, cache_dir, ENGINE_FLAGS, progress)
        self._linkers: dict[bool, Linker] = {}
        self._linker_lock = threading.Lock()
        self._census: dict[str, Census] = {}
        self._gate: http_gate.Gate | None = None
        self.peers: PeerRelay | None = None  # a formation member's callees (formation_peers)
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="wasm-epoch", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            self.engine.increment_epoch()

    @staticmethod
    def ticks(seconds: float) -> int:
        """A deadline in epoch ticks (at least one)."""
        return max(1, math.ceil(seconds / TICK_SECONDS))

    def interrupt_all(self, max_seconds: float) -> None:
        """Trip the deadline of every running component (cancel): advance the epoch past any
        deadline up to `max_seconds` away."""
        for _ in range(self.ticks(max_seconds) + 1):
            self.engine.increment_epoch()

    def load(self, wasm_path: Path) -> LoadedComponent:
        loaded = self.cache.load(wasm_path)
        self.census(loaded)
        return loaded

    def census(self, loaded: LoadedComponent) -> Census:
        """The memories and tables `loaded` defines, read once per component. (Whatever the
        count, a store's memories together stay within the budget: it is split by the count
        and no more memories than that may be created.)"""
        known = self._census.get(loaded.sha256)
        if known is not None:
            return known
        try:
            data = loaded.path.read_bytes()
        except OSError as exc:
            raise ComponentLoadError(f"{loaded.path}: cannot be read "
                                     f"({exc.strerror or exc})") from None
        try:
            counted = census(data)
        except (MalformedComponent, IndexError):
            raise ComponentLoadError(f"{loaded.path}: its sections cannot be read") from None
        self._census[loaded.sha256] = counted
        return counted

    def linker(self, http: bool = False) -> Linker:
        """WASI preview 2 and the murmur host imports; with `http`, wasi:http whose outgoing
        requests are each checked against the store's allow-list (`http_gate`)."""
        with self._linker_lock:
            linker = self._linkers.get(http)
            if linker is None:
                linker = Linker(self.engine)
                linker.add_wasip2()
                if http:
                    linker.add_wasi_http()
                    http_gate.define(linker)
                define_murmur_imports(linker)
                self._linkers[http] = linker
            return linker

    def http_gate(self) -> http_gate.Gate:
        """The component that checks outgoing wasi:http requests, compiled once."""
        with self._linker_lock:
            if self._gate is None:
                self._gate = http_gate.Gate(self.engine)
            return self._gate

    def close(self) -> None:
        self._stop.set()
        if self.peers is not None:
            self.peers.close()
